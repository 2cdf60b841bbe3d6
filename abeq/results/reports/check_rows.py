"""A run's check results as the report reads them: one stored row as a CheckResult, and what the
checks of a whole run found."""

from __future__ import annotations

from typing import Any

from ...schemas import CheckResult
from ...vocab import CHECK_FAILED_BOTH, CHECK_SKIPPED
from ..store.rows import CheckResultRow

# the fields stored as they are (asking the class for its fields costs ~0.3 ms each time)
_AS_STORED = tuple(k for k in CheckResult.model_fields if k not in ("teacher", "candidate", "gates"))


def check_result(r: CheckResultRow) -> CheckResult:
    """A stored check_results row as the CheckResult the report carries."""

    def passed(v: int | None) -> bool | None:
        return None if v is None else bool(v)

    row: dict[str, Any] = dict(r)
    return CheckResult(
        **{k: row[k] for k in _AS_STORED},
        teacher=passed(r["teacher"]),
        candidate=passed(r["candidate"]),
        gates=bool(r["gates"]),
    )


def check_summary(rows: list) -> dict:
    """How many cases carried checks and what the checks found, over a run."""
    every = [c for r in rows for c in r.checks]
    return {
        "cases_with_checks": sum(1 for r in rows if r.checks),
        "checks": len(every),
        "lost": sum(1 for c in every if c.lost),
        "failed_both": sum(1 for c in every if c.outcome == CHECK_FAILED_BOTH),
        "skipped": sum(1 for c in every if c.outcome == CHECK_SKIPPED),
        "cases_judge_disagrees": sum(1 for r in rows if r.checks_disagree),
    }
