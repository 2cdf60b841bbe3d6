"""Obeying the provider: Retry-After (seconds or an HTTP date) and rate-limit headers on 429 and 503,
on both transports, measured at the server; an AIMD concurrency window; calls in case order."""

import asyncio
import email.utils
import time

import pytest

from abeq.cli import main
from abeq.execution.engine import Engine, RunConfig
from abeq.models import ModelSpec
from abeq.models.ratelimit import PRIORITY, Limiter, retry_after
from abeq.results.reports.report import build_report
from abeq.testing.anthropic import AnthropicServer
from abeq.testing.loopback import LoopbackServer
from abeq.testing.synthetic import example_run_args


def test_the_wait_a_server_asks_for_in_every_form_it_says_it():
    now = 1_000_000.0
    assert retry_after({"Retry-After": "2"}, now) == 2.0
    assert retry_after({"retry-after": "1.5"}, now) == 1.5
    date = email.utils.formatdate(now + 3, usegmt=True)
    assert retry_after({"Retry-After": date}, now) == pytest.approx(3.0)
    assert retry_after({"Retry-After": email.utils.formatdate(now - 9, usegmt=True)}, now) == 0.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}, now) == 0.25
    # no Retry-After: the reset of a rate-limit budget that is used up
    openai = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30s"}
    assert retry_after(openai, now) == 90.0
    assert retry_after({**openai, "x-ratelimit-remaining-requests": "12"}, now) is None
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 4))
    anthropic = {"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": at}
    assert retry_after(anthropic, now) == pytest.approx(4.0)
    assert retry_after({"Retry-After": "soon"}, now) is None and retry_after(None) is None


def retries_after_failures(timeline) -> list[float]:
    """For each answered 429/503, seconds from that answer to the same call's next request arriving."""
    gaps = []
    for i, (_, answered, digest, status) in enumerate(timeline):
        if status in (429, 503):
            nxt = next((t for t in timeline[i + 1 :] if t[2] == digest), None)
            if nxt:
                gaps.append(nxt[0] - answered)
    return gaps


@pytest.mark.parametrize("transport", ["fast", "litellm"])
def test_no_retry_comes_back_before_the_servers_retry_after(store, example, monkeypatch, transport):
    monkeypatch.setenv("ABEQ_TRANSPORT", transport)
    with LoopbackServer(fail_rate=0.15, seed=4, retry_after="2", error_status=503) as srv:
        spec = ModelSpec("openai/scripted", api_base=srv.url)
        cfg = RunConfig(runner=spec, judge=spec, concurrency=4, max_retries=6)
        rr = build_report(
            store, Engine(store, example["original"], example["lossy"], example["ts"], cfg).run()
        )
        timeline, st = list(srv.timeline), srv.stats
    assert rr.errors == [] and rr.report["summary"]["regressions"] == 7
    gaps = retries_after_failures(timeline)
    assert st["fail_429"] and st["fail_500"] and len(gaps) == st["fail_429"] + st["fail_500"]
    assert min(gaps) >= 2.0, gaps


