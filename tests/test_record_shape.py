"""The run record and the comparator's schemas keep their shape: records written on the scripted
model, and the JSON schemas sent to the comparator model, against copies taken before they were
derived from models (tests/fixtures/record/). A new key may be added; an existing one keeps its
place, its name and its value."""

import json
import re

import pytest
from conftest import ROOT

from abeq.execution.engine import Engine
from abeq.execution.runners.modes import RunnerMode
from abeq.models import scripted
from abeq.results.reports.exports import render
from abeq.results.reports.report import build_report
from abeq.results.review.reviewing import record
from abeq.schemas import ComparatorReply, Comparison, ComparisonResult, RunRecord

FIXTURES = ROOT / "tests" / "fixtures" / "record"
TIME = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)?$")
KEY = re.compile(r"^[0-9a-f]{64}$")  # a cache key: it moves with any prompt's version


def normalised(value):
    """The record with its clock readings masked: everything else is what the run produced."""
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    if isinstance(value, str) and KEY.match(value):
        return "<key>"
    return "<time>" if isinstance(value, str) and TIME.match(value) else value


def kept(before, after, where="record"):
    """Every key of `before` is in `after`, in the same order, with the same value (recursively)."""
    if isinstance(before, dict):
        assert isinstance(after, dict), where
        assert [k for k in after if k in before] == list(before), f"{where}: keys missing or moved"
        for k, v in before.items():
            kept(v, after[k], f"{where}.{k}")
    elif isinstance(before, list):
        assert isinstance(after, list) and len(after) == len(before), where
        for i, (b, a) in enumerate(zip(before, after)):
            kept(b, a, f"{where}[{i}]")
    else:
        assert type(after) is type(before) and after == before, f"{where}: {before!r} became {after!r}"


def lossy_tools_record(store, example, scripted_cfg) -> str:
    cfg = scripted_cfg(judge_samples=3, aa=True, mode=RunnerMode(kind="tools"))
    run_id = Engine(store, example["original"], example["lossy"], example["ts"], cfg).run()
    record(store, run_id, "happy-1", action="override", reviewer="ann", verdict="equivalent", reason="n/a")
    record(store, run_id, "edge-1", action="agree", reviewer="bob")
    return render(store, build_report(store, run_id), "record", "directive-clarity")


def failed_chat_record(store, example, scripted_cfg) -> str:
    edge = next(c for c in example["ts"].cases if c.id == "edge-1").input

    def judge_fails_on_edge(model, messages, schema):  # one case ends errored, the rest judged
        user = "\n".join(str(m.get("content") or "") for m in messages)
        return "not json" if "original_run" in user and edge in user else None

    scripted.model("rules").handler = judge_fails_on_edge
    run_id = Engine(store, example["original"], example["faithful"], example["ts"], scripted_cfg()).run()
    return render(store, build_report(store, run_id), "record")


def stopped_record(store, example, scripted_cfg) -> str:
    cfg = scripted_cfg(fail_fast=True, concurrency=1)
    run_id = Engine(store, example["original"], example["lossy"], example["ts"], cfg).run()
    return render(store, build_report(store, run_id), "record")


def sampled_record(store, example, scripted_cfg) -> str:
    """--runner-samples 4 (issue 37): each case's samples, rates and decision."""
    from abeq.execution.settings import RunSettings

    settings = RunSettings(runner_model="scripted/rules", runner_samples=4)
    run_id = Engine(store, example["original"], example["lossy"], example["ts"], settings).run()
    return render(store, build_report(store, run_id), "record")


SCENARIOS = {
    "lossy-tools": lossy_tools_record,
    "failed-chat": failed_chat_record,
    "stopped": stopped_record,
    "sampled": sampled_record,
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_record_keeps_its_shape(store, example, scripted_cfg, name):
    text = SCENARIOS[name](store, example, scripted_cfg)
    before = json.loads((FIXTURES / f"{name}.json").read_text())
    kept(before, normalised(json.loads(text)), name)


@pytest.mark.parametrize("name", ["lossy-tools", "sampled"])
def test_a_record_reads_back_into_its_model_and_writes_the_same(store, example, scripted_cfg, name):
    text = SCENARIOS[name](store, example, scripted_cfg)
    again = RunRecord.model_validate_json(text).model_dump(mode="json", by_alias=True)
    assert json.dumps(again, indent=2, ensure_ascii=False) == text


def test_a_record_that_breaks_its_schema_is_not_written(store, example, scripted_cfg, monkeypatch):
    from abeq.results.reports import record as record_module

    real = record_module.gate_result
    monkeypatch.setattr(record_module, "gate_result", lambda *a: {**real(*a), "pass": "maybe"})
    with pytest.raises(ValueError, match="pass"):
        lossy_tools_record(store, example, scripted_cfg)


def test_the_comparator_schemas_keep_their_shape():
    before = json.loads((FIXTURES / "comparator-schemas.json").read_text())
    after = {m.__name__: m.model_json_schema() for m in (ComparatorReply, Comparison, ComparisonResult)}
    assert after == before
