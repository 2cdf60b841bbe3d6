"""Cache: round 2 of a review makes 0 teacher calls; an identical re-run makes 0 model calls.

Calls are counted where they land -- the loopback server's /stats request counter, over real HTTP
(`abeq run` with openai/scripted and --api-base) -- and cross-checked with the run's call stats.

Run: .venv/bin/python bench/bench_cache.py   Writes bench/results/cache.json.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from abeq.testing.process import LoopbackProcess  # noqa: E402
from abeq.testing.synthetic import example_run_args, write_set  # noqa: E402

CASES = 50


def main() -> int:
    from abeq.cli import main as abeq
    from abeq.results.store.store import Store

    with tempfile.TemporaryDirectory() as tmp, LoopbackProcess(latency=0.01) as srv:
        tmp = Path(tmp)
        ts = write_set(tmp / "set.json", CASES)
        db = str(tmp / "abeq.db")

        def run(candidate: str) -> dict:
            before = srv.stats()["requests"]
            t = time.perf_counter()
            with redirect_stdout(io.StringIO()):
                code = abeq(
                    example_run_args(ts, db, srv.url, candidate, "--review", "bench", "--concurrency", "16")
                )
            wall = time.perf_counter() - t
            store = Store(db)
            run_id = store.log.runs()[0]["id"]
            st = store.log.call_stats(run_id)
            store.close()
            return {
                "candidate": candidate,
                "exit_code": code,
                "http_requests": srv.stats()["requests"] - before,
                "teacher_calls": st["teacher_made"],
                "calls_made": st["made"],
                "from_cache": st["cached"],
                "wall_s": round(wall, 3),
            }

        steps = {
            "round_1": run("candidate-lossy.md"),
            "round_2": run("candidate-faithful.md"),
            "rerun_round_2": run("candidate-faithful.md"),
        }
    r1, r2, again = steps["round_1"], steps["round_2"], steps["rerun_round_2"]
    checks = {
        "round_1_all_calls": r1["http_requests"] == 3 * CASES,
        "round_2_zero_teacher_calls": r2["teacher_calls"] == 0 and r2["http_requests"] == 2 * CASES,
        "rerun_zero_model_calls": again["http_requests"] == 0 and again["calls_made"] == 0,
    }
    print(
        f"{'step':>14} {'candidate':>22} {'HTTP requests':>14} {'teacher calls':>14} {'from cache':>11} "
        f"{'wall s':>7}"
    )
    for name, r in steps.items():
        print(
            f"{name:>14} {r['candidate']:>22} {r['http_requests']:>14} {r['teacher_calls']:>14}"
            f" {r['from_cache']:>11} {r['wall_s']:>7.2f}"
        )
    for k, ok in checks.items():
        print(f"{k}: {'ok' if ok else 'FAILED'}")
    out = {
        "bench": "cache",
        "cases": CASES,
        "load_1min": round(os.getloadavg()[0], 2),
        "steps": steps,
        "checks": checks,
        "target_met": all(checks.values()),
    }
    path = ROOT / "bench" / "results" / "cache.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    return 0 if out["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
