"""Embedded model: tokens/s through abeq vs bare llama-cpp-python, and one model load per process.

Through abeq: `abeq.models.complete(ModelSpec("local/smollm2"), …)` (litellm's custom-provider
path, the provider's llama thread, the provider's grammar). Bare: `Llama.create_chat_completion`
on a second Llama built with the same arguments, given the same messages and sampling parameters
(temperature 0, seed 0, the provider's repeat penalty; with a schema, the same bounded grammar),
so both produce the same tokens. The bare call is made on the same thread abeq uses for every
llama.cpp call (`local.on_llama_thread`): ggml's OpenMP team belongs to the calling thread, and two
calling threads in one process slow each other down ~3x (see abeq/models/local.py), which
would be measuring the bench, not abeq. Both are warmed first; the runs alternate (ABBA order), so load
from other work on the machine falls on both. tokens/s = completion tokens / wall time of the
call; the ratio is of the medians (single calls vary by +-20% here even on an idle machine).

Run: .venv/bin/python bench/bench_local.py   (target: ratio >= 0.9; LOAD_COUNT == 1)
Writes bench/results/local.json.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPS = 5
TARGET_RATIO = 0.9
PLAIN = [
    {"role": "user", "content": "Explain in a few sentences what release notes are for and who reads them."}
]
SCHEMA_CASE = "happy-1"


def main() -> int:
    from abeq import sets
    from abeq.documents import load_document
    from abeq.execution.runners.runner import runner_messages
    from abeq.models import ModelSpec, complete, local
    from abeq.models.bootstrap import litellm
    from abeq.models.caching import plain
    from abeq.models.schema import response_format
    from abeq.schemas import RunnerReply

    litellm()  # its import is start-up, not generation
    t = time.perf_counter()
    local.preload("smollm2")
    load_s = time.perf_counter() - t

    from llama_cpp import Llama

    abeq_llm = local.preload("smollm2")
    # Same model parameters as abeq's (extra buffer types off: see local.load_llama), else both
    # would not be measuring the same kernels.
    bare = local.on_llama_thread(
        local.load_llama,
        Llama,
        local.smollm2_path(),
        n_ctx=abeq_llm.n_ctx(),
        n_threads=local.threads(),
        verbose=False,
        seed=0,
    )

    ex = ROOT / "abeq" / "examples" / "release-notes"
    case = next(c for c in sets.load(ex / "transfer-set.json").cases if c.id == SCHEMA_CASE)
    schema_msgs = runner_messages(load_document(ex / "SKILL.md").text, case, "skill")
    grammar = local.bounded_schema(response_format(RunnerReply, portable=False)["json_schema"]["schema"])

    scenarios = {
        "plain": dict(messages=PLAIN, max_tokens=160, response_model=None, bare_rf=None),
        "schema": dict(
            messages=schema_msgs,
            max_tokens=240,
            response_model=RunnerReply,
            bare_rf={"type": "json_object", "schema": grammar},
        ),
    }
    results = {}
    for name, sc in scenarios.items():
        spec = ModelSpec(name="local/smollm2", max_tokens=sc["max_tokens"])
        cpu: dict[str, list[float]] = {}

        def via_abeq(spec=spec, sc=sc, cpu=cpu):
            t0, c0 = time.perf_counter(), time.process_time()
            c = asyncio.run(complete(spec, sc["messages"], sc["response_model"]))
            cpu.setdefault("abeq", []).append(time.process_time() - c0)
            return c.completion_tokens, time.perf_counter() - t0, c.text

        def via_bare(spec=spec, sc=sc, cpu=cpu):
            kw = dict(
                messages=plain(sc["messages"]),  # the text abeq gives llama.cpp (the prefix mark dropped)
                temperature=spec.temperature,
                max_tokens=spec.max_tokens,
                repeat_penalty=local.REPEAT_PENALTY,
                seed=spec.seed,
            )
            if sc["bare_rf"]:
                kw["response_format"] = sc["bare_rf"]
            t0, c0 = time.perf_counter(), time.process_time()
            out = local.on_llama_thread(bare.create_chat_completion, **kw)
            cpu.setdefault("bare", []).append(time.process_time() - c0)
            return (
                out["usage"]["completion_tokens"],
                time.perf_counter() - t0,
                out["choices"][0]["message"]["content"],
            )

        via_abeq(), via_bare()  # warm: first-call allocations, grammar compilation paths
        a_rates, b_rates, same = [], [], True
        for i in range(REPS):
            if i % 2:
                tb, sb, xb = via_bare()
                ta, sa, xa = via_abeq()
            else:
                ta, sa, xa = via_abeq()
                tb, sb, xb = via_bare()
            a_rates.append(ta / sa)
            b_rates.append(tb / sb)
            same = same and xa == xb
        a, b = statistics.median(a_rates), statistics.median(b_rates)
        results[name] = {
            "abeq_tokens_per_s": round(a, 1),
            "bare_tokens_per_s": round(b, 1),
            "ratio": round(a / b, 3),
            "completion_tokens": ta,
            "same_output": same,
            "abeq_runs": [round(x, 1) for x in a_rates],
            "bare_runs": [round(x, 1) for x in b_rates],
            "abeq_cpu_s_per_call": round(statistics.median(cpu["abeq"]), 3),
            "bare_cpu_s_per_call": round(statistics.median(cpu["bare"]), 3),
        }
    bare.close()
    loads = local.LOAD_COUNT["n"]
    print(
        f"{'scenario':>8} {'abeq tok/s':>11} {'bare tok/s':>11} {'ratio':>6} {'tokens':>7} "
        f"{'same output':>12}"
    )
    for name, r in results.items():
        print(
            f"{name:>8} {r['abeq_tokens_per_s']:>11.1f} {r['bare_tokens_per_s']:>11.1f} {r['ratio']:>6.3f}"
            f" {r['completion_tokens']:>7} {str(r['same_output']):>12}"
        )
    print(f"model load: {load_s:.2f} s; LOAD_COUNT after {(REPS + 1) * len(scenarios)} abeq calls = {loads}")
    met = all(r["ratio"] >= TARGET_RATIO for r in results.values()) and loads == 1
    out = {
        "bench": "local",
        "load_1min": round(os.getloadavg()[0], 2),
        "load_seconds": round(load_s, 3),
        "load_count": loads,
        "target_ratio": TARGET_RATIO,
        "target_met": met,
        "results": results,
    }
    path = ROOT / "bench" / "results" / "local.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
