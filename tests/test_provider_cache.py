"""Provider prompt caching: the runner prompt and the document are the same leading bytes of every
runner call for that document, marked for Anthropic and plain for OpenAI-style servers; the cache
reads and writes a provider reports are counted and priced at their own rates. Against a fake
endpoint of each kind, over real HTTP."""

import json

import pytest

from abeq.execution.engine import Engine, RunConfig
from abeq.execution.estimate import estimate
from abeq.execution.runners.runner import runner_messages
from abeq.models import ModelSpec
from abeq.models.call import call_kwargs
from abeq.models.pricing import price, register_price
from abeq.results.reports.record import run_record
from abeq.results.reports.report import build_report
from abeq.testing.anthropic import AnthropicServer
from abeq.testing.loopback import LoopbackServer
from abeq.testing.prompt_cache import PromptCache
from abeq.testing.synthetic import example_run_args

OPENAI_PRICE = {
    "input_cost_per_token": 1e-6,
    "output_cost_per_token": 2e-6,
    "cache_read_input_token_cost": 1e-7,  # a tenth of the input price
}


def run(store, example, spec, concurrency=1):
    cfg = RunConfig(runner=spec, judge=spec, concurrency=concurrency)
    eng = Engine(store, example["original"], example["lossy"], example["ts"], cfg)
    est = estimate(eng)
    run_id = eng.run()
    return run_id, est


def calls(store, run_id):
    return store.sql.all("select * from calls where run_id = ? and cached = 0 order by id", [run_id])


def test_the_document_prefix_is_identical_first_and_marked(example):
    case_a, case_b = example["ts"].cases[:2]
    a = runner_messages(example["original"].text, case_a, "skill")
    b = runner_messages(example["original"].text, case_b, "skill")
    assert a[0] == b[0] and a[0]["role"] == "system"
    head_a, head_b = a[1]["content"][0], b[1]["content"][0]
    assert head_a == head_b and head_a["cache_control"] == {"type": "ephemeral"}
    assert example["original"].text in head_a["text"] and case_a.input not in head_a["text"]


@pytest.mark.parametrize("transport", ["fast", "litellm"])
@pytest.mark.parametrize("model", ["openai/cachetest", "hosted_vllm/cachetest", "ollama_chat/llama3"])
def test_openai_style_and_other_endpoints_never_get_cache_control(example, monkeypatch, transport, model):
    monkeypatch.setenv("ABEQ_TRANSPORT", transport)
    msgs = runner_messages(example["original"].text, example["ts"].cases[0], "skill")
    spec = ModelSpec(model, api_base="http://127.0.0.1:9/v1")
    kw = call_kwargs(spec, msgs, fast=transport == "fast")
    assert "cache_control" not in json.dumps(kw) and all(
        isinstance(m["content"], str) for m in kw["messages"]
    )
    # the same bytes as the marked messages, joined
    assert kw["messages"][1]["content"] == "".join(p["text"] for p in msgs[1]["content"])
    anthropic = call_kwargs(ModelSpec("anthropic/claude-haiku-4-5"), msgs, fast=False)
    assert json.dumps(anthropic).count("cache_control") == 1


