"""What runs leave behind: the store (the one sqlite file), the report and the run record,
exports, a review's history, judge-trust figures, and the word diff a reviewer reads."""
