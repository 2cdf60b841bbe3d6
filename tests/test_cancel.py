"""Cancel must cancel: no model call starts after it (queued calls included), calls in flight are
dropped, what finished is kept, and the same run resumes. Also: progress counts calls, and a run
whose process died reads as interrupted."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading

import pytest

from abeq.execution.engine import Engine, RunConfig, Stop
from abeq.models import ModelSpec, scripted
from abeq.models.call import CallPolicy, Cancelled, complete
from abeq.results.store.liveness import STALE_SECONDS, live_status, owner_id
from abeq.testing.loopback import LoopbackServer


def test_a_call_queued_for_a_concurrency_slot_does_not_start_after_cancel():
    sent = []

    async def main():
        slot, flag = asyncio.Semaphore(1), threading.Event()
        policy = CallPolicy(semaphore=slot, cancel=flag)
        spec = ModelSpec(name="scripted/rules")
        await slot.acquire()  # a call in flight holds the only slot
        queued = [asyncio.ensure_future(complete(spec, [{"role": "user", "content": "x"}], None, policy))]
        await asyncio.sleep(0.01)
        flag.set()  # Cancel, while the call waits for its slot (it passed every check before)
        slot.release()
        return await asyncio.gather(*queued, return_exceptions=True)

    scripted.model("rules").handler = lambda *a: sent.append(a) or "{}"
    (out,) = asyncio.run(main())
    assert isinstance(out, Cancelled) and sent == []


def test_no_retry_starts_after_cancel():
    flag = threading.Event()

    def fail_then_cancel(*a):
        flag.set()  # cancelled while the first attempt is out; the attempt then fails
        raise ConnectionError("reset")

    scripted.model("rules").handler = fail_then_cancel
    policy = CallPolicy(cancel=flag, backoff_base=0.0)
    with pytest.raises(Cancelled):
        asyncio.run(
            complete(ModelSpec(name="scripted/rules"), [{"role": "user", "content": "x"}], None, policy)
        )
    assert len(scripted.model("rules").history) == 1


def _cancel_on_call(n: int, flag: Stop):
    seen = {"n": 0}

    def handler(model, messages, schema):
        seen["n"] += 1
        if seen["n"] == n:
            flag.stop("cancelled")
        return None

    return handler


def test_cancel_keeps_what_finished_and_the_same_run_resumes(store, example, scripted_cfg):
    flag = Stop()
    scripted.model("rules").handler = _cancel_on_call(
        5, flag
    )  # during case 2's candidate run (sequential: t, c, j)
    eng = Engine(
        store, example["original"], example["lossy"], example["ts"], scripted_cfg(concurrency=1), cancel=flag
    )
    run_id = eng.run()
    assert (
        len(scripted.model("rules").history) == 5
    )  # the call that saw the cancel finished; none started after it
    assert store.log.run(run_id)["status"] == "cancelled"
    counts = store.log.case_counts(run_id)
    assert counts["judged"] == 1 and counts["done"] == 1 and counts["total"] == 7
    assert eng.progress.as_dict()["runner_done"] == 4  # the 5th reply arrived after the cancel: kept

    scripted.forget()
    again = Engine(store, example["original"], example["lossy"], example["ts"], scripted_cfg(concurrency=1))
    assert again.run() == run_id and store.log.run(run_id)["status"] == "finished"
    # case 1 (3 calls) and case 2's two runs come from the cache; 21 - 5 calls are made
    assert len(scripted.model("rules").history) == 21 - 5
    assert store.log.case_counts(run_id)["judged"] == 7


def test_concurrent_cancel_starts_nothing_past_the_calls_in_flight(store, example, scripted_cfg):
    flag = Stop()
    scripted.model("rules").handler = _cancel_on_call(3, flag)
    eng = Engine(
        store, example["original"], example["lossy"], example["ts"], scripted_cfg(concurrency=2), cancel=flag
    )
    run_id = eng.run()
    # 14 runner calls were queued at once behind 2 slots; at most the other call in flight arrives
    assert len(scripted.model("rules").history) <= 3 + 1
    assert store.log.run(run_id)["status"] == "cancelled"


def test_calls_in_flight_are_dropped_not_awaited(store, example):
    with LoopbackServer(latency=30) as srv:  # every reply would take 30 s
        spec = ModelSpec(name="openai/scripted", api_base=srv.url, timeout=60)
        cfg = RunConfig(runner=spec, judge=spec, concurrency=3, max_retries=0)
        flag = Stop()
        eng = Engine(store, example["original"], example["lossy"], example["ts"], cfg, cancel=flag)
        t = threading.Thread(target=eng.run)
        t.start()
        while srv.stats["requests"] < 3:
            t.join(0.05)
        flag.stop("interrupted")
        t.join(20)  # far less than the server's 30 s: the requests in flight were dropped
        assert not t.is_alive()
        st = srv.stats
    assert st["requests"] == 3 and st["ok"] == 0
    run = store.log.run(eng.run_id)
    assert run["status"] == "interrupted" and store.log.call_stats(eng.run_id)["n"] == 0


def test_a_cancel_asked_through_the_store_reaches_the_run(store, example, scripted_cfg, tmp_path):
    from abeq.results.store.store import Store

    other = Store(store.path)  # the desk's connection, in another process as far as the run knows
    first = {"done": False}

    def ask_once(model, messages, schema):
        if not first["done"]:
            first["done"] = True
            other.log.request_cancel(eng.run_id)
        import time

        time.sleep(0.3)  # the engine looks at the store once a second
        return None

    scripted.model("rules").handler = ask_once
    eng = Engine(store, example["original"], example["lossy"], example["ts"], scripted_cfg(concurrency=1))
    eng.run()
    assert store.log.run(eng.run_id)["status"] == "cancelled"
    assert len(scripted.model("rules").history) < 21


def test_progress_counts_calls_and_estimates_time_left(store, example, scripted_cfg):
    seen = []
    eng = Engine(
        store,
        example["original"],
        example["lossy"],
        example["ts"],
        scripted_cfg(judge_samples=3, aa=True),
        on_progress=seen.append,
    )
    eng.run()
    last = seen[-1]
    assert (last["runner_needed"], last["judge_needed"]) == (21, 28)  # 7 x (2 + replay), 7 x (3 + A/A)
    assert (last["runner_done"], last["judge_done"], last["calls"]) == (21, 28, 49)
    assert any(p["eta"] for p in seen) and last["eta"] is None  # nothing left at the end
    assert len(seen) > 49  # one update per call, not only per case


def test_a_running_row_whose_process_died_reads_as_interrupted(store, example, scripted_cfg):
    eng = Engine(store, example["original"], example["lossy"], example["ts"], scripted_cfg())
    run_id = eng.prepare()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    store.log.claim_run(run_id, f"{owner_id().rpartition(':')[0]}:{dead.pid}")
    assert store.log.run(run_id)["status"] == "interrupted"
    assert store.log.run(run_id)["stored_status"] == "running"
    store.log.claim_run(run_id, owner_id())  # this process, beating: running
    assert store.log.run(run_id)["status"] == "running"
    row = {**store.log.run(run_id), "status": "running"}
    assert live_status({**row, "owner": "elsewhere:1"}) == "running"  # another host: the heartbeat decides
    stale = float(__import__("calendar").timegm(__import__("time").gmtime())) + STALE_SECONDS + 5
    assert live_status({**row, "owner": "elsewhere:1"}, now=stale) == "interrupted"
    assert os.getpid() == int(owner_id().rpartition(":")[2])


@pytest.mark.slow
def test_the_embedded_model_finishes_its_generation_and_starts_no_other(store, example):
    from abeq.models import local

    started, real = threading.Event(), local._generate
    calls = []

    def counted(*a, **kw):
        calls.append(1)
        started.set()
        return real(*a, **kw)

    local._generate = counted
    try:
        spec = ModelSpec(name="local/smollm2", max_tokens=256)  # a few seconds per reply
        flag = Stop()
        cfg = RunConfig(runner=spec, judge=spec, concurrency=4)
        eng = Engine(store, example["original"], example["lossy"], example["ts"], cfg, cancel=flag)
        t = threading.Thread(target=eng.run)
        t.start()
        assert started.wait(600)  # the first generation is under way; three more calls wait for the model
        flag.stop("cancelled")
        t.join(600)
        local._worker.submit(lambda: None).result(600)  # whatever was left on the model's thread has run
    finally:
        local._generate = real
    assert not t.is_alive() and len(calls) == 1
    assert store.log.run(eng.run_id)["status"] == "cancelled"


def test_the_first_call_imports_litellm_off_the_event_loop(monkeypatch):
    """The import takes half a minute on a loaded machine: on the loop it stopped the run's heartbeat
    (and the cancel watch) that long, and the desk called the live run interrupted."""
    from abeq.models import bootstrap, call

    loop_ran, during = threading.Event(), []

    def slow_import():  # held until the loop has run something else, or 10 s
        during.append(loop_ran.wait(10))
        return bootstrap.litellm()

    monkeypatch.setattr(call, "imported", lambda: None, raising=False)  # as before the first call
    monkeypatch.setattr(call, "litellm", slow_import)
    monkeypatch.setattr(scripted.model("rules"), "handler", lambda *a: "{}")

    async def main():
        async def watch():  # what the engine's heartbeat does while a call is out
            await asyncio.sleep(0.05)
            loop_ran.set()

        watching = asyncio.ensure_future(watch())
        spec = ModelSpec(name="scripted/rules")
        await complete(spec, [{"role": "user", "content": "x"}], None, CallPolicy())
        await watching

    asyncio.run(main())
    assert during == [True]  # the loop went on while litellm was imported
