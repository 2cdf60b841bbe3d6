"""npm packages the tests run for real (the agent CLIs, an OpenID provider): installed pinned into a
cache folder once, under a lock so two test workers do not install at once. Where npm is missing or
cannot reach its registry, `unavailable(reason)` decides: a skip, or a failure under CI."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH", "network")


def install_once(
    prefix: Path,
    packages: dict[str, str],
    installed: Callable[[], object],
    unavailable: Callable[[str], NoReturn],
    timeout: float = 900,
) -> None:
    """`npm install name@version …` into `prefix` unless `installed()` says they are there."""
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed():
            return
        if not shutil.which("npm") or not shutil.which("node"):
            unavailable(f"npm is not installed: {', '.join(packages)} cannot be installed")
        specs = [f"{n}@{v}" for n, v in packages.items()]
        p = subprocess.run(
            ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", *specs],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if p.returncode != 0 and any(w in p.stderr for w in OFFLINE):
            unavailable(f"npm cannot reach its registry: {p.stderr.strip()[-300:]}")
        if p.returncode != 0 or not installed():
            raise RuntimeError(f"npm install {' '.join(specs)} failed: {p.stderr[-2000:]}")
