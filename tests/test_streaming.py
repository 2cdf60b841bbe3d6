"""Verdicts stream in case order: a case is judged as soon as both of its runs are in, ahead of later
cases' runner calls, so a reviewer can read verdicts early in a run and a Cancel half way keeps the
cases judged (the rest read "not run", never errors). On a loopback model with latency, over HTTP."""

from __future__ import annotations

import threading

from abeq.execution.engine import Engine, RunConfig, Stop
from abeq.models import ModelSpec
from abeq.results.reports.report import build_report, exit_code
from abeq.testing.loopback import LoopbackServer
from abeq.testing.synthetic import many_cases

N = 24


def _engine(store, example, url, flag=None):
    spec = ModelSpec(name="openai/scripted", api_base=url, timeout=30)
    cfg = RunConfig(runner=spec, judge=spec, concurrency=2, max_retries=0)
    return Engine(store, example["original"], example["lossy"], many_cases(N), cfg, cancel=flag)


def _kinds(store, run_id: int) -> list[str]:
    """The run's calls in the order they finished (the calls log is written as each one lands)."""
    return [r["kind"] for r in store.sql.all("select kind from calls where run_id = ? order by id", [run_id])]


def test_the_first_judge_call_comes_before_a_quarter_of_the_runner_calls(store, example):
    with LoopbackServer(latency=0.02) as srv:
        run_id = _engine(store, example, srv.url).run()
    kinds = _kinds(store, run_id)
    runner = [k for k in kinds if k.startswith("runner")]
    assert len(runner) == 2 * N
    before = kinds.index("judge")
    assert kinds[:before].count("runner-teacher") + kinds[:before].count("runner-candidate") < len(runner) / 4
    # and verdicts land in case order: each case's judgement before the judgement of any case 4 later
    judged = [
        r["case_id"] for r in store.sql.all("select case_id from calls where kind = 'judge' order by id")
    ]
    order = [c.id for c in many_cases(N).cases]
    assert all(order.index(c) < i + 4 for i, c in enumerate(judged))
    assert build_report(store, run_id).report["summary"]["regressions"] > 0


def test_a_cancel_half_way_keeps_the_verdicts_of_the_cases_judged(store, example):
    flag = Stop()
    with LoopbackServer(latency=0.03) as srv:
        eng = _engine(store, example, srv.url, flag)
        t = threading.Thread(target=eng.run)
        t.start()
        while srv.stats["requests"] < N * 3 // 2 and t.is_alive():  # half of the run's 3 calls a case
            t.join(0.01)
        flag.stop("cancelled")
        t.join(30)
        assert not t.is_alive()
    rr = build_report(store, eng.run_id)
    judged = len(rr.report["cases"])
    assert rr.run["status"] == "cancelled"
    assert N // 4 <= judged < N  # most calls made so far were whole cases: judged, and kept
    assert rr.failed == [] and len(rr.not_run) == N - judged  # the rest are not run, never errors
    assert rr.incomplete() == f"cancelled: {judged} of {N} judged, {N - judged} not run"
    assert exit_code(rr) == 3 and not rr.passed  # incomplete: no gate passes on part of a set
