"""Finding what a command left running after its process group was killed: a child that called
`setsid` (a daemon, `nohup … &` in a new session) is in no group of ours, but it keeps the
environment it was started with. Each command gets a mark in its environment; at its end, every
process of this user carrying that mark is killed (Linux's /proc; elsewhere nothing is found).
Where bubblewrap works, a pid namespace does this job whole (agent_cmd.pid_namespace)."""

from __future__ import annotations

import os
import secrets
import signal

RUN_MARK = "ABEQ_RUN_MARK"


def new_mark() -> str:
    return secrets.token_hex(8)


def kill_marked(token: str) -> int:
    """SIGKILL every process whose environment holds RUN_MARK=token; how many were found."""
    mark = f"{RUN_MARK}={token}".encode()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return 0
    killed = 0
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if mark in f.read(1 << 20).split(b"\0"):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
        except OSError:
            continue
    return killed
