"""A review's rounds for the History page (the logic lives in abeq.history)."""

from ..results.history import changed_verdicts, per_round, rounds  # noqa: F401
