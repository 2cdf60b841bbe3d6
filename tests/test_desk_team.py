"""Work shared out on the desk's Review page (issue 40, item 6), through AppTest: a reviewer's own
cases come first with how many are left, the run's cases are dealt out from the page, and each
reviewer's progress and agreement with the judge is shown.

Synthetic run of 8 cases: 3 and 7 errored; judged 0 eq, 1 div, 2 reg, 4 div, 5 reg, 6 eq."""

from __future__ import annotations

import pytest
from test_desk_queue import act_as, desk, override

from abeq.desk import session
from abeq.results.review.assigning import assign
from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run


@pytest.fixture
def run(db):
    return synthetic_run(Store(db), 8, review="team", error_every=4, seed=3)


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def test_a_reviewers_own_cases_come_first_with_how_many_are_left(run, db):
    assign(Store(db), run, "ana", ["case-0000", "case-0006"])  # equivalent: last in the usual order
    ana = desk(review="team", run=str(run), reviewer="ana")
    assert ana.selectbox(key="review_case").options[:3] == ["case-0000", "case-0006", "case-0002"]
    assert ana.selectbox(key="review_case").value == "case-0000"
    assert "Your queue (ana): 2 of 2 left" in captions(ana).replace("\\", "")
    ana.button(key="agree").click().run()
    assert ana.selectbox(key="review_case").value == "case-0006"  # the next of her own
    assert "Your queue (ana): 1 of 2 left" in captions(ana).replace("\\", "")
    # the order stays put (a reviewed case keeps its place), and another reviewer has the usual queue
    assert ana.selectbox(key="review_case").options[:2] == ["case-0000", "case-0006"]
    bo = desk(review="team", run=str(run), reviewer="bo")
    assert bo.selectbox(key="review_case").options[0] == "case-0002"
    assert "No case of this run is assigned to bo" in captions(bo)


def test_the_reviewer_is_read_through_one_function(run, db, monkeypatch):
    """Whoever the session's reviewer is (a sign-in may decide it), their queue follows it."""
    assign(Store(db), run, "carol", ["case-0004"])
    monkeypatch.setattr(session, "reviewer", lambda state: "carol")
    at = desk(review="team", run=str(run))
    assert at.selectbox(key="review_case").value == "case-0004"


def test_the_run_is_dealt_out_from_the_page_and_each_reviewer_has_a_row(run, db):
    at = desk(review="team", run=str(run), reviewer="ana")
    at.session_state["review_team"] = True  # the Reviewers expander, opened
    at.run()
    at.text_input(key="assign_to").input("ana, bo")
    at.button(key="FormSubmitter:assign_form-Deal out evenly").click().run()
    assert not at.exception, at.exception
    assert any("Assigned 6 case(s): ana 3, bo 3." in s.value for s in at.success)
    assert len(Store(db).assignments.of_run(run)) == 6
    assert at.selectbox(key="review_case").options[:3] == ["case-0002", "case-0005", "case-0000"]  # ana's
    at.button(key="agree").click().run()  # ana agrees with the judge on case-0002 (regressed)
    act_as(at, "ana")
    override(at, "it kept the rule", verdict="equivalent")  # and overrides case-0005 (regressed)
    at.session_state["review_team"] = True
    at.run()
    (table,) = [d.value for d in at.dataframe if "reviewer" in d.value.columns]
    rows = {r["reviewer"]: r for r in table.to_dict("records")}
    assert (rows["ana"]["assigned"], rows["ana"]["reviewed"], rows["ana"]["left"]) == (3, 2, 1)
    assert rows["ana"]["agreement"] == "50%" and rows["ana"]["Cohen's κ"] == "too few (2)"
    assert (rows["bo"]["assigned"], rows["bo"]["left"], rows["bo"]["Cohen's κ"]) == (3, 3, "—")
    at.button(key="assign_clear").click().run()  # asked first, naming how many: ana dealt all six
    assert any("Take back 6 assignment(s)" in w.value for w in at.warning)
    assert len(Store(db).assignments.of_run(run)) == 6
    at.button(key="assign_clear_yes").click().run()
    assert Store(db).assignments.of_run(run) == {}


def test_dealing_with_no_name_says_what_to_do(run, db):
    at = desk(review="team", run=str(run))
    at.session_state["review_team"] = True
    at.run()
    at.button(key="FormSubmitter:assign_form-Deal out evenly").click().run()
    assert any("no reviewer to assign cases to" in e.value for e in at.error)
    assert Store(db).assignments.of_run(run) == {}
