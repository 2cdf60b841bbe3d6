"""Prices: litellm's offline list, read without importing litellm; each side at its own model's price."""

import subprocess
import sys

import pytest

from abeq.execution.engine import Engine, RunConfig
from abeq.execution.estimate import estimate
from abeq.models import ModelSpec, price
from abeq.models.bootstrap import litellm
from abeq.models.pricing import cost_map


def test_the_price_list_is_litellms_own_and_needs_no_import():
    code = (
        "import sys; from abeq.models import price; p = price('gpt-4o-mini', 1000, 1000); "
        "print(p, 'litellm' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert float(out[0]) > 0 and out[1] == "False"
    ll = litellm()
    for model in ("gpt-4o-mini", "claude-haiku-4-5", "openai/gpt-4o"):
        info = ll.model_cost.get(model) or ll.model_cost[model.split("/", 1)[-1]]
        want = 1000 * info["input_cost_per_token"] + 500 * info["output_cost_per_token"]
        assert price(model, 1000, 500) == pytest.approx(want)
    assert cost_map() is ll.model_cost  # once litellm is loaded, its (possibly user-extended) table


def test_unknown_and_builtin_models():
    assert price("openai/my-own-llama", 10, 10) is None
    assert price("local/smollm2", 10**6, 10**6) == 0.0 and price("scripted/rules", 5, 5) == 0.0


def test_the_estimate_prices_runner_and_judge_separately(store, example):
    def est(runner, judge):
        cfg = RunConfig(runner=ModelSpec(runner), judge=ModelSpec(judge))
        return estimate(Engine(store, example["original"], example["lossy"], example["ts"], cfg))

    free_runner = est("scripted/rules", "gpt-4o-mini")
    assert free_runner["est_cost"] > 0  # the judge's tokens are priced at the judge's rate
    assert est("gpt-4o-mini", "scripted/rules")["est_cost"] > 0
    assert est("gpt-4o-mini", "openai/my-own-llama")["est_cost"] is None  # unknown for one side: unknown
    both = est("gpt-4o-mini", "gpt-4o-mini")["est_cost"]
    assert both == round(free_runner["est_cost"] + est("gpt-4o-mini", "scripted/rules")["est_cost"], 6)


def test_a_provider_without_seed_gets_the_call_without_it(monkeypatch):
    """Anthropic has no `seed`: litellm refused every call before it left the machine."""
    import asyncio
    import socket

    from abeq.errors import ModelCallError
    from abeq.models import CallPolicy, ModelSpec, complete

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: the call must get as far as connecting
    spec = ModelSpec("anthropic/claude-3-5-haiku-20241022", api_base=f"http://127.0.0.1:{port}", timeout=5)
    with pytest.raises(ModelCallError) as e:
        asyncio.run(complete(spec, [{"role": "user", "content": "hi"}], policy=CallPolicy(max_retries=0)))
    assert "UnsupportedParams" not in str(e.value) and "seed" not in str(e.value)
