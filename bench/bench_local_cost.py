"""Embedded model: where its CPU goes on the bundled example, and what other weights or thread
settings would save. The slow part of `make test` is bound by this CPU (the main job's browser test
spends ~300 s of it on the example's 21 calls), so this is the bench to read before changing either.

1. Records the model calls of a run of the example (`--cases` cases, teacher, candidate and judge
   each) on `local/smollm2`, through the engine as a user's run makes them.
2. Replays them in order in the recording process with llama.cpp's own timers and a profile of the
   llama thread: prompt evaluation, token generation (decode) and sampling (abeq checks the JSON
   grammar against the best tokens first, abeq/models/local_sampling.py; llama-cpp-python's own
   sampler checks it against the whole vocabulary for every token).
3. Replays them again, each setting in a fresh process (a model loads its settings once): abeq's
   default (the shipped Q4_1 weights converted to Q8_0, local_weights.py); with llama-cpp-python's own
   sampler (ABEQ_LOCAL_GRAMMAR_FIRST=0); the shipped Q4_1 as it is (ABEQ_LOCAL_REQUANTIZE=0), with
   either sampler; prompt batches on `threads()` threads instead of llama-cpp-python's default (every
   core); and, where the CPU has no AMX, the shipped weights requantized here with llama.cpp's
   `llama_model_quantize` to Q8_0, Q4_0 and F16 with the extra buffer types (weight repacking) on.
   Each replay also does the same fixed work (`same_work`), since other weights give other replies.

Reports CPU seconds (what bounds a busy machine) and wall seconds per setting, and how many of the
replies are the recorded ones word for word (greedy decoding: other weights give other replies).
Compare settings within one run; the machine's other load moves them all.

Run: .venv/bin/python bench/bench_local_cost.py [--cases 2]
Writes bench/results/local_cost.json.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pickle
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "results" / "local_cost.json"


def record(cases: int, calls_file: Path, db: str) -> dict:
    """Run the example's first `cases` cases on the embedded model, keeping every call."""
    from abeq import sets
    from abeq.execution.engine import Engine, RunConfig
    from abeq.models import ModelSpec, local
    from abeq.models.bootstrap import litellm
    from abeq.results.store import Store
    from abeq.testing.synthetic import EXAMPLE, documents

    litellm()  # its import is start-up, not the run
    calls = []
    real = local._generate

    def keep(model, messages, optional_params):
        out = real(model, messages, optional_params)
        calls.append((model, messages, dict(optional_params), out))
        return out

    local._generate = keep
    original, faithful, _ = documents()
    ts = sets.load(EXAMPLE / "transfer-set.json")
    ts = sets.confirm(ts.model_copy(update={"cases": ts.cases[:cases]}), original.hash)
    spec = ModelSpec(name="local/smollm2")
    local.preload("smollm2")
    t, c = time.perf_counter(), time.process_time()
    Engine(Store(db), original, faithful, ts, RunConfig(runner=spec, judge=spec, allow_thin=True)).run()
    run = {
        "calls": len(calls),
        "wall_s": round(time.perf_counter() - t, 1),
        "cpu_s": round(time.process_time() - c, 1),
    }
    local._generate = real
    calls_file.write_bytes(pickle.dumps(calls))
    return run


def where_it_goes(calls_file: Path) -> dict:
    """Replay with llama.cpp's timers and a profile of the llama thread."""
    from abeq.models import local
    from abeq.models.local_contexts import PERF

    calls = pickle.loads(calls_file.read_bytes())
    local.close_all()
    for k in PERF:
        PERF[k] = 0
    local.preload("smollm2")
    prof = cProfile.Profile()
    local.on_llama_thread(prof.enable)
    c = time.process_time()
    for model, messages, params, _ in calls:
        local.on_llama_thread(local._generate, model, messages, params)  # where a run makes them
    local.on_llama_thread(prof.disable)
    cpu = time.process_time() - c
    stats = pstats.Stats(prof).stats.items()
    by_name = {
        f"{Path(f).name}:{name}": tt for (f, _, name), (_, _, tt, _, _) in stats
    }  # ctypes calls count here
    cumulative = {f"{Path(f).name}:{name}": ct for (f, _, name), (_, _, _, ct, _) in stats}
    return {
        "cpu_s": round(cpu, 1),
        "prompt_tokens_evaluated": PERF["prompt_tokens_evaluated"],
        "prompt_eval_wall_s": round(PERF["prompt_eval_ms"] / 1000, 1),
        "generated_tokens": PERF["generated_tokens"],
        "generation_wall_s": round(PERF["generation_ms"] / 1000, 1),
        "decode_s": round(by_name.get("_internals.py:decode", 0.0), 1),
        # llama-cpp-python's sampler, or abeq's (local_sampling.py: the grammar on the best tokens first)
        "sample_s": round(
            by_name.get("_internals.py:sample", 0.0) + cumulative.get("local_sampling.py:sample", 0.0), 1
        ),
    }


