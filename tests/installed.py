"""abeq as a user installs it: a wheel built from a clean copy of this tree, in a fresh virtual
environment outside the checkout (tests/test_wheel.py and tests/e2e/test_e2e_wheel.py use it).

The wheel goes in with `--no-deps --no-index`; its dependencies are made importable by a `.pth` line
naming this environment's site-packages (after the new environment's own, so the installed abeq
wins over anything there). So nothing is downloaded and llama.cpp is not compiled again, and every
file of abeq the test touches comes from the wheel: the test proves the wheel carries all of abeq,
not that pip can resolve the pins (the set-up commands install those).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Installed:
    venv: Path
    site: Path  # the fresh environment's site-packages, where the wheel's abeq is
    wheel: Path
    home: Path  # a working directory outside the checkout

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def abeq(self) -> str:
        return str(self.venv / "bin" / "abeq")

    @property
    def package(self) -> Path:
        return self.site / "abeq"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment a user's shell would give: no PYTHONPATH (which would import the
        checkout's abeq), model downloads off, crash logs and state kept out of the real home."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ABEQ_DB", "ABEQ_DEBUG")}
        env.update(
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            LITELLM_OFFLINE_MODE="true",
            XDG_STATE_HOME=str(self.home / "state"),
            **extra,
        )
        return env

    def run(self, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
        """`abeq ARGV` from the working directory outside the checkout."""
        return subprocess.run(
            [self.abeq, *argv], cwd=self.home, env=self.env(), capture_output=True, text=True, timeout=timeout
        )


def source_files() -> list[Path]:
    """The tree as a clean clone has it (tracked files and new ones not ignored, minus deletions);
    without git, every file but the ignored kinds."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        skip = {".venv", ".git", "build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache"}
        names = [
            str(p.relative_to(ROOT))
            for p in ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(ROOT).parts) and not p.name.endswith(".egg-info")
        ]
    return [Path(n) for n in names if (ROOT / n).is_file()]


def build_and_install(tmp: Path) -> Installed:
    # A copy, not the checkout: setuptools leaves build/ behind, and a stale build/lib would put
    # files into the wheel that the tree no longer has (or hide ones it forgot).
    src = tmp / "src"
    for rel in source_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    dist = tmp / "dist"
    pip = [sys.executable, "-m", "pip"]
    # no PYTHONPATH: an abeq found through it (a checkout's egg-info) would count as already installed
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    quiet = dict(check=True, capture_output=True, timeout=300, env=clean)
    subprocess.run(
        [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)], **quiet
    )
    (wheel,) = dist.glob("abeq-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], **quiet)
    py = str(venv / "bin" / "python")
    subprocess.run([*pip, "--python", py, "install", "-q", "--no-index", "--no-deps", str(wheel)], **quiet)
    site = Path(subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               text=True, **quiet).stdout.strip())  # fmt: skip
    (site / "_abeq_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    home = tmp / "user"
    home.mkdir()
    return Installed(venv=venv, site=site, wheel=wheel, home=home)
