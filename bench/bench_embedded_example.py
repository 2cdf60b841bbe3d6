"""The bundled example on the embedded model: wall time, and the prompt evaluation a llama.cpp
context per prompt prefix saves.

Runs the 7-case release-notes example (lossy candidate) through the engine on `local/smollm2` at
the desk's concurrency (4), from a fresh database, once with one llama.cpp context (what abeq did
before: every call's prompt evaluated from its first token, since teacher, candidate and judge
calls interleave on the one llama thread) and once with a context per prefix (the default, 3).
Each in its own process, alternating (one, per-prefix, per-prefix, one with --reps 2), so load from
other work on this shared machine falls on both. Prompt tokens evaluated and the time spent on them
come from llama.cpp's own counters (llama_perf_context).

Run: .venv/bin/python bench/bench_embedded_example.py [--reps 1] [--cases 7]
Writes bench/results/embedded_example.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def one_run(cases: int) -> dict:
    """In this process: the example on the embedded model from a fresh database."""
    from abeq import sets
    from abeq.execution.engine import Engine, RunConfig
    from abeq.models import ModelSpec, local
    from abeq.models.bootstrap import litellm
    from abeq.models.local_contexts import PERF
    from abeq.results.reports.report import build_report
    from abeq.results.store.store import Store
    from abeq.testing.synthetic import documents

    litellm()  # its import is start-up, not the run
    original, _, lossy = documents()
    ts = sets.load(ROOT / "abeq" / "examples" / "release-notes" / "transfer-set.json")
    ts = sets.confirm(ts.model_copy(update={"cases": ts.cases[:cases]}), original.hash)
    local.preload("smollm2")
    spec = ModelSpec.for_purpose("local/smollm2")
    with tempfile.TemporaryDirectory() as d:
        store = Store(str(Path(d) / "abeq.db"))
        cfg = RunConfig(runner=spec, judge=spec, concurrency=4, allow_thin=cases < 7)
        t = time.perf_counter()
        run_id = Engine(store, original, lossy, ts, cfg).run()
        wall = time.perf_counter() - t
        rr = build_report(store, run_id)
        st = store.log.call_stats(run_id)
        store.close()
    return {
        "contexts": int(os.environ.get("ABEQ_LOCAL_CONTEXTS", "3")),
        "wall_s": round(wall, 1),
        "calls": PERF["calls"],
        "prompt_tokens": PERF["prompt_tokens"],
        "prompt_tokens_evaluated": PERF["prompt_tokens_evaluated"],
        "prompt_eval_s": round(PERF["prompt_eval_ms"] / 1000, 1),
        "generated_tokens": PERF["generated_tokens"],
        "generation_s": round(PERF["generation_ms"] / 1000, 1),
        "completion_tokens": st["completion_tokens"],
        "verdicts": {c["case_id"]: c["verdict"] for c in rr.report["cases"]},
        "errors": len(rr.errors),
        "load_1min": round(os.getloadavg()[0], 2),
    }


def spawn(contexts: int, cases: int) -> dict:
    env = {**os.environ, "ABEQ_LOCAL_CONTEXTS": str(contexts)}
    p = subprocess.run(
        [sys.executable, __file__, "--child", "--cases", str(cases)],
        env=env,
        capture_output=True,
        text=True,
        cwd=str(ROOT),
    )
    if p.returncode:
        raise SystemExit(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


KEYS = ("wall_s", "prompt_eval_s", "prompt_tokens_evaluated", "generated_tokens", "generation_s")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1, help="pairs of runs (ABBA order)")
    ap.add_argument("--cases", type=int, default=7)
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(one_run(a.cases)))
        return 0
    runs: dict[int, list[dict]] = {1: [], 3: []}
    for i in range(a.reps):
        for contexts in (1, 3) if i % 2 == 0 else (3, 1):
            r = spawn(contexts, a.cases)
            runs[contexts].append(r)
            print(
                f"contexts={contexts}: {r['wall_s']} s, prompt tokens evaluated "
                f"{r['prompt_tokens_evaluated']:,} of {r['prompt_tokens']:,} in {r['prompt_eval_s']} s, "
                f"{r['generated_tokens']:,} tokens generated in {r['generation_s']} s, {r['errors']} errored "
                f"(load {r['load_1min']})",
                flush=True,
            )

    def med(c, k):
        return statistics.median(r[k] for r in runs[c])

    out = {
        "bench": "embedded_example",
        "cases": a.cases,
        "concurrency": 4,
        "load_1min": round(os.getloadavg()[0], 2),
        "single_context": {k: med(1, k) for k in KEYS},
        "per_prefix": {k: med(3, k) for k in KEYS},
        "prompt_tokens": med(3, "prompt_tokens"),
        "wall_ratio": round(med(3, "wall_s") / med(1, "wall_s"), 3),
        "prompt_eval_ratio": round(med(3, "prompt_eval_s") / med(1, "prompt_eval_s"), 3),
        "same_verdicts": all(r["verdicts"] == runs[1][0]["verdicts"] for r in runs[1] + runs[3]),
        "same_generated_tokens": len({r["generated_tokens"] for r in runs[1] + runs[3]}) == 1,
        "runs": runs,
    }
    print(
        f"per-prefix / single context: wall {out['wall_ratio']}, prompt eval {out['prompt_eval_ratio']} "
        f"(evaluated {out['per_prefix']['prompt_tokens_evaluated']:,} vs "
        f"{out['single_context']['prompt_tokens_evaluated']:,} tokens)"
    )
    path = ROOT / "bench" / "results" / "embedded_example.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
