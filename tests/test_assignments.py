"""Work shared out (issue 40, item 6): a run's cases assigned to reviewers or dealt out evenly, each
reviewer's progress and agreement with the judge; on sqlite and on PostgreSQL.

Synthetic runs of 8 cases: 3 and 7 errored; judged 0 eq, 1 div, 2 reg, 4 div, 5 reg, 6 eq."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from abeq.errors import InputError
from abeq.results.reports.agreement import per_reviewer
from abeq.results.reports.report import case_rows
from abeq.results.review.assigning import assign, assigned_to, unassign
from abeq.results.review.reviewing import record
from abeq.testing.synthetic import synthetic_run


@pytest.fixture
def store(backend_store):
    return backend_store


@pytest.fixture
def run(store):
    return synthetic_run(store, 8, review="r", error_every=4)


def test_dealing_evens_the_loads_and_leaves_out_cases_without_a_verdict(store, run):
    plan = assign(store, run, "ana, bo", deal=True, by="lead")
    assert plan == {
        "case-0000": "ana",
        "case-0001": "bo",
        "case-0002": "ana",
        "case-0004": "bo",
        "case-0005": "ana",
        "case-0006": "bo",
    }
    row = store.assignments.of_run(run)["case-0004"]
    assert (row["reviewer"], row["assigned_by"]) == ("bo", "lead") and row["assigned_at"]
    assert assign(store, run, "ana,bo", deal=True) == {}  # every case has someone: nothing dealt twice
    # a third reviewer joins: named cases are dealt again, to whoever has fewest now
    again = assign(store, run, ["carl", "ana"], ["case-0001", "case-0004"], deal=True)
    assert again == {"case-0001": "carl", "case-0004": "carl"}
    loads = Counter(a["reviewer"] for a in store.assignments.of_run(run).values())
    assert loads == {"ana": 3, "bo": 1, "carl": 2}
    assert sorted(assigned_to(store, run, "carl")) == ["case-0001", "case-0004"]
    assert unassign(store, run, ["case-0001"]) == 1 and unassign(store, run) == 5
    assert store.assignments.of_run(run) == {}


def test_bad_assignments_are_refused_with_what_to_do(store, run):
    for call, said in (
        (lambda: assign(store, run, "ana,bo"), "2 reviewers named and no --deal"),
        (lambda: assign(store, run, " , "), "no reviewer"),
        (lambda: assign(store, run, "ana", ["case-0001", "nope"]), "run 1 has no case 'nope'"),
        (lambda: assign(store, 99, "ana"), "no run 99"),
        (lambda: assign(store, run, "x" * 101), "over 100 characters"),
    ):
        with pytest.raises(InputError) as e:
            call()
        assert said in e.value.message
    assert store.assignments.of_run(run) == {}  # nothing half-written


def test_each_reviewer_has_progress_agreement_and_kappa(store, run):
    assign(store, run, "ana,bo", deal=True)  # ana: 0 eq, 2 reg, 5 reg; bo: 1 div, 4 div, 6 eq
    record(store, run, "case-0002", action="agree", reviewer="ana")
    record(store, run, "case-0005", action="override", verdict="equivalent", reason="kept", reviewer="ana")
    record(store, run, "case-0001", action="agree", reviewer="bo")
    record(store, run, "case-0006", action="agree", reviewer="carl")  # helped out on bo's case
    table = {r["reviewer"]: r for r in per_reviewer(case_rows(store, run), _assigned(store, run))}
    ana, bo, carl = table["ana"], table["bo"], table["carl"]
    assert (ana["assigned"], ana["reviewed"], ana["left"], ana["acted"]) == (3, 2, 1, 2)
    # carl's counts as done, by someone else: in neither bo's figures nor his own (issue 46)
    assert (bo["assigned"], bo["reviewed"], bo["by_others"], bo["left"]) == (3, 1, 1, 1)
    assert (carl["assigned"], carl["acted"], carl["elsewhere"], carl["raw_agreement"]) == (0, 0, 1, None)
    # ana: judge said regressed twice; she agreed once and said equivalent once: kappa is 0, unstable
    assert ana["raw_agreement"] == 0.5 and ana["kappa"] == 0.0
    assert "the judge gave every reviewed case one verdict" in ana["kappa_note"]
    assert bo["kappa"] is None and "reviewers: 1 candidate-diverged" in bo["kappa_note"]  # undefined


def test_a_case_still_running_is_waiting_not_left(store, run):
    store.log.put_run_case({"run_id": run, "case_id": "case-0000", "position": 0, "status": "pending"})
    assign(store, run, "ana", ["case-0000", "case-0002"])
    (ana,) = per_reviewer(case_rows(store, run), _assigned(store, run))
    assert (ana["assigned"], ana["left"], ana["waiting"], ana["kappa"]) == (2, 1, 1, None)


def _assigned(store, run):
    return {c: a["reviewer"] for c, a in store.assignments.of_run(run).items()}


def test_the_cli_deals_lists_and_takes_back(store_db, capsys):
    from abeq.cli import main
    from abeq.results.store.store import Store

    run = synthetic_run(Store(store_db), 8, review="r", error_every=4)
    assert main(["assign", str(run), "--to", "ana,bo", "--deal", "--db", store_db]) == 0
    out = capsys.readouterr()
    assert "assigned 6 case(s) of run 1: ana 3, bo 3" in out.err
    assert "run 1: 6 of 8 cases assigned" in out.out and "ana" in out.out
    main(["agree", str(run), "case-0000", "--reviewer", "ana", "--db", store_db])
    capsys.readouterr()
    assert main(["assign", str(run), "--json", "--db", store_db]) == 0
    listed = json.loads(capsys.readouterr().out)
    ana = next(r for r in listed["reviewers"] if r["reviewer"] == "ana")
    assert (ana["reviewed"], ana["left"], ana["raw_agreement"]) == (1, 2, 1.0)
    assert listed["assigned"]["case-0001"] == "bo"
    assert main(["assign", str(run), "--to", "ana,bo", "--db", store_db]) == 2
    assert "add --deal" in capsys.readouterr().err.lower()
    assert main(["assign", str(run), "--clear", "--cases", "case-0000", "--db", store_db]) == 0
    assert "took back 1 assignment(s)" in capsys.readouterr().err
    assert "case-0000" not in Store(store_db).assignments.of_run(run)


def test_assignments_travel_with_db_copy_and_merge(tmp_path, pg_db):
    from abeq.results.reports.record import end_run, run_text
    from abeq.results.store.copy import copy_store
    from abeq.results.store.merge import merge_into
    from abeq.results.store.store import Store

    src = Store(str(tmp_path / "src.db"))
    run = synthetic_run(src, 8, review="r", error_every=4)
    plan = assign(src, run, "ana,bo", deal=True)
    copy_store(src, Store(pg_db), reads_as=run_text)
    assert _assigned(Store(pg_db), run) == plan
    merged = Store(str(tmp_path / "merged.db"))
    synthetic_run(merged, 8, review="r", error_every=4)  # the same run (its settings key), unassigned
    assign(merged, run, "carl", ["case-0000"])
    merge_into(merged, src, finish=end_run)
    assert _assigned(merged, run) == {**plan, "case-0000": "carl"}  # the destination's stands


def test_on_the_desk_only_the_dealer_or_the_assignee_takes_back_(store, run):
    """Failed before (issue 46): the desk's one click took back every assignment, for anyone."""
    from abeq.results.review.assigning import takeable

    assign(store, run, "ana, bo", deal=True, by="lead")
    assert takeable(store, run, "carl") == [] and takeable(store, run, " ") == []
    assert unassign(store, run, by="carl") == 0 and len(store.assignments.of_run(run)) == 6
    assert sorted(takeable(store, run, "ana")) == ["case-0000", "case-0002", "case-0005"]
    assert unassign(store, run, ["case-0001", "case-0002"], by="ana") == 1  # bo's case-0001 stays
    assert unassign(store, run, by="lead") == 5  # the one who dealt takes back the rest
