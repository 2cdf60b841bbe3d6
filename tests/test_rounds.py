"""Rounds, budget, gate profiles and exports."""

import csv
import io
import json
from xml.etree import ElementTree as ET

import pytest

from abeq.cli import main
from abeq.execution.engine import Engine
from abeq.execution.estimate import estimate, estimate_calls
from abeq.results.reports.exports import CAVEAT, markdown, to_csv, to_junit
from abeq.results.reports.history import changed_verdicts, review_history
from abeq.results.reports.report import build_report, exit_code, gate_result


def _round(store, ex, cfg, cand):
    return Engine(store, ex["original"], ex[cand], ex["ts"], cfg).run()


@pytest.fixture
def store(backend_store):
    """Every test here runs on sqlite and on PostgreSQL."""
    return backend_store


def test_rounds_reuse_the_teacher_and_are_numbered(store, example, scripted_cfg):
    cfg = scripted_cfg(review="compress-skill")
    r1 = _round(store, example, cfg, "lossy")
    r2 = _round(store, example, cfg, "faithful")
    assert store.log.call_stats(r1)["teacher_made"] == 7 and store.log.call_stats(r2)["teacher_made"] == 0
    hist = review_history(store, "compress-skill")
    assert [h["round"] for h in hist] == [1, 2]
    assert [h["regressed"] for h in hist] == [7, 0] and [h["equivalent"] for h in hist] == [0, 7]
    assert hist[1]["compression"] < 1 and hist[1]["characters"] == len(example["faithful"].text)
    changed = changed_verdicts(store, r1, r2)
    assert (
        len(changed) == 7
        and changed[0]["before"] == "candidate-regressed"
        and changed[0]["after"] == "equivalent"
    )


def test_budget_arithmetic():
    assert estimate_calls(10, rounds=1) == {
        "runner_calls": 20,
        "judge_calls": 10,
        "grading_calls": 0,
        "total": 30,
    }
    assert estimate_calls(10, rounds=3)["total"] == 70
    assert estimate_calls(10, rounds=1, judge_samples=3, aa=True) == {
        "runner_calls": 30,
        "judge_calls": 40,
        "grading_calls": 0,
        "total": 70,
    }
    # one grading call per round for each case with natural-language checks
    assert estimate_calls(10, rounds=2, graded_cases=4)["grading_calls"] == 8
    assert estimate_calls(10, rounds=2, graded_cases=4)["total"] == 30 + 20 + 8


def test_estimate_counts_cached_teacher_runs(store, example, scripted_cfg):
    cfg = scripted_cfg(review="r")
    _round(store, example, cfg, "lossy")
    eng = Engine(store, example["original"], example["faithful"], example["ts"], cfg)
    est = estimate(eng, rounds_so_far=1)
    assert est["teacher_cached"] == 7 and est["runner_calls"] == 7 and est["judge_calls"] == 7
    assert est["review_budget_runner_calls"] == 7 * 3 and est["est_cost"] == 0.0


def _directness_judge(o, c):
    """The judge's reply: equivalent, with these directness scores (scripted_model.judge.always)."""
    return json.dumps(
        {
            "verdict": "equivalent",
            "behaviour_delta": "",
            "original_directness": o,
            "candidate_directness": c,
            "interpretation_notes": "read from the self-reports",
        }
    )


def test_directive_clarity_needs_a_measured_gain(scripted_model, store, example, scripted_cfg):
    scripted_model.judge.always(_directness_judge(3, 3))
    rr = build_report(store, _round(store, example, scripted_cfg(), "faithful"))
    assert gate_result(rr, "compress")["pass"] and exit_code(rr, "compress") == 0
    g = gate_result(rr, "directive-clarity")
    assert not g["pass"] and exit_code(rr, "directive-clarity") == 1
    assert g["mean_original_directness"] == 3 and set(g["per_case_delta"].values()) == {0}


def test_directive_clarity_passes_with_a_gain_and_no_regression(scripted_model, store, example, scripted_cfg):
    scripted_model.judge.always(_directness_judge(2, 4))
    rr = build_report(store, _round(store, example, scripted_cfg(), "faithful"))
    g = gate_result(rr, "directive-clarity")
    assert g["pass"] and g["mean_candidate_directness"] == 4 and set(g["per_case_delta"].values()) == {2}


def test_exports_apply_overrides_and_say_so(store, example, scripted_cfg):
    run_id = _round(store, example, scripted_cfg(), "lossy")
    store.ledger.add_override(
        run_id, "happy-1", "equivalent", "ticket ids never appear in this input", "ann", "candidate-regressed"
    )
    rr = build_report(store, run_id)
    md = markdown(store, rr)
    assert "Overrides applied: 1" in md and "ticket ids never appear in this input" in md
    assert CAVEAT in md and "Compression ratio" in md and "coverage 100%" in md
    assert "Gate-truncated cases" in md and "edge-2" in md
    rows = list(csv.DictReader(io.StringIO(to_csv(rr))))
    assert len(rows) == 7
    h1 = next(r for r in rows if r["case_id"] == "happy-1")
    assert (
        h1["verdict"] == "equivalent"
        and h1["judge_verdict"] == "candidate-regressed"
        and h1["overridden"] == "True"
    )
    suite = ET.fromstring(to_junit(rr).encode())
    # 7 cases; the example's 6 ticket-id checks (kept on both arms: they pass) are their properties
    assert suite.get("tests") == "7" and suite.get("failures") == "6"
    failed = {tc.get("name") for tc in suite.iter("testcase") if tc.find("failure") is not None}
    props = [p.get("value") for p in suite.iter("property") if p.get("name", "").startswith("check: ")]
    assert len(props) == 6 and all(v.startswith("kept (teacher ✓, candidate ✓)") for v in props), props
    assert failed == {"adversarial-1", "adversarial-2", "composition-1", "edge-1", "edge-2", "happy-2"}


