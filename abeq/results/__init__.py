"""What runs leave behind, in three folders that depend one way (tests/test_layout.py holds it):
the store (store/: its interfaces, the `Sql*` parts over a sqlite or PostgreSQL connection,
migrations, copy and merge); what a reader gets from it (reports/: the report and run record,
exports, a review's history, judge-trust figures, the word diff), which reads the store; and what
reviewers do with a report (review/: agree or override, cases shared out), which reads both."""
