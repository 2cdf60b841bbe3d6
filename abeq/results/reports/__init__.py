"""What a reader gets from the store: the report and run record, exports, the word diff, a review's
history, judge agreement, observed and sampled cases."""
