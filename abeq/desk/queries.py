"""What the desk reads about a run's progress, from sqlite (written by whichever thread or process
runs it)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..results.store import Store
from ..timestamps import epoch


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
    c = store.case_counts(run_id)
    s = store.call_stats(run_id)
    start = epoch(run.get("started_at"))
    end = epoch(run.get("finished_at")) if run.get("status") != "running" else None
    elapsed = max(0.0, (end or time.time()) - start) if start else 0.0
    return Progress(
        run_id=run_id,
        status=run.get("status") or "unknown",
        total=c["total"],
        done=c["done"],
        judged=c["judged"],
        errors=c["errors"],
        cache_hits=s["cached"],
        calls_made=s["made"],
        tokens=s["prompt_tokens"] + s["completion_tokens"],
        cost=float(s["cost"] or 0.0),
        unpriced=s["unpriced"],
        elapsed=elapsed,
    )
