"""The blind comparator: which of two outputs does a task better, judged in both orders
with origin stripped first."""
