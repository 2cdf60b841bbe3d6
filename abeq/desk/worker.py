"""Background runs: the engine in a thread that makes no Streamlit calls and writes to sqlite.

The registry is module-level, so it outlives any one browser session: a reload reattaches to a
running job by its run id, and Cancel reaches the thread from any session.
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass, field

from ..api import DESK_LABELS, PreparedRun, prepare_run, resume_run
from ..documents import Document
from ..execution.engine import Stop
from ..execution.settings import RunSettings
from ..results.store.store import Store
from ..schemas import TransferSet
from ..timestamps import now
from ..vocab import CANCELLED, FAILED, INTERRUPTED, RUNNING
from . import policy


@dataclass
class Job:
    run_id: int
    thread: threading.Thread
    cancel: Stop = field(default_factory=Stop)
    error: str | None = None
    progress: dict | None = None  # the engine's last progress report (what a provider's limits are doing)


_jobs: dict[int, Job] = {}
_lock = threading.Lock()


def start(
    db: str,
    original: Document,
    candidate: Document,
    ts: TransferSet,
    settings: RunSettings,
    *,
    who: str | None = None,
) -> int:
    """Check the desk's policy and the gates and create (or resume) the run here, so a refusal
    reaches the caller; then run it in a background thread. Starting a run that is already running
    returns its id. `who`: the person signed in, recorded with the run."""
    policy.current(who).check(settings)  # what the desk's operator allowed, whatever the form says
    store = Store(db)
    try:
        prepared = prepare_run(
            original, candidate, ts, store=store, settings=settings, labels=DESK_LABELS, started_by=who
        )
    finally:
        store.close()
    return _launch(db, prepared)


def resume(db: str, run_id: int, *, trust_stored_command: bool = False, who: str | None = None) -> int:
    """Resume an unfinished run with its own stored settings (refused, with the reason, when it
    cannot be, or when they go beyond the desk's policy), in a background thread. A command run's
    stored command runs only with `trust_stored_command` (the user saw it and confirmed it)."""
    store = Store(db)
    try:
        if run := store.log.run(run_id):  # (no such run: resume_run says so)
            policy.current(who).check_stored(run)
        prepared = resume_run(run_id, store, trust_stored_command=trust_stored_command)
    finally:
        store.close()
    return _launch(db, prepared)


def _launch(db: str, prepared: PreparedRun) -> int:
    run_id = prepared.run_id
    with _lock:
        job = _jobs.get(run_id)
        if job and job.thread.is_alive():
            return run_id
        job = Job(
            run_id,
            threading.Thread(name=f"abeq-run-{run_id}", daemon=True, target=_work, args=(db, prepared)),
        )
        _jobs[run_id] = job
        job.thread.start()
    return run_id


def _work(db: str, prepared: PreparedRun) -> None:
    run_id = prepared.run_id
    job = _jobs[run_id]
    store = Store(db)  # this thread's own connection
    try:
        prepared.run(on_progress=lambda p: setattr(job, "progress", p), cancel=job.cancel, store=store)
    except Exception as e:  # noqa: BLE001 — a crashed worker must leave a trace, not a 'running' row
        job.error = f"{type(e).__name__}: {e}"
        try:
            store.log.update_run(run_id, status=FAILED, finished_at=now())
        except Exception:
            pass
    finally:
        store.close()


def alive(run_id: int) -> bool:
    job = _jobs.get(run_id)
    return bool(job and job.thread.is_alive())


def cancel(run_id: int, db: str | None = None) -> bool:
    """Cancel a run: no new model call starts, calls in flight are dropped (the embedded model
    finishes the generation it is in), what finished is kept. A run of this process stops at once;
    with `db`, a run of another process (`abeq run` in a terminal, another desk) is asked through
    the database, and its engine stops within a second. True when a running run was asked."""
    job = _jobs.get(run_id)
    here = job is not None and job.thread.is_alive()
    if job is not None and here:
        job.cancel.stop(CANCELLED)
    if db is not None:
        store = Store(db)
        try:
            run = store.log.run(run_id)
            if run and run["status"] == RUNNING:
                store.log.request_cancel(run_id)
                here = True
        finally:
            store.close()
    return here


def cancelling(run_id: int) -> bool:
    """Cancel was pressed for this process's run and it has not ended yet."""
    job = _jobs.get(run_id)
    return bool(job and job.thread.is_alive() and job.cancel.is_set())


@atexit.register
def _shutdown(grace: float = 10.0) -> None:
    """The desk is stopping (SIGTERM, Ctrl-C): interrupt its runs, so their rows say so (and a
    resume can continue them), instead of dying mid-call as 'running'."""
    alive_jobs = [j for j in list(_jobs.values()) if j.thread.is_alive()]
    for j in alive_jobs:
        j.cancel.stop(INTERRUPTED)
    for j in alive_jobs:
        j.thread.join(grace)


def notice(run_id: int) -> str:
    """What a provider's rate limits are doing to a running job ("" when nothing)."""
    job = _jobs.get(run_id)
    return ((job.progress or {}).get("throttle") or "") if job and job.thread.is_alive() else ""


def error(run_id: int) -> str | None:
    job = _jobs.get(run_id)
    return job.error if job else None


def wait(run_id: int, timeout: float | None = None) -> bool:
    """Block until the job ends (for tests and scripts); True when it has."""
    job = _jobs.get(run_id)
    if job:
        job.thread.join(timeout)
    return not alive(run_id)
