"""Mutation testing of a transfer set and its judge (`abeq mutate`): would this set notice a loss?

Mutants of the original are made in code (mutants.py), each run like a candidate against the
original's cached teacher runs by the run engine (run.py), and read back as a report (report.py):
a mutant is killed when a case notices its deletion, and the score is killed / mutants.
"""
