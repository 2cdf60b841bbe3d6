"""Reviewer actions in the library and the CLI: Agree, Override, concurrent edits, κ, exports."""

from __future__ import annotations

import csv
import io
import json

import pytest

from abeq.cli import main
from abeq.errors import InputError, ReviewConflict
from abeq.results.reports import exports
from abeq.results.reports.agreement import judge_agreement
from abeq.results.reports.report import build_report
from abeq.results.review.reviewing import in_effect, record
from abeq.testing.synthetic import synthetic_run
from abeq.timestamps import ago, local

# synthetic verdicts cycle equivalent, diverged, regressed; every 4th case errors
EQ, DIV, REG, ERR = "case-0000", "case-0001", "case-0002", "case-0003"


@pytest.fixture
def store(backend_store):
    """Every test here runs on sqlite and on PostgreSQL."""
    return backend_store


@pytest.fixture
def run(store):
    return synthetic_run(store, 8, review="r", error_every=4)


def test_agree_is_recorded_with_name_and_time_and_counts_toward_kappa(store, run):
    record(store, run, REG, action="agree", reviewer="ana")
    record(store, run, DIV, action="override", verdict="equivalent", reason="harmless", reviewer="bo")
    rows = {r.case_id: r for r in build_report(store, run).rows}
    assert rows[REG].agreed and rows[REG].verdict == "candidate-regressed"
    assert rows[REG].override is None and rows[REG].review["reviewer"] == "ana"
    assert rows[DIV].override and not rows[EQ].reviewed
    [a] = judge_agreement(store)
    assert (a["reviewed"], a["agreed"], a["overridden"]) == (2, 1, 1)
    assert a["raw_agreement"] == 0.5 and a["kappa"] == pytest.approx(1 / 3, abs=1e-3)


def test_an_override_keeps_the_judges_delta_beside_the_reason(store, run):
    record(
        store,
        run,
        REG,
        action="override",
        verdict="candidate-diverged",
        reason="only reordered",
        reviewer="a",
    )
    row = next(r for r in build_report(store, run).rows if r.case_id == REG)
    assert row.behaviour_delta == "reviewer: only reordered"
    assert row.judge_delta == f"synthetic delta for {REG}" and row.interpretation_notes == "synthetic notes"


def test_saving_over_a_newer_action_is_refused_until_replace(store, run):
    # both reviewers open the case while nobody has acted on it (seen=None)
    first = record(
        store, run, REG, action="override", verdict="equivalent", reason="x", reviewer="A", seen=None
    )
    with pytest.raises(ReviewConflict) as e:
        record(store, run, REG, action="agree", reviewer="B", seen=None)
    assert str(e.value).startswith("A overrode this just now to equivalent: replace?")
    assert len(store.ledger.override_history(run, REG)) == 1  # nothing written
    second = record(store, run, REG, action="agree", reviewer="B", seen=None, replace=True)
    trail = store.ledger.override_history(run, REG)
    assert [t["id"] for t in trail] == [first, second]
    assert trail[1]["seen_id"] == first and trail[1]["seen_verdict"] == "equivalent"
    assert trail[0]["seen_id"] is None and trail[0]["seen_verdict"] == "candidate-regressed"
    # a reviewer who saw the latest action saves without a question
    record(store, run, REG, action="override", verdict="equivalent", reason="y", reviewer="A", seen=second)
    assert in_effect(store, run, REG)["reviewer"] == "A"


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"case_id": ERR, "action": "agree", "reviewer": "a"}, "errored: there is no verdict to agree"),
        ({"case_id": "nope", "action": "agree", "reviewer": "a"}, "has no case 'nope'"),
        ({"case_id": REG, "action": "agree", "reviewer": "  "}, "needs the reviewer's name"),
        ({"case_id": REG, "action": "override", "reviewer": "a", "verdict": "fine"}, "unknown verdict"),
        ({"case_id": REG, "action": "override", "reviewer": "a", "verdict": EQ}, "unknown verdict"),
        ({"case_id": REG, "action": "override", "reviewer": "a", "verdict": "equivalent"}, "needs a reason"),
    ],
)
def test_bad_actions_are_refused_and_write_nothing(store, run, kw, message):
    with pytest.raises(InputError, match=message):
        record(store, run, **kw)
    assert store.ledger.all_overrides() == []


def test_cli_agree_and_stats(store_db, capsys):
    from abeq.results.store.store import Store

    db = store_db
    run = synthetic_run(Store(db), 4, review="r", error_every=0)
    assert main(["agree", str(run), REG, "--reviewer", "cli", "--db", db]) == 0
    assert main(["agree", str(run), ERR, "--db", db]) == 0  # case-0003 is judged here (no errors)
    assert main(["override", str(run), REG, "--verdict", "equivalent", "--reason", "r", "--db", db]) == 0
    assert "replaces: cli agreed with the judge (candidate-regressed) just now" in capsys.readouterr().err
    assert main(["agree", str(run), "zzz", "--db", db]) == 2
    capsys.readouterr()
    assert main(["stats", "--json", "--db", db]) == 0
    [a] = json.loads(capsys.readouterr().out)["judge_agreement"]
    assert (a["reviewed"], a["agreed"], a["overridden"]) == (2, 1, 1)
    assert main(["stats", "--db", db]) == 0
    assert "2 reviewed (1 agreed, 1 overridden)" in capsys.readouterr().out