def test_junit_stays_valid_xml_with_control_characters(store, example, scripted_cfg):
    run_id = _round(store, example, scripted_cfg(), "lossy")
    store.ledger.add_override(
        run_id,
        "edge-1",
        "candidate-regressed",
        "pasted \x1b[31mred\x1b[0m\x0c text",
        "ann",
        "candidate-regressed",
    )
    xml = to_junit(build_report(store, run_id))
    suite = ET.fromstring(xml.encode())
    assert suite.get("tests") == "7" and "pasted [31mred[0m text" in xml


def test_errored_cases_are_junit_errors(scripted_model, store, example, scripted_cfg):
    scripted_model.judge.always("nonsense")
    rr = build_report(store, _round(store, example, scripted_cfg(), "faithful"))
    suite = ET.fromstring(to_junit(rr).encode())
    assert suite.get("errors") == "7" and len(list(suite.iter("error"))) == 7


def test_cli_writes_every_export_and_history(tmp_path, capsys, run_args, store_db):
    round_args = {"db": store_db, "review": "rn", "out": tmp_path / "r.json"}
    assert main(run_args(candidate="candidate-lossy.md", **round_args)) == 1
    assert (
        main(
            run_args(candidate="candidate-faithful.md", **round_args)
            + [
                "--markdown",
                str(tmp_path / "r.md"),
                "--csv",
                str(tmp_path / "r.csv"),
                "--junit",
                str(tmp_path / "r.xml"),
                "--record",
                str(tmp_path / "rec.json"),
            ]
        )
        == 0
    )
    assert (tmp_path / "r.md").read_text().startswith("# abeq review")
    ET.parse(tmp_path / "r.xml")
    assert json.loads((tmp_path / "rec.json").read_text())["report"]["summary"]["pass"] is True
    capsys.readouterr()
    assert main(["history", "rn", "--db", store_db, "--json"]) == 0
    hist = json.loads(capsys.readouterr().out)
    assert [h["regressed"] for h in hist] == [7, 0]
    assert main(["history", "nope", "--db", store_db]) == 2


def test_cost_per_case_counts_what_this_run_spent_on_it(store, example, scripted_cfg):
    cfg = scripted_cfg(review="per-case")
    r1 = _round(store, example, cfg, "lossy")
    r2 = _round(store, example, cfg, "faithful")
    rows1, rows2 = build_report(store, r1).rows, build_report(store, r2).rows
    assert {(r.calls_made, r.calls_cached) for r in rows1} == {(3, 0)}  # teacher, candidate, judge
    assert {(r.calls_made, r.calls_cached) for r in rows2} == {(2, 1)}  # the teacher came from the cache
    assert all(r.tokens > 0 for r in rows1)
    # a priced call and an unpriced one, logged as the engine logs them
    case = rows2[0].case_id
    for cost in (0.0125, None):
        store.log.log_call(
            {
                "run_id": r2,
                "case_id": case,
                "kind": "judge",
                "model": "m",
                "key": f"k{cost}",
                "cached": 0,
                "ok": 1,
                "error": "",
                "prompt_tokens": 100,
                "completion_tokens": 20,
                "cost": cost,
                "latency": 0.1,
                "attempts": 1,
            }
        )
    rr = build_report(store, r2)
    row = next(r for r in rr.rows if r.case_id == case)
    assert row.calls_made == 4 and row.cost == 0.0125 and row.unpriced_calls == 1
    assert row.tokens == next(r for r in rows2 if r.case_id == case).tokens + 240
    line = next(x for x in csv.DictReader(io.StringIO(to_csv(rr))) if x["case_id"] == case)
    # one call had no price: the case's cost is unknown, not the sum of the priced ones
    assert (line["calls_made"], line["cost"], line["cost_unpriced_calls"]) == ("4", "", "1")
    from abeq.results.reports.record import run_record

    rec = next(c for c in run_record(store, rr)["cases"] if c["case_id"] == case)
    assert (rec["calls_made"], rec["calls_cached"], rec["cost"], rec["cost_unpriced_calls"]) == (
        4,
        1,
        None,
        1,
    )


def test_an_identical_re_run_keeps_the_reviewers_overrides(tmp_path, capsys, run_args, store_db):
    base = run_args(db=store_db, candidate="candidate-lossy.md", review="rn")
    assert main(base + ["--out", str(tmp_path / "r1.json")]) == 1
    regressed = [
        c["case_id"]
        for c in json.loads((tmp_path / "r1.json").read_text())["cases"]
        if c["verdict"] == "candidate-regressed"
    ]
    for case in regressed:
        assert (
            main(
                [
                    "override",
                    "1",
                    case,
                    "--verdict",
                    "equivalent",
                    "--reason",
                    "checked by hand",
                    "--db",
                    store_db,
                ]
            )
            == 0
        )
    assert main(base + ["--out", str(tmp_path / "r2.json"), "--record", str(tmp_path / "rec.json")]) == 0
    rep = json.loads((tmp_path / "r2.json").read_text())
    assert rep["summary"]["regressions"] == 0 and len(rep["overrides"]) == len(regressed)
    assert {o["carried_from_run"] for o in rep["overrides"]} == {1}
    rec = json.loads((tmp_path / "rec.json").read_text())
    assert rec["run"]["id"] == 2 and rec["run"]["calls_made"] == 0  # every call from the cache
    # a different candidate is a different judgement: nothing carries
    other = run_args(db=store_db, candidate="candidate-faithful.md", review="rn")
    assert main(other + ["--out", str(tmp_path / "r3.json")]) == 0
    assert "overrides" not in json.loads((tmp_path / "r3.json").read_text())
