"""What the runs of a case observed besides transcript and self-report (workspace changes, tool
trace, self-report fields not reported), read back for the record, the CLI and the Review page."""

from __future__ import annotations

import json

from ..store.store import Store

ARMS = (("original", "teacher_key"), ("candidate", "candidate_key"))


def observed(store: Store, key: str | None) -> dict:
    """One runner result's extras ({} for a plain chat run, or when the result is missing)."""
    row = store.cache.runner_result(key) if key else None
    found = row["observed"] if row else None
    return json.loads(found) if found else {}


def case_observed(store: Store, row) -> dict:
    """{"original": {...}, "candidate": {...}} for a report row, leaving out arms with nothing extra."""
    out = {arm: observed(store, getattr(row, attr)) for arm, attr in ARMS}
    return {arm: v for arm, v in out.items() if v}


def unreported(store: Store, rows) -> list[str]:
    """Cases where a runner gave no (or only part of a) self-report: judged from transcript and files."""
    return [r.case_id for r in rows if any(v.get("not_reported") for v in case_observed(store, r).values())]
