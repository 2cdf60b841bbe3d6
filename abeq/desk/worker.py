"""Background runs: the engine in a thread that makes no Streamlit calls and writes to sqlite.

The registry is module-level, so it outlives any one browser session: a reload reattaches to a
running job by its run id, and Cancel reaches the thread from any session.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass

from ..api import DESK_LABELS, PreparedRun, prepare_run
from ..documents import Document
from ..results.store import Store
from ..run.engine import RunConfig
from ..schemas import TransferSet
from ..timestamps import now


@dataclass
class Job:
    run_id: int
    thread: threading.Thread
    cancel: threading.Event
    error: str | None = None


_jobs: dict[int, Job] = {}
_lock = threading.Lock()


def start(db: str, original: Document, candidate: Document, ts: TransferSet, cfg: RunConfig) -> int:
    """Check the gates and create (or resume) the run here, so a refusal reaches the caller; then
    run it in a background thread. Starting a run that is already running returns its id."""
    store = Store(db)
    try:
        settings = {k: v for k, v in asdict(cfg).items() if k not in ("runner", "judge", "variant")}
        prepared = prepare_run(
            original,
            candidate,
            ts,
            runner=cfg.runner,
            judge=cfg.judge,
            variant=cfg.variant,
            store=store,
            labels=DESK_LABELS,
            **settings,
        )
    finally:
        store.close()
    run_id = prepared.run_id
    with _lock:
        job = _jobs.get(run_id)
        if job and job.thread.is_alive():
            return run_id
        job = Job(
            run_id,
            threading.Thread(name=f"abeq-run-{run_id}", daemon=True, target=_work, args=(db, prepared)),
            threading.Event(),
        )
        _jobs[run_id] = job
        job.thread.start()
    return run_id


def _work(db: str, prepared: PreparedRun) -> None:
    run_id = prepared.run_id
    job = _jobs[run_id]
    store = Store(db)  # this thread's own connection
    try:
        prepared.run(cancel=job.cancel, store=store)
    except Exception as e:  # noqa: BLE001 — a crashed worker must leave a trace, not a 'running' row
        job.error = f"{type(e).__name__}: {e}"
        try:
            store.update_run(run_id, status="failed", finished_at=now())
        except Exception:
            pass
    finally:
        store.close()


def alive(run_id: int) -> bool:
    job = _jobs.get(run_id)
    return bool(job and job.thread.is_alive())


def cancel(run_id: int) -> bool:
    """Ask a running job to stop: calls in flight finish, no new call starts."""
    job = _jobs.get(run_id)
    if not job or not job.thread.is_alive():
        return False
    job.cancel.set()
    return True


def error(run_id: int) -> str | None:
    job = _jobs.get(run_id)
    return job.error if job else None


def wait(run_id: int, timeout: float | None = None) -> bool:
    """Block until the job ends (for tests and scripts); True when it has."""
    job = _jobs.get(run_id)
    if job:
        job.thread.join(timeout)
    return not alive(run_id)
