"""The loopback server in a process of its own (so its CPU is not the orchestrator's), and what
benchmarks measure of another process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of another process (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Until the desk at `url` answers its health check; RuntimeError when its process has ended or
    `timeout` seconds have passed (the caller adds the process's log)."""
    deadline = time.time() + timeout
    while True:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"the desk at {url} did not start (exit status {proc.poll()})")
        time.sleep(0.3)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackProcess:
    """`python -m abeq.testing.loopback …` in a subprocess; `.url` is the api_base, `.stats()` its /stats."""

    def __init__(self, latency: float = 0.0, **faults: float):
        self.port = free_port()
        args = [
            sys.executable,
            "-m",
            "abeq.testing.loopback",
            "--port",
            str(self.port),
            "--latency",
            str(latency),
        ]
        for k, v in faults.items():
            args += [f"--{k.replace('_', '-')}", str(v)]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.root = f"http://127.0.0.1:{self.port}"
        self.url = self.root + "/v1"
        deadline = time.time() + 30
        while True:
            try:
                if urllib.request.urlopen(self.root + "/health", timeout=1).status == 200:
                    break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    self.stop()
                    raise RuntimeError("loopback server did not start") from None
                time.sleep(0.05)

    def stats(self) -> dict:
        return json.loads(urllib.request.urlopen(self.root + "/stats", timeout=10).read())

    def cpu_seconds(self) -> float | None:
        return process_cpu(self.proc.pid)

    def reset(self) -> dict:
        req = urllib.request.Request(self.root + "/reset", data=b"", method="POST")
        return json.loads(urllib.request.urlopen(req, timeout=10).read())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> LoopbackProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def stop(proc: subprocess.Popen, grace: float = 10) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `grace` seconds."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
