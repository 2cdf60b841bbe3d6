"""Orchestration overhead: a 200-case run against a loopback server with a fixed latency.

The server (`python -m abeq.testing.loopback`) runs in its own process and stamps the first request and
the last answer; measured = that span, bound = max(2 x latency, ceil(calls / concurrency) x latency),
ratio = measured / bound. Every configuration runs in a fresh child
process with a fresh database, after a small warm-up run (imports, first connections), so
`cpu_ms_per_call` (time.process_time over the measured run / calls) is the orchestrator's alone.
Targets (issue 25), for the fast path at 250 ms, measured in the same run as the bare client:
ratio <= 1.05 and <= 1.5 ms of CPU a call; each is printed met or not met.

  fast     abeq's lean OpenAI-compatible transport (the default for openai/... with an api_base)
  litellm  the same run with ABEQ_TRANSPORT=litellm (litellm.acompletion, its openai route)
  bare     a bare aiohttp client: same bodies, same 2-parallel-then-1 per case, semaphore 32,
           no cache, no validation, no storage -- the floor

Run: .venv/bin/python bench/bench_overhead.py [--latencies 0.25,1] [--transports fast,litellm,bare]
Writes bench/results/overhead.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from abeq import sets  # noqa: E402
from abeq.testing.process import LoopbackProcess, process_cpu  # noqa: E402
from abeq.testing.synthetic import documents, many_cases  # noqa: E402

CASES, CONCURRENCY, WARMUP_CASES = 200, 32, 8
TARGET_RATIO = 1.05  # of the critical-path bound, fast path at 250 ms (issue 25)
TARGET_CPU_MS = 1.5  # orchestrator CPU a model call, same run
MODEL = "openai/scripted"


def bound(calls: int, latency: float, concurrency: int = CONCURRENCY) -> float:
    return max(2 * latency, math.ceil(calls / concurrency) * latency)


# ------------------------------------------------------------------ one configuration (child)
def engine_run(url: str, ts, db: str, concurrency: int) -> int:
    from abeq.execution.engine import Engine, RunConfig
    from abeq.models import ModelSpec
    from abeq.results.store.store import Store

    original, faithful, _ = documents()
    spec = ModelSpec(name=MODEL, api_base=url, max_tokens=2048)
    store = Store(db)
    try:
        eng = Engine(
            store, original, faithful, ts, RunConfig(runner=spec, judge=spec, concurrency=concurrency)
        )
        run_id = eng.run()
        st = store.log.call_stats(run_id)
        errors = sum(1 for r in store.log.run_cases(run_id) if r["status"] != "judged")
        return st["made"] if not errors else -errors
    finally:
        store.close()


async def bare_run(url: str, ts, concurrency: int) -> int:
    """The floor: abeq's request bodies posted with aiohttp, in the engine's dependency shape."""
    import aiohttp

    from abeq.execution.judge import judge_prompt
    from abeq.execution.runners.runner import runner_messages
    from abeq.models.caching import plain  # the bytes abeq sends an OpenAI-style server
    from abeq.models.schema import response_format
    from abeq.prompts import messages
    from abeq.schemas import JudgeReply, RunnerReply

    original, faithful, _ = documents()
    rf_runner = response_format(RunnerReply, portable=True)
    rf_judge = response_format(JudgeReply, portable=True)
    sem = asyncio.Semaphore(concurrency)
    calls = 0

    async def post(sess, msgs, rf) -> str:
        nonlocal calls
        body = {
            "model": "scripted",
            "messages": msgs,
            "temperature": 0.0,
            "max_tokens": 2048,
            "seed": 0,
            "response_format": rf,
        }
        async with sem:
            async with sess.post(url + "/chat/completions", json=body) as r:
                data = json.loads(await r.text())
        calls += 1
        return data["choices"][0]["message"]["content"]

    async def case(sess, c):
        o, k = await asyncio.gather(
            post(sess, plain(runner_messages(original.text, c, "skill")), rf_runner),
            post(sess, plain(runner_messages(faithful.text, c, "skill")), rf_runner),
        )
        await post(
            sess,
            messages(judge_prompt(), [("case_input", c.input), ("original_run", o), ("candidate_run", k)]),
            rf_judge,
        )

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as sess:
        await asyncio.gather(*[case(sess, c) for c in ts.cases])
    return calls


def _db(tmp: str, name: str) -> str:
    """A fresh store: a sqlite file, or with ABEQ_BENCH_PG (a server's URL; bench_team_store.py sets
    it) a new PostgreSQL database on that server."""
    server = os.environ.get("ABEQ_BENCH_PG")
    if not server:
        return os.path.join(tmp, f"{name}.db")
    import uuid

    from abeq.results.store.postgres import create_database

    return create_database(server, f"bench_{name}_{uuid.uuid4().hex[:10]}")


def child(
    transport: str, url: str, latency: float, cases: int, concurrency: int, server_pid: int = 0
) -> dict:
    if transport == "litellm":
        os.environ["ABEQ_TRANSPORT"] = "litellm"
        from abeq.models.bootstrap import litellm

        litellm()  # the 6-10 s import is start-up, not per-call overhead
    from abeq.models import scripted

    server_root = url.rsplit("/v1", 1)[0]
    warm, ts = many_cases(WARMUP_CASES), many_cases(cases)
    warm = sets.confirm(
        warm.model_copy(
            update={"cases": [c.model_copy(update={"input": c.input + " warm-up"}) for c in warm.cases]}
        ),
        warm.document_hash,
    )
    with tempfile.TemporaryDirectory() as tmp:
        if transport == "bare":
            asyncio.run(bare_run(url, warm, concurrency))
        else:
            engine_run(url, warm, _db(tmp, "warm"), concurrency)
        _post(server_root + "/reset")
        scripted.forget()
        s0 = process_cpu(server_pid) if server_pid else None
        t0, c0 = time.perf_counter(), time.process_time()
        if transport == "bare":
            made = asyncio.run(bare_run(url, ts, concurrency))
        else:
            made = engine_run(url, ts, _db(tmp, "bench"), concurrency)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        s1 = process_cpu(server_pid) if server_pid else None
    st = _get(server_root + "/stats")
    calls = st["requests"]
    measured = st["last_response_at"] - st["first_request_at"]
    b = bound(calls, latency, concurrency)
    return {
        "transport": transport,
        "latency_s": latency,
        "cases": cases,
        "concurrency": concurrency,
        "calls": calls,
        "calls_counted_by_client": made,
        "server_ok": st["ok"],
        "measured_s": round(measured, 3),
        "bound_s": round(b, 3),
        "ratio": round(measured / b, 3),
        "client_wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "cpu_ms_per_call": round(cpu * 1000 / max(1, calls), 3),
        # the server's own CPU: if it nears the run time, the server (not abeq) is the bottleneck
        "server_cpu_ms_per_call": round((s1 - s0) * 1000 / max(1, calls), 3) if s0 is not None else None,
    }


def _get(url: str) -> dict:
    import urllib.request

    return json.loads(urllib.request.urlopen(url, timeout=30).read())


def _post(url: str) -> dict:
    import urllib.request

    return json.loads(
        urllib.request.urlopen(urllib.request.Request(url, data=b"", method="POST"), timeout=30).read()
    )


# ------------------------------------------------------------------ driver
def measure(
    transport: str, url: str, latency: float, cases: int, concurrency: int, server_pid: int = 0
) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "ABEQ_TRANSPORT"}
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            transport,
            "--url",
            url,
            "--latency",
            str(latency),
            "--cases",
            str(cases),
            "--concurrency",
            str(concurrency),
            "--server-pid",
            str(server_pid),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(ROOT),
        timeout=900,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{transport} @ {latency}s failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _met(ok: bool) -> str:
    return "met" if ok else "not met"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--latencies", default="0.25,1")
    p.add_argument("--transports", default="fast,litellm,bare")
    p.add_argument("--cases", type=int, default=CASES)
    p.add_argument("--concurrency", type=int, default=CONCURRENCY)
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "overhead.json"))
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--url", default=None, help=argparse.SUPPRESS)
    p.add_argument("--latency", type=float, default=None, help=argparse.SUPPRESS)
    p.add_argument("--server-pid", type=int, default=0, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.child, a.url, a.latency, a.cases, a.concurrency, a.server_pid)))
        return 0
    load_before = round(os.getloadavg()[0], 2)
    results = []
    for latency in [float(x) for x in a.latencies.split(",")]:
        with LoopbackProcess(latency=latency) as srv:
            for transport in a.transports.split(","):
                r = measure(transport, srv.url, latency, a.cases, a.concurrency, srv.proc.pid)
                results.append(r)
                print(
                    f"  {transport:>7} @ {latency:g}s: ratio {r['ratio']:.3f} "
                    f"({r['measured_s']:.2f}s / bound {r['bound_s']:.2f}s), "
                    f"{r['cpu_ms_per_call']:.2f} ms CPU/call (server {r['server_cpu_ms_per_call']} ms)",
                    file=sys.stderr,
                    flush=True,
                )
    bare = {r["latency_s"]: r for r in results if r["transport"] == "bare"}
    print(
        f"\n{'transport':>9} {'latency':>8} {'calls':>6} {'measured s':>11} {'bound s':>8} {'ratio':>6}"
        f" {'CPU ms/call':>12} {'bare CPU ms/call':>17}"
    )
    for r in results:
        b = bare.get(r["latency_s"])
        print(
            f"{r['transport']:>9} {r['latency_s']:>7g}s {r['calls']:>6} {r['measured_s']:>11.2f} "
            f"{r['bound_s']:>8.2f}"
            f" {r['ratio']:>6.3f} {r['cpu_ms_per_call']:>12.2f} "
            f"{b['cpu_ms_per_call'] if b else float('nan'):>17.2f}"
        )
    fast = next((r for r in results if r["transport"] == "fast" and r["latency_s"] == 0.25), None)
    ratio_met = fast is not None and fast["ratio"] <= TARGET_RATIO
    cpu_met = fast is not None and fast["cpu_ms_per_call"] <= TARGET_CPU_MS
    load_after = round(os.getloadavg()[0], 2)
    out = {
        "bench": "overhead",
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_1min_before": load_before,
        "load_1min_after": load_after,
        "target_ratio_at_250ms": TARGET_RATIO,
        "target_cpu_ms_per_call": TARGET_CPU_MS,
        "ratio_met": ratio_met,
        "cpu_met": cpu_met,
        "target_met": ratio_met and cpu_met,
        "results": results,
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=2) + "\n")
    b = bare.get(0.25)
    beside = f" (bare client, same run: {b['ratio']:.3f}, {b['cpu_ms_per_call']:.2f} ms)" if b else ""
    if fast is None:
        print("targets are for the fast path at 250 ms: not measured in this run")
    else:
        print(
            f"fast path at 250 ms{beside}, 1-minute load {load_before} before, {load_after} after:\n"
            f"  ratio {fast['ratio']:.3f} <= {TARGET_RATIO}: {_met(ratio_met)}\n"
            f"  CPU {fast['cpu_ms_per_call']:.2f} ms/call <= {TARGET_CPU_MS}: {_met(cpu_met)}"
        )
    print(f"-> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
