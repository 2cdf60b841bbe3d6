"""Read-only queries the desk needs beyond `Store`'s own methods (store.py is not the desk's to edit)."""

from __future__ import annotations

import calendar
import time
from dataclasses import dataclass
from typing import Optional

from ..store import Store


def latest_run(store: Store, review_id: int) -> Optional[dict]:
    return store.one("select * from runs where review_id = ? order by id desc limit 1", [review_id])


def default_candidate(store: Store, review: dict) -> Optional[str]:
    """The candidate last loaded into this review (in any session), else its latest run's; never a
    document loaded into another review."""
    row = store.one("select candidate_hash from reviews where id = ?", [review["id"]])
    if row and row["candidate_hash"]:
        return row["candidate_hash"]
    run = latest_run(store, review["id"])
    return run["candidate_hash"] if run else None


def review_candidates(store: Store, review_id: int) -> list[dict]:
    """Documents used as candidates in this review's runs, newest first."""
    return store.all("""select d.hash, d.name, max(r.id) last_run from runs r join documents d on d.hash = r.candidate_hash
                        where r.review_id = ? group by d.hash order by last_run desc""", [review_id])


def override_history(store: Store, run_id: int, case_id: str) -> list[dict]:
    """Every override of one case, oldest first: the audit trail (the latest one is in effect)."""
    return store.all("select * from overrides where run_id = ? and case_id = ? order by id", [run_id, case_id])


def _epoch(ts: Optional[str]) -> Optional[float]:
    if not ts:
        return None
    return float(calendar.timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ")))


@dataclass
class Progress:
    run_id: int
    status: str
    total: int
    done: int
    judged: int
    errors: int
    cache_hits: int
    calls_made: int
    tokens: int
    cost: float
    unpriced: int
    elapsed: float

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


def progress(store: Store, run_id: int) -> Progress:
    """A run's progress as written to sqlite by whichever thread or process runs it."""
    run = store.run(run_id) or {}
    c = store.one("""select count(*) total, sum(status in ('judged', 'error')) done,
                            sum(status = 'judged') judged, sum(status = 'error') errors
                     from run_cases where run_id = ?""", [run_id]) or {}
    s = store.call_stats(run_id)
    start = _epoch(run.get("started_at"))
    end = _epoch(run.get("finished_at")) if run.get("status") != "running" else None
    elapsed = max(0.0, (end or time.time()) - start) if start else 0.0
    return Progress(run_id=run_id, status=run.get("status") or "unknown", total=c.get("total") or 0,
                    done=c.get("done") or 0, judged=c.get("judged") or 0, errors=c.get("errors") or 0,
                    cache_hits=s["cached"], calls_made=s["made"],
                    tokens=s["prompt_tokens"] + s["completion_tokens"], cost=float(s["cost"] or 0.0),
                    unpriced=s["unpriced"], elapsed=elapsed)
