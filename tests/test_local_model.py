"""The real embedded model (SmolLM2-135M through llama.cpp), through the same path as any model."""

import json

import pytest

from abeq import transferset
from abeq.engine import Engine, RunConfig
from abeq.models import ModelSpec
from abeq.providers import local
from abeq.report import build_report
from abeq.schemas import Report

pytestmark = pytest.mark.slow


def test_embedded_model_runs_a_small_set_and_the_report_validates(store, example):
    thin = example["ts"].model_copy(update={"cases": example["ts"].cases[:2]})
    spec = ModelSpec(name="local/smollm2", max_tokens=600)
    eng = Engine(store, example["original"], example["lossy"], thin,
                 RunConfig(runner=spec, judge=spec, allow_thin=True, concurrency=2))
    rr = build_report(store, eng.run())
    Report.model_validate(rr.report)
    # Every case ends judged or errored, never silently equivalent; and the model loaded once.
    assert len(rr.report["cases"]) + len(rr.errors) == 2
    for c in rr.report["cases"]:
        assert c["verdict"] in ("equivalent", "candidate-regressed", "candidate-diverged")
        assert (c["behaviour_delta"] == "") == (c["verdict"] == "equivalent")
    assert local.LOAD_COUNT["n"] == 1
    costs = store.all("select cost from calls where cached = 0 and ok = 1")
    assert costs and all(r["cost"] == 0.0 for r in costs)


def test_local_path_to_a_gguf_file_loads_it(tmp_path):
    import asyncio

    from abeq.models import complete

    path = local.smollm2_path()
    spec = ModelSpec(name=f"local/{path}", max_tokens=8)
    out = asyncio.run(complete(spec, [{"role": "user", "content": "Say hi."}]))
    assert out.text and out.completion_tokens > 0 and out.cost == 0.0


def test_unknown_local_model_is_a_clear_error():
    import asyncio

    from abeq.errors import ModelCallError
    from abeq.models import complete

    with pytest.raises(ModelCallError, match="not a known embedded model"):
        asyncio.run(complete(ModelSpec(name="local/nope"), [{"role": "user", "content": "x"}]))
