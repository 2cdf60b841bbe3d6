"""Checks on both arms in real runs (scripted model, sqlite, the CLI): the verdict rule, the record,
the grader call, errors, the cache, the exports and the trust figures."""

import csv
import io
import json
from xml.etree import ElementTree as ET

import pytest
from conftest import EXAMPLE, run_argv, with_cases

from abeq.cli import main
from abeq.desk import queries
from abeq.execution.checks.grading import blind_order
from abeq.execution.engine import Engine
from abeq.execution.estimate import estimate
from abeq.models import scripted
from abeq.models.scripted import rules as scripted_rules
from abeq.results.reports.agreement import check_witness
from abeq.results.reports.exports import markdown, to_csv, to_junit
from abeq.results.reports.report import build_report, exit_code
from abeq.schemas import Report
from abeq.sets import dump, load

# the teacher's wording of a rule the faithful candidate keeps in other words: the judge (rightly)
# calls the runs equivalent, and this check, which the teacher passes, fails on the candidate
WORDING = {"type": "contains", "value": "Write each entry as one past-tense sentence", "target": "transcript"}
NEVER = {"type": "contains", "value": "zebra crossing"}  # no run ever writes this
TICKETS = {"type": "llm-rubric", "value": "Strips internal ticket ids", "target": "transcript"}


def checked_set(tmp_path, checks: dict[str, list], expectations: dict[str, list] | None = None):
    """The example's set with checks added to some cases, written to a file."""
    ts = load(EXAMPLE / "transfer-set.json")
    cases = [
        add(
            c,
            assertions=[*c.model_dump()["assertions"], *checks.get(c.id, [])],
            expectations=(expectations or {}).get(c.id, []),
        )
        for c in ts.cases
    ]
    path = tmp_path / "set.json"
    path.write_text(dump(ts.model_copy(update={"cases": cases})))
    return path


def add(case, **fields):
    """The case with these fields set (validated, as a loaded set would be)."""
    return type(case).model_validate({**case.model_dump(), **fields})


def cli(tmp_path, set_path, candidate="candidate-faithful.md", *extra):
    out = {"out": tmp_path / "report.json", "record": tmp_path / "record.json"}
    return main(run_argv(*extra, db=tmp_path / "abeq.db", candidate=candidate, transfer_set=set_path, **out))


def outputs(tmp_path):
    return json.loads((tmp_path / "report.json").read_text()), json.loads(
        (tmp_path / "record.json").read_text()
    )


def test_a_lost_check_regresses_the_case_whatever_the_judge_said(tmp_path):
    code = cli(tmp_path, checked_set(tmp_path, {"happy-1": [WORDING]}))
    report, record = outputs(tmp_path)
    assert code == 1
    Report.model_validate({k: report[k] for k in ("cases", "summary")})  # the report's shape, unchanged
    case = next(c for c in report["cases"] if c["case_id"] == "happy-1")
    assert case["verdict"] == "candidate-regressed"
    assert case["behaviour_delta"] == (
        'check failed on candidate: contains "Write each entry as one past-tense sentence" on the transcript'
    )
    assert report["summary"] == {"pass": False, "regressions": 1, "divergences": 0, "equivalents": 6}
    rec = next(c for c in record["cases"] if c["case_id"] == "happy-1")
    assert rec["judge_verdict"] == "equivalent" and rec["uncertain"] and rec["checks_disagree_with_judge"]
    lost = next(c for c in rec["checks"] if c["type"] == "contains")
    assert (lost["teacher"], lost["candidate"], lost["outcome"]) == (True, False, "lost")
    assert "past-tense" in lost["teacher_evidence"] and "not found" in lost["candidate_evidence"]


def test_a_check_failing_on_both_arms_leaves_the_verdict_alone(tmp_path):
    assert cli(tmp_path, checked_set(tmp_path, {"happy-1": [NEVER]})) == 0
    report, record = outputs(tmp_path)
    assert report["summary"]["equivalents"] == 7
    rec = next(c for c in record["cases"] if c["case_id"] == "happy-1")
    assert [(c["label"], c["outcome"]) for c in rec["checks"]] == [
        ('not-regex "\\b(?!CVE-)[A-Z][A-Z0-9]+-[0-9]+\\b"', "kept"),  # the example's own check
        ('contains "zebra crossing"', "failed-both"),
    ]
    assert not rec["uncertain"] and record["run"]["checks"]["failed_both"] == 1


def test_the_record_lists_every_check_on_both_arms(tmp_path):
    hook = {"type": "webhook", "value": "https://example.test/grade"}
    cli(
        tmp_path, checked_set(tmp_path, {"edge-1": [WORDING, NEVER, hook]}, {"edge-1": ["Strips ticket ids"]})
    )
    _, record = outputs(tmp_path)
    rec = next(c for c in record["cases"] if c["case_id"] == "edge-1")
    assert [c["outcome"] for c in rec["checks"]] == ["kept", "lost", "failed-both", "skipped", "kept"]
    skipped = rec["checks"][3]
    assert skipped["teacher"] is None and "web service" in skipped["reason"]
    graded = rec["checks"][4]
    assert graded["kind"] == "model" and graded["shown_as_a"] in ("teacher", "candidate")
    assert all(
        c["teacher_evidence"] and c["candidate_evidence"] for c in rec["checks"] if c["kind"] != "skipped"
    )
    assert record["run"]["checks"]["cases_with_checks"] == 6 and "check-grader@1" in str(
        record["run"]["prompts"]
    )


