"""The blind comparator (SPEC §10): which of two outputs does a task better, judged in both orders
with origin stripped first."""
