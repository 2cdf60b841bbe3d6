"""The judge calibration suite on the judges reachable here: the scripted test double and the
embedded model (SmolLM2-135M), each from a fresh database, with the figures `abeq calibrate`
reports (accuracy, regression recall with its 95% interval, false-regression rate, per category,
swapped-pair consistency) and the wall time. A capable model is not reachable from this machine:
the command for one is in docs/guides/calibration.md.

Run: .venv/bin/python bench/bench_calibration.py [--judges scripted/rules,local/smollm2] [--samples 1]
Writes bench/results/calibration.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


def measure(judge: str, samples: int) -> dict:
    from abeq import calibrate
    from abeq.results.store import Store

    with tempfile.TemporaryDirectory() as d:
        store = Store(str(Path(d) / "abeq.db"))
        t = time.perf_counter()
        # the embedded model is one llama.cpp thread: more calls at once only queue
        cal = calibrate(
            judge, samples=samples, store=store, concurrency=1 if judge.startswith("local/") else 4
        )
        wall = time.perf_counter() - t
        t = time.perf_counter()
        again = calibrate(judge, samples=samples, store=store)  # all from the cache
        cached_wall = time.perf_counter() - t
        store.close()
    s = cal.summary
    return {
        "judge": judge,
        "judge_prompt": cal.judge_prompt,
        "samples": samples,
        "pairs": s["pairs_total"],
        "errors": s["errors"],
        "accuracy": s["accuracy"],
        "regressions": s["regressions"],
        "regressions_caught": s["regressions_caught"],
        "regression_recall": s["regression_recall"],
        "regression_recall_ci95": s["regression_recall_ci95"],
        "false_regression_rate": s["false_regression_rate"],
        "per_category": {k: v["accuracy"] for k, v in s["per_category"].items()},
        "swapped_consistency": s["swapped"]["consistency"],
        "headline": cal.headline,
        "calls_made": cal.calls["made"],
        "second_run_calls_made": again.calls["made"],
        "wall_s": round(wall, 1),
        "second_run_wall_s": round(cached_wall, 2),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judges", default="scripted/rules,local/smollm2")
    ap.add_argument("--samples", type=int, default=1)
    a = ap.parse_args(argv)
    results = []
    for judge in a.judges.split(","):
        r = measure(judge, a.samples)
        print(f"{judge}: {r['headline']} · swapped consistency {r['swapped_consistency']} · {r['wall_s']} s")
        results.append(r)
    out = ROOT / "bench" / "results" / "calibration.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {"bench": "calibration", "load_1min": round(os.getloadavg()[0], 2), "results": results}
    out.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
