"""Start-up: `abeq --version` and `abeq --help` in a fresh process — wall time, CPU seconds (user +
system, the process's own: what a loaded machine cannot inflate as much) and modules loaded; median of
5 runs each. Targets: `--version` <= 0.3 s of CPU, `--help` <= 0.5 s wall.

Run: .venv/bin/python bench/bench_startup.py   Writes bench/results/startup.json.
The checkout this file is in is measured (PYTHONPATH), whatever abeq is installed.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 5
TARGET_CPU_S = 0.3  # --version
TARGET_WALL_S = 0.5  # --help
COUNT = """
import runpy, sys
sys.argv = ["abeq", *sys.argv[1:]]
try:
    runpy.run_module("abeq", run_name="__main__")
except SystemExit:
    pass
print(len(sys.modules), file=sys.stderr)
"""


def env() -> dict[str, str]:
    """This checkout's abeq first on the path."""
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def timed(argv: list[str], cwd: str | Path = ROOT) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh process running `argv` (in ROOT by default: `-m` and `-c` put
    the working directory first on the path)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env(), capture_output=True, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def modules(args: list[str], cwd: str | Path = ROOT) -> int:
    """How many modules `abeq ARGS` has loaded when it is done."""
    p = subprocess.run(
        [sys.executable, "-c", COUNT, *args], cwd=cwd, env=env(), capture_output=True, text=True
    )
    return int(p.stderr.strip().splitlines()[-1])


def measure(args: list[str], cwd: str | Path = ROOT, runs: int = RUNS) -> dict:
    """Wall and CPU of `abeq ARGS`, median of `runs` fresh processes after one that warms the file cache."""
    argv = [sys.executable, "-m", "abeq", *args]
    timed(argv, cwd)
    got = [timed(argv, cwd) for _ in range(runs)]
    walls, cpus = [w for w, _ in got], [c for _, c in got]
    return {
        "command": "abeq " + " ".join(args),
        "runs_wall_s": [round(x, 3) for x in walls],
        "runs_cpu_s": [round(x, 3) for x in cpus],
        "median_wall_s": round(statistics.median(walls), 3),
        "median_cpu_s": round(statistics.median(cpus), 3),
        "modules": modules(args, cwd),
    }


def main() -> int:
    load = os.getloadavg()[0]
    version, help_ = measure(["--version"]), measure(["--help"])
    met = version["median_cpu_s"] <= TARGET_CPU_S and help_["median_wall_s"] <= TARGET_WALL_S
    for m in (version, help_):
        print(
            f"`{m['command']}`: median {m['median_wall_s']:.3f} s wall, {m['median_cpu_s']:.3f} s CPU over "
            f"{RUNS} runs; {m['modules']} modules (load {load:.2f})"
        )
    print(
        f"targets: --version <= {TARGET_CPU_S} s CPU, --help <= {TARGET_WALL_S} s wall: "
        + ("met" if met else "MISSED")
    )
    out = {
        "bench": "startup",
        "load_1min": round(load, 2),
        "version": version,
        "help": help_,
        # what run_all.py has always read: --help's wall time
        "median_s": help_["median_wall_s"],
        "target_cpu_s": TARGET_CPU_S,
        "target_s": TARGET_WALL_S,
        "target_met": met,
    }
    path = ROOT / "bench" / "results" / "startup.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
