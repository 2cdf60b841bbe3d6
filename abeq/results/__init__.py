"""What runs leave behind: the store (store/: its interfaces, the sqlite and PostgreSQL backends and
their parts, migrations, copy and merge) and what a reader gets from it (reports/: the report and
run record, exports, a review's history, judge-trust figures, and the word diff a reviewer reads)."""