def test_natural_language_checks_cost_one_blind_call_per_case(store, example, scripted_cfg):
    ts = with_cases(
        example,
        [add(c, assertions=[TICKETS]) if c.id in ("happy-1", "edge-1") else c for c in example["ts"].cases],
    )
    eng = Engine(store, example["original"], example["lossy"], ts, scripted_cfg())
    rr = build_report(store, eng.run())
    grader_calls = [
        h for h in scripted.model("rules").history if '<data name="run_a">' in h["messages"][-1]["content"]
    ]
    assert len(grader_calls) == 2
    # progress counts them among the judge model's calls, in the engine and as the desk reads it
    assert eng.progress.judge_done == eng.progress.judge_needed == 7 + 2
    assert queries.progress(store, rr.run["id"]).judge_needed == 7 + 2
    for call in grader_calls:  # blind: only neutral block names, and no word of which arm is which
        user = call["messages"][-1]["content"]
        assert (
            "original_run" not in user and "candidate" not in user.lower() and "teacher" not in user.lower()
        )
    row = next(r for r in rr.rows if r.case_id == "happy-1")
    lost = row.checks_lost[0]
    assert lost.label == 'llm-rubric "Strips internal ticket ids" on the transcript'
    assert "ticket ids" in lost.teacher_evidence and lost.candidate_evidence.startswith("no mention of")
    assert store.log.call_stats(rr.run["id"])["judge_made"] == 7 + 2


def test_the_grader_is_unblinded_by_the_recorded_order(store, example, scripted_cfg):
    def a_passes(model, messages, schema):  # a grader that passes whatever is shown as run A
        if '<data name="run_a">' not in messages[-1]["content"]:
            return None
        graded = {"a_pass": True, "a_evidence": "A", "b_pass": False, "b_evidence": "B"}
        return json.dumps({i: graded for i in schema["properties"]})  # the ids are the schema's keys

    scripted.model("rules").handler = a_passes
    ts = with_cases(example, [add(c, assertions=[TICKETS]) for c in example["ts"].cases])
    rr = build_report(
        store, Engine(store, example["original"], example["faithful"], ts, scripted_cfg()).run()
    )
    for row in rr.rows:
        c = next(c for c in row.checks if c.kind == "model")
        assert c.teacher is (c.shown_as_a == "teacher") and c.candidate is (c.shown_as_a == "candidate")
        assert c.teacher_evidence == ("A" if c.teacher else "B")
    assert {blind_order(f"t{i}", f"c{i}") for i in range(20)} == {"teacher", "candidate"}


def test_a_failed_grading_is_an_error_never_a_pass_and_is_not_cached(tmp_path):
    path = checked_set(tmp_path, {"happy-1": [TICKETS]})

    def broken(model, msgs, schema):  # every attempt at grading, re-asks included, gets nonsense
        return "not json" if any('<data name="run_a">' in m["content"] for m in msgs) else None

    scripted.model("rules").handler = broken
    assert cli(tmp_path, path) == 3
    report, _ = outputs(tmp_path)
    assert report["errors"][0]["case_id"] == "happy-1" and report["errors"][0]["stage"] == "checks"
    assert "happy-1" not in {c["case_id"] for c in report["cases"]} and not report["summary"]["pass"]
    scripted.forget()
    assert cli(tmp_path, path) == 0  # graded now: the failure was not cached
    assert any('<data name="run_a">' in h["messages"][-1]["content"] for h in scripted.model("rules").history)


def test_an_identical_rerun_reuses_the_grading(tmp_path):
    path = checked_set(tmp_path, {"happy-1": [TICKETS]}, {"edge-1": ["Strips ticket ids"]})
    cli(tmp_path, path, "candidate-lossy.md")
    scripted.forget()
    assert cli(tmp_path, path, "candidate-lossy.md") == 1 and scripted.model("rules").history == []


def test_the_estimate_counts_the_grading_calls(store, example, scripted_cfg):
    ts = with_cases(
        example,
        [add(c, expectations=["x"]) if c.type == "edge" else c for c in example["ts"].cases],
    )
    eng = Engine(store, example["original"], example["faithful"], ts, scripted_cfg())
    assert estimate(eng)["grading_calls"] == 2
    eng.run()
    assert (
        estimate(Engine(store, example["original"], example["faithful"], ts, scripted_cfg()))["grading_calls"]
        == 0
    )


