"""What reviewers do with a run's report: agree with the judge or override it (reviewing.py), and the
cases shared out among them (assigning.py). Above both the store, which keeps their actions, and the
report, which gives the verdict an agreement accepts."""