@pytest.mark.parametrize("transport", ["fast", "litellm"])
def test_openai_style_cached_tokens_are_counted_and_priced_at_the_cache_rate(
    store, example, monkeypatch, transport
):
    monkeypatch.setenv("ABEQ_TRANSPORT", transport)
    register_price("openai/cachetest", OPENAI_PRICE)
    with LoopbackServer(prompt_cache=PromptCache(min_tokens=1024, block=128)) as srv:
        run_id, est = run(store, example, ModelSpec("openai/cachetest", api_base=srv.url))
    rows = calls(store, run_id)
    teacher = [r for r in rows if r["kind"] == "runner-teacher"]
    # the first call of a document writes the prefix (free on OpenAI), every later one reads it
    assert teacher[0]["cache_read_tokens"] == 0 and all(r["cache_read_tokens"] >= 1024 for r in teacher[1:])
    assert all(r["cache_write_tokens"] == 0 for r in rows)
    for r in rows:
        want = price(
            "openai/cachetest", r["prompt_tokens"], r["completion_tokens"], cache_read=r["cache_read_tokens"]
        )
        assert r["cost"] == pytest.approx(want, rel=1e-9)
        assert r["cache_saved"] == pytest.approx(r["cache_read_tokens"] * (1e-6 - 1e-7), rel=1e-9)
    st = store.log.call_stats(run_id)
    assert st["cache_read_tokens"] == sum(r["cache_read_tokens"] for r in rows) > 0
    assert st["cache_saved"] == pytest.approx(st["cache_read_tokens"] * 9e-7)
    rec = run_record(store, build_report(store, run_id))["run"]
    assert rec["cache_read_tokens"] == st["cache_read_tokens"] and rec["cache_saved"] == pytest.approx(
        st["cache_saved"]
    )
    # the estimate said caching would serve the documents' prefixes after their first call
    assert est["est_cache_read_tokens"] > 0 and est["est_cache_saved"] > 0


def test_anthropic_cache_reads_and_writes_through_litellm_are_counted_at_their_own_rates(
    store, example, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    with AnthropicServer(prompt_cache=PromptCache(min_tokens=1024)) as srv:
        run_id, _ = run(store, example, ModelSpec("anthropic/claude-haiku-4-5", api_base=srv.url))
        sent = list(srv.requests)
    rr = build_report(store, run_id)
    assert rr.report["summary"]["regressions"] == 7  # the scripted answers came back through litellm
    runner_bodies = [b for b in sent if "test runner" in json.dumps(b.get("system"))]
    assert len(runner_bodies) == 14
    for b in runner_bodies:  # the mark sits on the document block, after the system prompt
        first = b["messages"][0]["content"][0]
        assert first["cache_control"] == {"type": "ephemeral"} and '<data name="document">' in first["text"]
    rows = calls(store, run_id)
    runner = [r for r in rows if r["kind"].startswith("runner")]
    # one write per document (teacher, candidate), then reads; the judge has no mark and no cache
    assert sum(1 for r in runner if r["cache_write_tokens"]) == 2
    assert sum(1 for r in runner if r["cache_read_tokens"]) == 12
    assert all(r["cache_read_tokens"] == r["cache_write_tokens"] == 0 for r in rows if r["kind"] == "judge")
    rates = (1e-6, 5e-6, 1e-7, 1.25e-6)  # litellm's list: input, output, cache read, cache write
    for r in rows:
        plain = r["prompt_tokens"] - r["cache_read_tokens"] - r["cache_write_tokens"]
        want = (
            plain * rates[0]
            + r["completion_tokens"] * rates[1]
            + r["cache_read_tokens"] * rates[2]
            + r["cache_write_tokens"] * rates[3]
        )
        assert r["cost"] == pytest.approx(want, rel=1e-6)
        full = r["prompt_tokens"] * rates[0] + r["completion_tokens"] * rates[1]
        assert r["cache_saved"] == pytest.approx(full - want, rel=1e-6, abs=1e-12)
    st = store.log.call_stats(run_id)
    assert st["cache_write_tokens"] > 0 and st["cache_saved"] > 0  # twelve reads outweigh two writes


def test_the_cli_says_what_the_cache_could_save_and_what_it_saved(tmp_path, capsys):
    from conftest import EXAMPLE

    from abeq.cli import main

    register_price("openai/cachetest", OPENAI_PRICE)
    with LoopbackServer(prompt_cache=True) as srv:
        ts, db = EXAMPLE / "transfer-set.json", tmp_path / "a.db"
        args = example_run_args(ts, db, srv.url, quiet=False, model="openai/cachetest")
        code = main([*args, "--confirm", "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 0
    assert "the provider's prompt cache could serve up to" in err and "saving up to ~$" in err
    line = next(x for x in err.splitlines() if x.startswith("provider prompt cache: "))
    assert "prompt tokens read from it" in line and "saving $0.0" in line
