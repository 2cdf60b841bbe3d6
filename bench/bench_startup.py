"""Start-up: wall time of `abeq --help` in a fresh process (median of 5; target <= 0.5 s).

Run: .venv/bin/python bench/bench_startup.py   Writes bench/results/startup.json.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 5
TARGET_S = 0.5


def main() -> int:
    exe = Path(sys.executable).parent / "abeq"
    cmd = [str(exe)] if exe.exists() else [shutil.which("abeq") or "abeq"]
    cmd.append("--help")
    subprocess.run(cmd, capture_output=True, check=True)  # warm the OS file cache once
    times = []
    for _ in range(RUNS):
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    met = med <= TARGET_S
    print(
        f"`abeq --help`: median {med:.3f} s over {RUNS} runs (min {min(times):.3f}, max {max(times):.3f}); "
        f"target <= {TARGET_S} s: {'met' if met else 'MISSED'}"
    )
    out = {
        "bench": "startup",
        "command": " ".join(cmd),
        "load_1min": round(os.getloadavg()[0], 2),
        "runs_s": [round(x, 3) for x in times],
        "median_s": round(med, 3),
        "target_s": TARGET_S,
        "target_met": met,
    }
    path = ROOT / "bench" / "results" / "startup.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
