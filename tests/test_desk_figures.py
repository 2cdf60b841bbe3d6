"""The desk's figures say what they count (issue 46, item 5), through AppTest: a reviewer's row counts
their own actions on their own cases of the run; κ from a handful of actions is "too few", not a
number; a run's κ is that run's; History's mutation score keeps its caveat and no cell reads "None";
the embedded model's caution stands beside the runs it made, not beside others.

Synthetic runs (no model): verdicts cycle equivalent, diverged, regressed (case i gets i % 3)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest
from test_desk_queue import desk, metrics

from abeq.results.reports.agreement import cohen_kappa
from abeq.results.review.assigning import assign
from abeq.results.review.reviewing import record
from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run
from abeq.vocab import EQUIVALENT, FINISHED

HISTORY = "desk_pages/5_history.py"


def team_table(at: AppTest) -> dict[str, dict]:
    at.session_state["review_team"] = True  # the Reviewers expander, opened
    at.run()
    (table,) = [d.value for d in at.dataframe if "assigned" in d.value.columns]
    return {r["reviewer"]: r for r in table.to_dict("records")}


def test_a_reviewers_row_counts_their_own_actions_on_their_own_cases(db):
    store = Store(db)
    run = synthetic_run(store, 8, review="team", error_every=0, seed=3)
    assign(store, run, "ana", ["case-0002", "case-0005"])
    assign(store, run, "bo", ["case-0001", "case-0004"])
    record(store, run, "case-0002", action="agree", reviewer="alice")  # on ana's case
    record(store, run, "case-0001", action="agree", reviewer="ana")  # on bo's case
    rows = team_table(desk(review="team", run=str(run), reviewer="ana"))
    ana, bo, alice = rows["ana"], rows["bo"], rows["alice"]
    assert ana["agreement"] == "—" and ana["Cohen's κ"] == "—"  # not 100% from bo's case
    assert (alice["assigned"], alice["agreement"]) == (0, "—")  # nothing assigned: no "100%"
    assert (ana["assigned"], ana["reviewed"], ana["by others"], ana["left"]) == (2, 0, 1, 1)
    assert "1 action(s) on teammates' cases, not counted here" in ana["note"]
    assert (bo["reviewed"], bo["by others"], bo["agreement"]) == (0, 1, "—")


def test_kappa_from_a_handful_is_too_few_and_a_runs_kappa_is_that_runs(db):
    store = Store(db)
    big = synthetic_run(store, 12, review="big", error_every=0, seed=1)
    small = synthetic_run(store, 6, review="small", error_every=0, seed=2)  # the same judge model
    pairs = []
    for i in range(12):  # 10 agrees, 2 overrides to equivalent: κ is a number
        case, judged = f"case-{i:04d}", ("equivalent", "candidate-diverged", "candidate-regressed")[i % 3]
        if i in (2, 4):
            record(store, big, case, action="override", verdict=EQUIVALENT, reason="kept it", reviewer="ana")
            pairs.append((judged, EQUIVALENT))
        else:
            record(store, big, case, action="agree", reviewer="ana")
            pairs.append((judged, judged))
    record(store, small, "case-0002", action="agree", reviewer="ana")
    record(store, small, "case-0005", action="override", verdict=EQUIVALENT, reason="kept", reviewer="ana")

    at = desk(review="small", run=str(small))
    m = metrics(at)
    assert m["Cohen's κ"] == "too few (2)" and m["Agreement"] == "50%"  # not the pooled 14's
    assert m["Reviewed (this run)"] == "2"  # the judge's other run is not this one
    at = desk(review="big", run=str(big))
    assert metrics(at)["Cohen's κ"] == f"{cohen_kappa(pairs):.2f}"  # this run's 12, not 14


@pytest.fixture
def history(db):
    """One review, three runs of round 1: the second and third of the same candidate, the third on
    another API base; a mutation score of the set made with a test double (not a trust figure)."""
    store = Store(db)
    runs = [synthetic_run(store, 4, review="h", error_every=0, seed=s) for s in (1, 2, 3)]
    config = {"runner": {"model": "openai/m", "temperature": 0}, "judge": {"model": "openai/m"}}
    for i, run in enumerate(runs):
        c = json.loads(json.dumps(config))
        if i == 2:
            c["runner"]["api_base"] = "http://127.0.0.1:9/v1"
        store.sql.update("runs", {"id": run}, {"config": json.dumps(c), "round": None if i == 0 else 1})
    r = store.log.run(runs[0])
    mid = store.mutations.start(
        "k",
        {
            "original_hash": r["original_hash"],
            "transfer_set_hash": r["transfer_set_hash"],
            "runner_model": "synthetic",
            "judge_model": "synthetic",
        },
    )
    report = json.dumps({"trust_figure": False})
    store.mutations.update(mid, status=FINISHED, score=0.5, mutants=4, killed=2, report=report)
    return runs


def history_page(**params) -> AppTest:
    at = AppTest.from_file(str(__import__("conftest").DESK_APP), default_timeout=60)
    at.query_params.update(params)
    at.run()
    at.switch_page(HISTORY)
    at.run()
    assert not at.exception, at.exception
    return at


def test_history_says_what_its_figures_are_and_never_none(history):
    at = history_page(review="h")
    cells = [str(v) for d in at.dataframe for v in d.value.to_numpy().ravel()]
    assert not [c for c in cells if c in ("None", "nan", "NaN", "<NA>")], cells
    said = " ".join(str(v) for v in cells)
    assert "50% (not a trust figure)" in said  # the run's detail, with its caveat
    (rounds,) = [h.proto.body for h in at.get("html") if "abeq-rounds" in h.proto.body]
    assert ">None<" not in rounds and ">nan<" not in rounds and 'title="candidate.md"' in rounds
    texts = " ".join(x.value for x in (*at.caption, *at.markdown, *at.warning))
    assert "None" not in texts
    (warning,) = [w.value for w in at.warning if "differ in more than the candidate" in w.value]
    assert "runner.api_base (none vs http" in warning.replace("\\", "")  # one run on another API base


def test_the_tiny_models_caution_stands_only_beside_its_runs(history, db):
    at = history_page(review="h")
    side = " ".join(c.value for c in at.sidebar.caption)
    assert "embedded model is tiny" not in side  # these runs were made with other models
    assert not [c for c in at.caption if "embedded model" in c.value]
    store = Store(db)
    store.sql.update("runs", {"id": history[1]}, {"runner_model": "local/smollm2"})
    at = history_page(review="h")
    assert "embedded model is tiny" not in " ".join(c.value for c in at.sidebar.caption)
    (said,) = [c.value for c in at.caption if "embedded model" in c.value]
    assert said.startswith(f"Run(s) {history[1]} were made with the embedded model")
