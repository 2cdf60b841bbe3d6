"""Whether a run stored as running is really running.

The process that runs a run writes its owner ("host:pid") and a heartbeat every few seconds. A
row left 'running' by a process that died (kill -9, a crash, a closed laptop) would otherwise read
as running forever; it reads as **interrupted**: its owner is gone on this host, or its heartbeat
stopped. Nothing here writes: the stored status stays what the process last wrote, and a resume
makes the run running again.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from typing import Any

from ...timestamps import epoch
from ...vocab import CANCELLED, CANCELLING, FAILED, INTERRUPTED, RUNNING

HEARTBEAT_SECONDS = 5.0
# A heartbeat this old means the process stopped beating: it died on another host, or its pid was
# reused here. Six missed beats, so a process busy for a moment (a slow import) is not declared dead.
STALE_SECONDS = 30.0
ACTIVE = (RUNNING, CANCELLING)  # stored statuses of a run some process is working on
UNFINISHED = (RUNNING, CANCELLING, CANCELLED, INTERRUPTED, FAILED)


def owner_id() -> str:
    """This process, as a run's owner: host and pid."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_alive(owner: str | None) -> bool | None:
    """True/False for an owner on this host (is its process alive?); None when it cannot be told."""
    if not owner or ":" not in owner:
        return None
    host, _, pid_text = owner.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return None
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    try:  # a killed child nobody has waited for yet is a zombie: dead, though kill(0) succeeds
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return True


def live_status(run: Mapping[str, Any], now: float | None = None) -> str:
    """The run's status as a reader should see it: 'interrupted' for an active run whose process is
    gone or has stopped beating, otherwise the stored status."""
    status = run.get("status") or "unknown"
    if status not in ACTIVE:
        return status
    if owner_alive(run.get("owner")) is False:
        return INTERRUPTED
    beat = epoch(run.get("heartbeat_at"))
    if beat is None or (now if now is not None else time.time()) - beat > STALE_SECONDS:
        return INTERRUPTED
    return status


# A claim on a call (cached.claim) outlives a few missed beats: a process blocked for a while (its
# first model call imports the provider's library, a minute on a loaded machine) still holds it.
CLAIM_STALE_SECONDS = 180.0


def holds_claim(run: Mapping[str, Any], now: float | None = None) -> bool:
    """Whether the run holding a claim still runs: its process alive (on this host: known for sure),
    or elsewhere a heartbeat within CLAIM_STALE_SECONDS."""
    if run.get("status") not in ACTIVE:
        return False
    alive = owner_alive(run.get("owner"))
    if alive is not None:
        return alive
    beat = epoch(run.get("heartbeat_at"))
    return beat is not None and (now if now is not None else time.time()) - beat <= CLAIM_STALE_SECONDS