def test_exports_carry_each_check(tmp_path):
    hook = {"type": "webhook", "value": "https://example.test/grade"}
    cli(tmp_path, checked_set(tmp_path, {"happy-1": [WORDING, NEVER, hook]}))
    from abeq.results.store.store import Store

    store = Store(str(tmp_path / "abeq.db"))
    rr = build_report(store, 1)
    row = next(r for r in csv.DictReader(io.StringIO(to_csv(rr))) if r["case_id"] == "happy-1")
    assert (
        row["checks"] == "4" and "past-tense" in row["checks_lost"] and "zebra" in row["checks_failed_both"]
    )
    assert row["checks_disagree_with_judge"] == "True" and len(json.loads(row["checks_detail"])) == 4
    suite = ET.fromstring(to_junit(rr).encode())
    # one testcase per case (issue 38: checks counted as cases made tests="13" for 7 cases); the
    # case's checks are its properties, and the lost one makes the case itself fail
    assert suite.get("tests") == "7" and suite.get("skipped") == "0"
    [case] = [tc for tc in suite.iter("testcase") if tc.get("name") == "happy-1"]
    by_name = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert len(by_name) == 4 and case.find("failure") is not None
    assert by_name[f"check: {WORDING_LABEL}"].startswith("lost on the candidate")
    assert "both arms" in by_name['check: contains "zebra crossing"']
    assert by_name['check: webhook "https://example.test/grade"'].startswith("skipped: ")
    md = markdown(store, rr)
    assert "## Checks" in md and f"| happy-1 | {WORDING_LABEL} | ✓ | ✗ | lost |" in md


WORDING_LABEL = 'contains "Write each entry as one past-tense sentence" on the transcript'


def test_a_reviewer_override_wins_over_a_lost_check(store, example, scripted_cfg):
    ts = with_cases(
        example,
        [add(c, assertions=[WORDING]) if c.id == "happy-1" else c for c in example["ts"].cases],
    )
    run_id = Engine(store, example["original"], example["faithful"], ts, scripted_cfg()).run()
    assert exit_code(build_report(store, run_id)) == 1
    store.ledger.add_override(
        run_id, "happy-1", "equivalent", "the wording check is too literal", "ann", "equivalent"
    )
    rr = build_report(store, run_id)
    assert exit_code(rr) == 0 and rr.rows[0].verdict == "equivalent" and rr.rows[0].checks_lost
    suite = ET.fromstring(to_junit(rr).encode())
    assert suite.get("failures") == "0"


def test_the_checks_are_a_second_witness_in_the_trust_figures(tmp_path, capsys):
    cli(tmp_path, checked_set(tmp_path, {"happy-1": [WORDING], "edge-1": [TICKETS]}))  # judge: equivalent
    cli(tmp_path, checked_set(tmp_path, {"happy-1": [WORDING], "edge-1": [TICKETS]}), "candidate-lossy.md")
    from abeq.results.store.store import Store

    [w] = check_witness(Store(str(tmp_path / "abeq.db")))
    # faithful: happy-1 lost its wording check, the judge said equivalent; lossy: happy-1 and edge-1
    # lost a check and the judge called both regressed
    assert (w["cases_with_lost_checks"], w["judge_also_regressed"], w["disagreements"]) == (3, 2, 1)
    capsys.readouterr()
    assert main(["stats", "--db", str(tmp_path / "abeq.db")]) == 0
    assert "the judge called 2 regressed (1 disagreement(s)" in capsys.readouterr().out


@pytest.mark.parametrize("bad", [{"type": "regex", "value": "(unclosed"}, {"type": "contains"}])
def test_a_check_that_cannot_be_evaluated_refuses_the_run(tmp_path, capsys, bad):
    assert cli(tmp_path, checked_set(tmp_path, {"happy-1": [bad]})) == 2
    err = capsys.readouterr().err
    assert (
        "case happy-1, check 2" in err
        and not scripted.model("rules").history
        and not (tmp_path / "abeq.db").exists()
    )


@pytest.mark.slow
def test_the_embedded_model_grades_every_check_through_the_real_path(example):
    """The real embedded model as the grader: the reply schema (one key per check id) holds even a
    135M model to grading each check once; what it decides is not meaningful at that size."""
    import asyncio

    from abeq.execution.checks.checks import model_checks
    from abeq.execution.checks.grading import grade_pair, unblind
    from abeq.models import ModelSpec
    from abeq.schemas import RunnerReply

    case = add(
        example["ts"].cases[0], assertions=[TICKETS], expectations=["Keeps public pull request numbers"]
    )
    runs = [
        RunnerReply.model_validate(scripted_rules.run_rules({"document": d.text, "case_input": case.input}))
        for d in (example["original"], example["lossy"])
    ]
    checks = model_checks(case)
    spec = ModelSpec(name="local/smollm2", max_tokens=400)
    out = asyncio.run(grade_pair(case, checks, *runs, "candidate", spec))
    graded = unblind(out.value, [c.id for c in checks], "candidate")
    assert set(graded) == {"c1", "c2"}  # the rubric and the expectation
    assert all(isinstance(t, bool) and isinstance(c, bool) and te and ce for t, te, c, ce in graded.values())
