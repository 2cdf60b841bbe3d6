"""Shared by the benchmarks and the fault tests: a many-case transfer set and a loopback server process.

Nothing here calls a model; the server is `python -m abeq.loopback`, a real HTTP peer in its own
process (so its CPU is not the orchestrator's).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "abeq" / "examples" / "release-notes"


def many_cases(n: int, original_text: Optional[str] = None):
    """A confirmed transfer set of n cases cycled from the example's, each with a unique id and input."""
    from abeq import transferset
    from abeq.documents import sha256

    base = transferset.load(EXAMPLE / "transfer-set.json")
    cases = []
    for i in range(n):
        c = base.cases[i % len(base.cases)]
        cases.append(c.model_copy(update={"id": f"{c.id}-{i:04d}", "input": f"{c.input}\n\n(request {i})"}))
    text = original_text if original_text is not None else (EXAMPLE / "SKILL.md").read_text(encoding="utf-8")
    return transferset.confirm(base.model_copy(update={"cases": cases}), sha256(text))


def documents():
    """(original, faithful candidate, lossy candidate) of the bundled example."""
    from abeq.documents import load_document

    return (load_document(EXAMPLE / "SKILL.md"), load_document(EXAMPLE / "candidate-faithful.md"),
            load_document(EXAMPLE / "candidate-lossy.md"))


def write_set(path: Path, n: int) -> Path:
    """many_cases(n) as a transfer-set file the CLI can read."""
    from abeq import transferset

    path.write_text(transferset.dump(many_cases(n)), encoding="utf-8")
    return path


def process_cpu(pid: int) -> Optional[float]:
    """User + system CPU seconds of another process (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    import os

    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackProcess:
    """`python -m abeq.loopback …` in a subprocess; `.url` is the api_base, `.stats()` its /stats."""

    def __init__(self, latency: float = 0.0, **faults: float):
        self.port = free_port()
        args = [sys.executable, "-m", "abeq.loopback", "--port", str(self.port), "--latency", str(latency)]
        for k, v in faults.items():
            args += [f"--{k.replace('_', '-')}", str(v)]
        self.proc = subprocess.Popen(args, cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
                    raise RuntimeError("loopback server did not start")
                time.sleep(0.05)

    def stats(self) -> dict:
        return json.loads(urllib.request.urlopen(self.root + "/stats", timeout=10).read())

    def cpu_seconds(self) -> Optional[float]:
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

    def __enter__(self) -> "LoopbackProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
