"""report.json keeps the published schema: real reports (the bundled example run on the scripted model,
written as `abeq run --out` and the desk's download write them: with an override and an agreement, a
gate truncation, an error, --fail-fast, --runner-samples) validate against `abeq.schemas.ReportFile`'s
JSON schema, every object of it closed (`additionalProperties: false`). tests/test_cli.py validates
the file `abeq run --out` writes against it too."""

import json

import jsonschema
import pytest
from test_record_shape import failed_chat_record, stopped_record
from test_runner_samples import kept
from test_runner_samples import run as sampled_run

from abeq.execution.engine import Engine
from abeq.results.reports.exports import render
from abeq.results.reports.report import build_report
from abeq.results.review.reviewing import record
from abeq.schemas import ReportFile


def closed(schema: dict) -> list[str]:
    """The objects of a JSON schema that would take a key it does not declare."""
    objects = [schema, *schema.get("$defs", {}).values()]
    return [
        o.get("title", "?")
        for o in objects
        if "properties" in o and o.get("additionalProperties") is not False
    ]


SCHEMA = ReportFile.model_json_schema(by_alias=True)


def valid(report: dict) -> dict:
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    return report


def reviewed(store, example, scripted_cfg) -> dict:
    run_id = Engine(store, example["original"], example["lossy"], example["ts"], scripted_cfg()).run()
    record(store, run_id, "happy-1", action="override", reviewer="ann", verdict="equivalent", reason="n/a")
    record(store, run_id, "edge-1", action="agree", reviewer="bob")
    return json.loads(render(store, build_report(store, run_id), "out"))


def truncated(store, example, scripted_cfg) -> dict:
    run_id = Engine(store, example["original"], example["faithful"], example["ts"], scripted_cfg()).run()
    return json.loads(render(store, build_report(store, run_id), "out"))


def undecided(store, example, scripted_cfg) -> dict:
    rr, _ = sampled_run(store, example, kept(example, 1, 2), 2)  # 2 samples: nothing can be called lost
    return json.loads(render(store, rr, "out"))


def report_of_record(make):
    """The report of a run test_record_shape makes (its record is rendered; the report is read back)."""

    def report(store, example, scripted_cfg) -> dict:
        make(store, example, scripted_cfg)
        run_id = store.log.runs()[0]["id"]
        return json.loads(render(store, build_report(store, run_id), "out"))

    return report


RUNS = {
    "reviewed": reviewed,
    "truncated": truncated,
    "errored": report_of_record(failed_chat_record),
    "stopped": report_of_record(stopped_record),
    "sampled": undecided,
}


def test_the_schema_is_closed_everywhere():
    assert closed(SCHEMA) == []
    assert {"cases", "summary"} <= set(SCHEMA["required"])  # the report's own keys stay required


def test_real_reports_validate_with_nothing_undeclared(tmp_path, example, scripted_cfg):
    from abeq.models import scripted
    from abeq.results.store.store import Store

    reports = {}
    for name, make in RUNS.items():
        store = Store(str(tmp_path / f"{name}.db"))
        try:
            reports[name] = valid(make(store, example, scripted_cfg))
        finally:
            store.close()
            scripted.forget()  # a handler one run set is not the next run's
    # every declared key is one a real report writes, and each run wrote what it is for
    assert set().union(*(r.keys() for r in reports.values())) == set(SCHEMA["properties"])
    assert reports["errored"]["errors"] and reports["truncated"]["gate_truncated"]
    assert reports["stopped"]["stopped_early"]["not_run"] and reports["sampled"]["undecided"]
    assert reports["reviewed"]["overrides"][0]["reason"] == "n/a" and reports["reviewed"]["agreements"]
    with pytest.raises(jsonschema.ValidationError, match="Additional properties"):
        valid({**reports["reviewed"], "reviewed_by": "ann"})  # a key nobody declared is refused
