"""What an abeq process costs the test suite, exec'd and forked from the tests' zygote (tests/zygote.py).

The same `abeq run` of the bundled example (lossy candidate, scripted model, a fresh sqlite file each
time) is started RUNS times each way, alternating (exec, fork, fork, exec, ...): wall time of each, and
the whole machine's busy CPU over it (from /proc/stat, so it counts the child wherever its parent is;
run it on a quiet machine). The zygote is started and warmed first; its own start-up (the imports it
does once per test worker) is measured apart.

Run: .venv/bin/python bench/bench_test_processes.py   Writes bench/results/test_processes.json.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import zygote  # noqa: E402
from conftest import run_argv  # noqa: E402

RUNS = 6


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (all cores), from /proc/stat."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(
        int, open("/proc/stat").readline().split()[1:9]
    )
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def once(how: str, folder: Path, k: int) -> tuple[float, float]:
    argv = [
        sys.executable,
        "-m",
        "abeq",
        *run_argv(db=folder / f"{how}{k}.db", candidate="candidate-lossy.md"),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = subprocess.run if how == "exec" else zygote.run
    b, t = busy_seconds(), time.perf_counter()
    done = start(argv, capture_output=True, text=True, env=env, cwd=folder)
    wall, cpu = time.perf_counter() - t, busy_seconds() - b
    assert done.returncode == 1, done.stderr  # the lossy candidate regresses
    return wall, cpu


def main() -> None:
    b, t = busy_seconds(), time.perf_counter()
    zygote._the_zygote().connect().close()  # the zygote's own imports, once per test worker
    zygote_start = {"wall_s": round(time.perf_counter() - t, 2), "busy_cpu_s": round(busy_seconds() - b, 2)}
    got: dict[str, list[tuple[float, float]]] = {"exec": [], "fork": []}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(RUNS):
            for how in ("exec", "fork") if k % 2 == 0 else ("fork", "exec"):
                got[how].append(once(how, Path(tmp), k))
    med = {
        how: {
            "wall_s": round(statistics.median(w for w, _ in runs), 2),
            "busy_cpu_s": round(statistics.median(c for _, c in runs), 2),
        }
        for how, runs in got.items()
    }
    out = {
        "bench": "test_processes",
        "command": "abeq run (bundled example, lossy candidate, scripted/rules, fresh sqlite file)",
        "runs_each": RUNS,
        "load_1min": round(os.getloadavg()[0], 2),
        "exec": med["exec"],
        "fork": med["fork"],
        "cpu_ratio_exec_over_fork": round(med["exec"]["busy_cpu_s"] / med["fork"]["busy_cpu_s"], 1),
        "zygote_start": zygote_start,
    }
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "test_processes.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
