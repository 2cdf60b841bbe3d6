"""The loopback OpenAI-compatible server: its HTTP shape, fault injection, and abeq's real call path."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from abeq.models import scripted
from abeq.models.scripted import rules as scripted_rules
from abeq.prompts import load_prompt, messages
from abeq.schemas import JudgeReply
from abeq.testing.loopback import LoopbackServer

HELLO = {"model": "scripted", "messages": [{"role": "user", "content": "hello"}]}


def judge_messages() -> list[dict]:
    run = json.dumps(
        scripted_rules.run_rules({"document": "# Steps\n- write a summary\n- add a title", "case_input": "x"})
    )
    return messages(
        load_prompt("equivalence-judge"), [("case_input", "x"), ("original_run", run), ("candidate_run", run)]
    )


async def post_all(url: str, bodies: list[dict], path: str = "/chat/completions") -> list[tuple[int, dict]]:
    async with aiohttp.ClientSession() as s:
        out = []
        for b in bodies:
            async with s.post(url + path, json=b) as r:
                out.append((r.status, await r.json()))
        return out


@pytest.fixture(autouse=True)
def _clean_scripted():
    scripted.forget()
    yield
    scripted.forget()


def test_openai_shape_and_endpoints():
    body = {
        **HELLO,
        "messages": judge_messages(),
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "JudgeReply", "schema": JudgeReply.model_json_schema()},
        },
    }
    with LoopbackServer() as srv:
        assert srv.url.startswith("http://127.0.0.1:") and srv.url.endswith("/v1")
        [(status, out)] = asyncio.run(post_all(srv.url, [body]))
        assert status == 200
        assert (
            out["object"] == "chat.completion" and out["id"] and out["created"] and out["model"] == "scripted"
        )
        choice = out["choices"][0]
        assert choice["finish_reason"] == "stop" and choice["message"]["role"] == "assistant"
        assert JudgeReply.model_validate_json(choice["message"]["content"]).verdict == "equivalent"
        u = out["usage"]
        assert u["prompt_tokens"] > 0 and u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
        assert scripted.model("scripted").history[-1]["schema"] == JudgeReply.model_json_schema()

        root = srv.url[: -len("/v1")]
        [(s1, _)] = asyncio.run(post_all(root, [HELLO]))  # the unversioned path too
        [(s2, err)] = asyncio.run(post_all(srv.url, [{**HELLO, "stream": True}]))
        assert s1 == 200 and s2 == 400 and err["error"]["type"] == "invalid_request_error"

        async def gets():
            async with aiohttp.ClientSession() as s:
                return [await (await s.get(root + p)).json() for p in ("/v1/models", "/health", "/stats")]

        models, health, stats = asyncio.run(gets())
        assert models["data"][0]["id"] == "scripted" and health == {"status": "ok"}
        assert (
            stats == srv.stats and stats["requests"] == 3 and stats["ok"] == 2 and stats["bad_request"] == 1
        )


def test_fail_rate_one_gives_429_and_500():
    with LoopbackServer(fail_rate=1.0) as srv:
        res = asyncio.run(post_all(srv.url, [HELLO] * 4))
        assert [s for s, _ in res] == [429, 500, 429, 500]
        assert all("error" in b for _, b in res)
        assert srv.stats["fail_429"] == 2 and srv.stats["fail_500"] == 2 and srv.stats["ok"] == 0


def test_faults_are_deterministic_per_seed_and_malformed_needs_a_schema():
    rf = {"type": "json_object"}
    bodies = [{**HELLO, "response_format": rf}] * 30

    def outcomes(seed):
        with LoopbackServer(fail_rate=0.3, malformed_rate=0.3, seed=seed) as srv:
            res = asyncio.run(post_all(srv.url, bodies))
            counts = {
                k: v for k, v in srv.stats.items() if not k.endswith("_at")
            }  # timestamps differ per run
            return [s if s != 200 else b["choices"][0]["message"]["content"][:12] for s, b in res], counts

    a, stats = outcomes(7)
    assert (a, stats) == outcomes(7)
    assert stats["malformed"] > 0 and stats["fail_429"] + stats["fail_500"] > 0
    with LoopbackServer(malformed_rate=1.0) as srv:
        [(_, plain)] = asyncio.run(post_all(srv.url, [HELLO]))  # no response_format: left alone
        [(_, bad)] = asyncio.run(post_all(srv.url, [{**HELLO, "response_format": rf}]))
        json.loads(plain["choices"][0]["message"]["content"])
        with pytest.raises(json.JSONDecodeError):
            json.loads(bad["choices"][0]["message"]["content"])


def test_hang_is_a_request_that_never_answers():
    with LoopbackServer(hang_rate=1.0) as srv:

        async def one():
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=0.3)) as s:
                await s.post(srv.url + "/chat/completions", json=HELLO)

        with pytest.raises(asyncio.TimeoutError):
            asyncio.run(one())
        assert srv.stats["hang"] == 1
    # leaving the with-block above did not wait for the hung handler


def test_through_abeqs_real_call_path():
    from abeq.models import CallPolicy, ModelSpec, complete

    msgs = judge_messages()
    with LoopbackServer() as srv:
        spec = ModelSpec(name="openai/scripted", api_base=srv.url)
        c = asyncio.run(complete(spec, msgs, response_model=JudgeReply))
        assert JudgeReply.model_validate_json(c.text).verdict == "equivalent"
        assert c.attempts == 1 and c.prompt_tokens > 0 and srv.stats["ok"] == 1

    with LoopbackServer(fail_rate=0.5, seed=3) as srv:
        spec = ModelSpec(name="openai/scripted", api_base=srv.url)
        policy = CallPolicy(max_retries=6, backoff_base=0.01)

        async def many():
            return await asyncio.gather(*(complete(spec, msgs, JudgeReply, policy) for _ in range(8)))

        done = asyncio.run(many())
        assert all(JudgeReply.model_validate_json(c.text).verdict == "equivalent" for c in done)
        st = srv.stats
        failures = st["fail_429"] + st["fail_500"]
        assert failures > 0 and st["ok"] == 8
        # every retry is one of ours: litellm/openai made no hidden retries of their own
        assert sum(c.attempts for c in done) == st["requests"] == 8 + failures


def test_stats_stamp_the_first_request_and_the_last_answer_and_reset_clears_them():
    import time

    with LoopbackServer(latency=0.05) as srv:
        assert srv.stats["first_request_at"] is None and srv.stats["last_response_at"] is None
        t0 = time.time()
        asyncio.run(post_all(srv.url, [HELLO] * 2))  # one after the other: two latencies apart
        st = srv.stats
        assert t0 <= st["first_request_at"] and st["last_response_at"] - st["first_request_at"] >= 0.1

        async def reset():
            async with aiohttp.ClientSession() as s:
                return await (await s.post(srv.url[: -len("/v1")] + "/reset")).json()

        after = asyncio.run(reset())
        assert after["requests"] == 0 and after["first_request_at"] is None
