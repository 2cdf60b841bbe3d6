"""What the desk reads about a run's progress, from sqlite (written by whichever thread or process
runs it)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..execution.estimate import estimate_calls, time_left
from ..results.store.liveness import ACTIVE
from ..results.store.store import Store
from ..timestamps import epoch
from ..vocab import CANCELLING, RUNNING


@dataclass
class Progress:
    run_id: int
    status: str  # as read: a run whose process died is 'interrupted'
    total: int  # cases
    done: int
    judged: int
    errors: int  # cases errored
    runner_done: int  # this attempt's runner calls resolved (made, cached or failed) / needed
    runner_needed: int
    judge_done: int
    judge_needed: int
    cache_hits: int  # this attempt's
    calls_made: int  # this attempt's
    failed_calls: int  # this attempt's calls that failed after their retries
    tokens: int  # the whole run's (every attempt's) calls
    cost: float
    unpriced: int
    elapsed: float  # this attempt's
    eta: float | None  # seconds left at this attempt's pace; None when it cannot be told
    cancel_requested: bool
    cache_read_tokens: int = 0  # prompt tokens the provider served from its cache
    cache_write_tokens: int = 0
    cache_saved: float = 0.0
    stopped_after: str | None = None  # fail fast: the regressed case after which no case started

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def cancelling(self) -> bool:
        return self.status == CANCELLING or (self.status == RUNNING and self.cancel_requested)


def progress(store: Store, run_id: int) -> Progress:
    """A run's progress as written to sqlite by whichever thread or process runs it."""
    run: Mapping[str, Any] = store.log.run(run_id) or {}
    c = store.log.case_counts(run_id)
    s = store.log.call_stats(run_id)
    a = store.log.call_progress(run_id, run.get("attempt_first_call") or 0)
    cfg = json.loads(run.get("config") or "{}")
    need = estimate_calls(
        c["total"],
        1,
        max(1, cfg.get("judge_samples") or 1),
        bool(cfg.get("aa")),
        cfg.get("graded_cases") or 0,
        (cfg.get("settings") or {}).get("runner_samples", 1),
    )
    status = run.get("status") or "unknown"
    start = epoch(run.get("attempt_started_at") or run.get("started_at"))
    end = None if status in ACTIVE else epoch(run.get("finished_at") or run.get("heartbeat_at"))
    elapsed = max(0.0, (end or time.time()) - start) if start else 0.0
    done_calls, needed = a["runner"] + a["judge"], need["total"]
    return Progress(
        run_id=run_id,
        status=status,
        total=c["total"],
        done=c["done"],
        judged=c["judged"],
        errors=c["errors"],
        runner_done=a["runner"],
        runner_needed=need["runner_calls"],
        judge_done=a["judge"],
        judge_needed=need["judge_calls"] + need["grading_calls"],  # grading calls are judge-model calls
        cache_hits=a["cached"],
        calls_made=a["made"],
        failed_calls=a["failed"],
        tokens=s["prompt_tokens"] + s["completion_tokens"],
        cost=float(s["cost"] or 0.0),
        unpriced=s["unpriced"],
        elapsed=elapsed,
        eta=time_left(done_calls, needed, a["made"], elapsed) if status in ACTIVE else None,
        cancel_requested=bool(run.get("cancel_requested_at")),
        cache_read_tokens=s["cache_read_tokens"],
        cache_write_tokens=s["cache_write_tokens"],
        cache_saved=float(s["cache_saved"] or 0.0),
        stopped_after=run.get("stopped_after"),
    )
