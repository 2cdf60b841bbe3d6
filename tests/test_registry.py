"""The provider registry: what abeq knows about a model-string prefix comes from one entry."""

from dataclasses import replace

import pytest

from abeq.models import ModelSpec, default_max_tokens, model_problem, price, provider_for, registry


def test_known_prefixes_and_litellm_for_the_rest():
    assert provider_for("local/smollm2").in_process and provider_for("scripted/rules").in_process
    assert provider_for("openai/gpt-4o-mini").fast_http and provider_for("hosted_vllm/qwen").fast_http
    # served by litellm like any provider abeq has no entry for; abeq only marks its cache prefix
    anthropic = provider_for("anthropic/claude-3-5-haiku-latest")
    assert anthropic.cache_marks and replace(anthropic, prefix="", cache_marks=False) == registry.LITELLM
    assert provider_for("gpt-4o-mini") is registry.LITELLM


def test_reply_limits_come_from_the_provider_per_purpose():
    assert [default_max_tokens("local/smollm2", p) for p in ("run", "draft", "compare")] == [700, 1200, 900]
    assert [default_max_tokens("openai/x", p) for p in ("run", "draft", "compare")] == [2048, 4096, 2048]
    assert ModelSpec.for_purpose(None, "draft").max_tokens == 1200  # the default model is the embedded one


def test_in_process_models_take_no_api_base_and_cost_nothing():
    spec = ModelSpec(name="scripted/rules", api_base="http://127.0.0.1:9")
    assert spec.api_base is None and spec.is_local
    assert price("scripted/rules", 10_000, 10_000) == 0.0


def test_the_embedded_models_weights_are_in_its_cache_identity(tmp_path, monkeypatch):
    pytest.importorskip("llama_cpp")
    from abeq.models import local_weights

    monkeypatch.setenv("ABEQ_CACHE_DIR", str(tmp_path))
    for requantize, weights in (("1", "smollm2-135m-q8_0"), ("0", "smollm2-135m-q4_1")):
        monkeypatch.setenv("ABEQ_LOCAL_REQUANTIZE", requantize)
        local_weights.forget()
        sampling = ModelSpec(name="local/smollm2").sampling()
        assert sampling["weights"] == weights and sampling["provider"].startswith("local-v")
    local_weights.forget()
    assert "weights" not in ModelSpec(name="openai/x", api_base="http://h/v1").sampling()


def test_a_new_entry_changes_behaviour_everywhere(monkeypatch):
    toy = registry.Provider(
        prefix="toy",
        in_process=True,
        check=lambda rest: "" if rest == "ok" else "unknown toy",
        identity=lambda rest: {"toy": rest},
        max_tokens={"run": 7, "draft": 8, "compare": 9},
    )
    monkeypatch.setitem(registry.PROVIDERS, "toy", toy)
    spec = ModelSpec.for_purpose("toy/ok", "compare")
    assert spec.max_tokens == 9 and spec.is_local and spec.sampling()["toy"] == "ok"
    assert price("toy/ok", 1, 1) == 0.0
    assert model_problem("toy/ok") == "" and model_problem("toy/nope") == "unknown toy"
    assert provider_for("toy/ok") is toy and replace(toy, prefix="x").prefix == "x"
