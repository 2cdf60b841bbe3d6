"""Embedded model: llama.cpp's thread count, alone and beside other work. Generation of the runner's
prompt for the bundled example's first case (the same messages, temperature 0) on a model loaded with
1 thread and on one loaded with 2, alternating (ABBA), first with nothing else started by the bench,
then beside `--burners` busy processes (what a run in the desk has beside it: Streamlit's server, the
browser drawing progress, another test worker). Reports the wall time per call and the tokens; the
default abeq picks (`abeq.models.local.threads()`: the cores this process may use, less one) is printed.

Run: .venv/bin/python bench/bench_local_threads.py [--reps 2] [--burners 1]
Writes bench/results/local_threads.json. Compare the two columns of one run: the machine's other load
moves both.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _burn() -> None:
    while True:
        pass


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--burners", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=120)
    a = ap.parse_args()

    from llama_cpp import Llama

    from abeq import sets
    from abeq.documents import load_document
    from abeq.execution.runners.runner import runner_messages
    from abeq.models import local
    from abeq.models.caching import plain

    ex = ROOT / "abeq" / "examples" / "release-notes"
    case = sets.load(ex / "transfer-set.json").cases[0]
    msgs = plain(runner_messages(load_document(ex / "SKILL.md").text, case, "skill"))
    llms = {
        n: local.on_llama_thread(
            local.load_llama, Llama, local.smollm2_path(), n_ctx=4096, n_threads=n, verbose=False, seed=0
        )
        for n in (1, 2)
    }

    def call(n: int) -> tuple[float, int]:
        llm = llms[n]
        llm.reset()  # no prefix reuse between calls: each evaluates the whole prompt
        t0 = time.perf_counter()
        out = local.on_llama_thread(
            llm.create_chat_completion, messages=msgs, max_tokens=a.max_tokens, temperature=0, seed=0
        )
        return time.perf_counter() - t0, out["usage"]["completion_tokens"]

    call(1), call(2)  # warm
    results = {}
    for phase, burners in (("alone", 0), (f"beside {a.burners} busy process(es)", a.burners)):
        procs = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(burners)]
        for p in procs:
            p.start()
        try:
            walls: dict[int, list[float]] = {1: [], 2: []}
            tokens = {}
            load = os.getloadavg()[0]
            for i in range(a.reps):
                for n in (1, 2) if i % 2 == 0 else (2, 1):
                    w, t = call(n)
                    walls[n].append(round(w, 2))
                    tokens[n] = t
                    print(f"  {phase}: {n} thread(s) {w:6.1f} s, {t} tokens", flush=True)
        finally:
            for p in procs:
                p.terminate()
        results[phase] = {
            "burners": burners,
            "load_1min_at_start": round(load, 2),
            "median_s": {str(n): statistics.median(v) for n, v in walls.items()},
            "runs_s": {str(n): v for n, v in walls.items()},
            "completion_tokens": {str(n): tokens[n] for n in tokens},
        }
    for llm in llms.values():
        llm.close()
    out = {
        "bench": "local_threads",
        "cores": len(os.sched_getaffinity(0)),
        "default_threads": local.threads(),
    }
    out["results"] = results
    print(json.dumps(out, indent=1))
    path = ROOT / "bench" / "results" / "local_threads.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