def test_every_export_format_applies_overrides(store, run):
    record(store, run, REG, action="override", verdict="equivalent", reason="fine by me", reviewer="ana")
    record(store, run, DIV, action="agree", reviewer="bo")
    rr = build_report(store, run)
    out = {fmt: exports.render(store, rr, fmt) for fmt in exports.FORMATS}
    assert json.loads(out["out"])["overrides"][0]["reason"] == "fine by me"
    assert json.loads(out["out"])["agreements"][0]["reviewer"] == "bo"
    rec = json.loads(out["record"])
    case = next(c for c in rec["cases"] if c["case_id"] == DIV)
    assert case["review"]["action"] == "agree" and case["override"] is None
    assert "fine by me" in out["markdown"] and "Overrides applied: 1" in out["markdown"]
    rows = {r["case_id"]: r for r in csv.DictReader(io.StringIO(out["csv"]))}
    assert rows[REG]["verdict"] == "equivalent" and rows[REG]["reviewed"] == "override"
    # the effective delta follows the override; the judge's own stays beside it
    assert rows[REG]["behaviour_delta"] == "reviewer: fine by me" and rows[REG]["judge_behaviour_delta"]
    assert rows[DIV]["reviewed"] == "agree" and rows[DIV]["reviewer"] == "bo"
    assert 'name="overrides_applied" value="1"' in out["junit"]
    assert exports.file_name(rr, "junit") == f"abeq-run-{run}.junit.xml"


@pytest.mark.parametrize("fmt", list(exports.FORMATS))
def test_after_an_override_every_export_carries_the_reviewers_reason_as_the_delta(store, run, fmt):
    """To each verdict (equivalent too, where the judge's delta would be empty or dropped)."""
    import xml.etree.ElementTree as ET

    reasons = {REG: ("equivalent", "only reworded"), EQ: ("candidate-regressed", "drops the gate")}
    reasons[DIV] = ("candidate-diverged", "same, stated again")  # the judge's own verdict, overridden
    for case, (verdict, reason) in reasons.items():
        record(store, run, case, action="override", verdict=verdict, reason=reason, reviewer="ana")
    text = exports.render(store, build_report(store, run), fmt)
    if fmt in ("out", "record"):
        doc = json.loads(text)
        got = {c["case_id"]: c["behaviour_delta"] for c in (doc.get("report") or doc)["cases"]}
    elif fmt == "csv":
        got = {r["case_id"]: r["behaviour_delta"] for r in csv.DictReader(io.StringIO(text))}
    elif fmt == "markdown":
        rows = [ln.split(" | ") for ln in text.splitlines() if ln.startswith("| case-")]
        got = {r[0][2:].replace("\\-", "-"): r[2].replace("\\:", ":") for r in rows}  # cells are escaped
    else:
        suite = ET.fromstring(text)
        got = {
            tc.get("name"): " ".join(e.get("message", "") + (e.text or "") for e in tc)
            for tc in suite.iter("testcase")
        }
    for case, (_, reason) in reasons.items():
        assert f"reviewer: {reason}" in got[case], (fmt, case, got[case])
    assert "reviewer:" not in got["case-0004"]  # a case nobody overrode keeps the judge's delta


def test_timestamps_read_as_local_time_and_age():
    assert local("2026-12-03T10:00:00Z").startswith("2026-12-03 ")
    assert local("whenever") == "whenever"
    t = 1_800_000_000
    assert ago("2027-01-15T08:00:00Z", t) == "just now"
    assert ago("2027-01-15T07:58:00Z", t) == "2 min ago"
    assert ago("2027-01-15T05:00:00Z", t) == "3 h ago"


def test_the_desks_report_after_an_action_is_the_same_as_built_afresh_reading_no_case_again(store, run):
    """The Review page's report of a run: after an Agree or an Override it equals a report built from
    scratch (overrides applied, carried ones too), and only the case acted on is a new row; the run's
    other rows are those read before (a 10,000-case run is not read again for one action)."""
    from abeq.desk import review_vm as vm

    def page():
        return vm.report(store, store.log.run(run) or {})

    def same(a, b):
        return [r.__dict__ for r in a.rows] == [r.__dict__ for r in b.rows] and a.report == b.report

    before = page()
    assert page() is before  # nothing changed: the same report
    record(store, run, REG, action="agree", reviewer="ana")
    record(
        store, run, EQ, action="override", verdict="candidate-regressed", reason="lost a step", reviewer="bo"
    )
    after = page()
    assert same(after, build_report(store, run)) and after.report["summary"]["regressions"] == 3
    acted = {r.case_id for a, r in zip(before.rows, after.rows) if a is not r}
    assert acted == {REG, EQ}
    again = synthetic_run(store, 8, review="r", error_every=4)  # the same judgements: the actions carry
    assert same(vm.report(store, store.log.run(again) or {}), build_report(store, again))
    assert {r.case_id for r in build_report(store, again).rows if r.reviewed} == {REG, EQ}