def quantize(dest: Path) -> dict[str, Path]:
    """The shipped Q4_1 weights requantized to other types, as abeq converts them (local_weights.py)."""
    from abeq.models.local_weights import convert, smollm2_path

    return {
        name.lower(): convert(smollm2_path(), dest / f"smollm2-{name.lower()}.gguf", name)
        for name in ("Q8_0", "Q4_0", "F16")
    }


def replay(calls_file: Path, weights: str, batch_threads: str) -> dict:
    """One setting, in this (fresh) process: replay every call, CPU and wall, replies kept."""
    from abeq.models import local

    load = local.load_llama

    def with_setting(llama, path, **kw):
        if batch_threads:
            kw["n_threads_batch"] = local.threads()
        return load(llama, weights or path, **kw)

    local.load_llama = with_setting
    calls = pickle.loads(calls_file.read_bytes())
    local.preload("smollm2")
    c, t, same = time.process_time(), time.perf_counter(), 0
    for model, messages, params, recorded in calls:
        same += local.on_llama_thread(local._generate, model, messages, params)[0] == recorded[0]
    from abeq.models.local_sampling import COUNTS

    fixed = local.on_llama_thread(same_work, local.get_llama("smollm2"))
    return {
        **fixed,
        "cpu_s": round(time.process_time() - c, 1),
        "wall_s": round(time.perf_counter() - t, 1),
        "same_replies": same,
        "calls": len(calls),
        "tokens_sampled_grammar_first": COUNTS["tokens"],
        "of_which_whole_vocabulary": COUNTS["refused"],
    }


def same_work(llm, prompt_tokens: int = 1000, single: int = 100) -> dict:
    """The same work for any weights (the replays above generate as many tokens as their replies
    take): the first tokens of the example's SKILL.md as one prompt, then single tokens one by one."""
    from abeq.testing.synthetic import documents

    tokens = llm.tokenize(documents()[0].text.encode())[:prompt_tokens]
    llm.reset()
    c = time.process_time()
    llm.eval(tokens)
    prompt_cpu = time.process_time() - c
    c = time.process_time()
    for t in tokens[:single]:
        llm.eval([t])
    return {
        f"prompt_{len(tokens)}_tokens_cpu_s": round(prompt_cpu, 2),
        "cpu_ms_per_single_token": round((time.process_time() - c) * 1000 / single, 1),
    }


def no_amx() -> bool:
    try:
        return "amx" not in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=2)
    ap.add_argument("--replay", nargs=3, metavar=("CALLS", "WEIGHTS", "BATCH"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.replay:
        print(json.dumps(replay(Path(a.replay[0]), a.replay[1], a.replay[2])))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        calls_file = Path(tmp) / "calls.pkl"
        run = record(a.cases, calls_file, str(Path(tmp) / "abeq.db"))
        print("recorded", run, flush=True)
        split = where_it_goes(calls_file)
        print("where it goes", split, flush=True)
        shipped, sampler = {"ABEQ_LOCAL_REQUANTIZE": "0"}, {"ABEQ_LOCAL_GRAMMAR_FIRST": "0"}
        settings = [
            (
                "abeq's default: Q8_0 converted from the shipped Q4_1, grammar on the best tokens first",
                "",
                "",
                {},
            ),
            ("Q8_0, llama-cpp-python's sampler (grammar on the whole vocabulary)", "", "", sampler),
            ("the shipped Q4_1 (ABEQ_LOCAL_REQUANTIZE=0)", "", "", shipped),
            (
                "the shipped Q4_1 and llama-cpp-python's sampler (abeq before both)",
                "",
                "",
                {**shipped, **sampler},
            ),
            ("prompt batches on threads()", "", "1", {}),
        ]
        repack = {"ABEQ_LOCAL_EXTRA_BUFTS": "1"} if no_amx() else {}
        if repack:
            for name, path in quantize(Path(tmp)).items():
                settings.append((f"{name} requantized + repacking", str(path), "", repack))
        rows = []
        for label, weights, batch, env in settings:
            out = subprocess.run(
                [sys.executable, __file__, "--replay", str(calls_file), weights, batch],
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                check=True,
            )
            row = {"setting": label, **json.loads(out.stdout.strip().splitlines()[-1])}
            rows.append(row)
            print(row, flush=True)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps({"run": run, "where_it_goes": split, "settings": rows}, indent=2) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