def test_an_http_date_retry_after_through_litellms_anthropic_route(store, example, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    named: list[tuple[float, float]] = []  # (when the header was made, the moment it names)

    def two_seconds_from_now() -> str:
        now = time.time()
        date = email.utils.formatdate(now + 2, usegmt=True)  # whole seconds: 1 to 2 s away
        named.append((now, email.utils.parsedate_to_datetime(date).timestamp()))
        return date

    with AnthropicServer(fail_rate=0.3, seed=2, retry_after=two_seconds_from_now, error_status=503) as srv:
        spec = ModelSpec("anthropic/claude-haiku-4-5", api_base=srv.url)
        cfg = RunConfig(runner=spec, judge=spec, concurrency=4, max_retries=6)
        rr = build_report(
            store, Engine(store, example["original"], example["lossy"], example["ts"], cfg).run()
        )
        timeline = list(srv.timeline)
    assert rr.errors == [] and rr.report["summary"]["regressions"] == 7
    failed = [t for t in timeline if t[3] in (429, 503)]
    assert failed and len(named) == len(failed)
    for _, answered, digest, _ in failed:
        retry = next(t for t in timeline if t[2] == digest and t[0] > answered)
        date = [at for made, at in named if made <= answered][-1]  # the header this answer carried
        assert retry[0] >= date, (retry[0], date)  # the retry came no sooner than the moment it named


def test_the_window_halves_on_429s_and_grows_back_as_calls_succeed():
    async def go():
        lim = Limiter(8)
        ep = lim.endpoint("openai@x")
        lim.failed("openai@x", 429, None)
        assert ep.window == 4 and "concurrency 4/8" in lim.notice()
        lim.failed("openai@x", 429, None)  # the same burst (within the cool-down): no second cut
        assert ep.window == 4
        ep.cut_until = 0  # the cool-down is over: a 429 now is news
        lim.failed("openai@x", 429, None)
        assert ep.window == 2
        for _ in range(2 + 3 + 4 + 5 + 6 + 7):  # one more slot per window's worth of successes
            lim.succeeded("openai@x")
        assert ep.window == 8 and lim.notice() == ""
        lim.failed("openai@x", 500, None)  # a server error is not a rate limit
        assert ep.window == 8

    asyncio.run(go())


def test_a_retry_after_holds_every_call_to_that_endpoint_and_no_other():
    async def go():
        lim = Limiter(4)
        loop = asyncio.get_running_loop()
        lim.failed("anthropic@", 429, 0.3)
        t0 = loop.time()
        async with lim.slot("openai@"):  # another provider is not held
            assert loop.time() - t0 < 0.2
        async with lim.slot("anthropic@"):
            assert loop.time() - t0 >= 0.3
        assert "waiting" not in lim.notice()

    asyncio.run(go())


def test_free_slots_go_to_the_earliest_case_first():
    async def go():
        lim, order = Limiter(1), []

        async def call(case: int):
            PRIORITY.set(case)
            async with lim.slot("x"):
                order.append(case)
                await asyncio.sleep(0)

        async with lim.slot("x"):  # hold the only slot while later cases queue before earlier ones
            tasks = [asyncio.create_task(call(c)) for c in (5, 3, 9, 0)]
            await asyncio.sleep(0.01)
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(go()) == [0, 3, 5, 9]


def test_the_progress_line_says_when_the_provider_holds_the_run_back(tmp_path, capsys, example):
    from conftest import EXAMPLE

    with LoopbackServer(fail_rate=0.4, seed=1, retry_after="1") as srv:
        args = example_run_args(EXAMPLE / "transfer-set.json", tmp_path / "a.db", srv.url, quiet=False)
        code = main([*args, "--confirm", "--out", str(tmp_path / "r.json"), "--max-retries", "8"])
    err = capsys.readouterr().err
    assert code == 0
    assert "openai rate-limited (" in err and "waiting 1 s as asked (Retry-After)" in err


def test_a_reply_that_says_the_budget_is_used_up_holds_the_next_call_until_it_resets():
    async def go():
        lim, loop = Limiter(4), asyncio.get_running_loop()
        pause = retry_after({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "300ms"})
        async with lim.slot("openai@"):
            pass
        lim.succeeded("openai@", pause)
        t0 = loop.time()
        async with lim.slot("openai@"):
            return loop.time() - t0

    assert asyncio.run(go()) >= 0.3


def test_a_successful_reply_over_the_lean_transport_that_says_the_budget_is_used_up_pauses_the_endpoint():
    """The headers read after a success are the reply's (they were the request's: never a budget)."""
    from aiohttp import web

    from abeq.models.call import CallPolicy, complete
    from abeq.models.ratelimit import endpoint_of

    async def reply(request):
        body = {"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": {}}
        limits = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "30s"}
        return web.json_response(body, headers=limits)

    async def go():
        app = web.Application()
        app.router.add_post("/v1/chat/completions", reply)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        try:
            spec = ModelSpec(name="openai/budget", api_base=f"http://127.0.0.1:{port}/v1")
            lim = Limiter(4)
            out = await complete(spec, [{"role": "user", "content": "x"}], policy=CallPolicy(semaphore=lim))
            return out.text, lim.endpoint(endpoint_of(spec)).not_before - asyncio.get_running_loop().time()
        finally:
            await runner.cleanup()

    text, held_for = asyncio.run(go())
    assert text == "hi" and 25 < held_for <= 30  # the next call to that endpoint waits for the reset
