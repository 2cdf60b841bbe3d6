"""A decision on the desk is the one the reviewer made (issue 46), in a real Chromium: no key submits
an action the focused control does not mean; a one-run `abeq run --confirm` is not the set's
confirmation, and a Confirm on the desk names who made it; the queue opens on what still needs this
reviewer and comes back to their own cases; Take back asks first, names how many, and is theirs.

One desk for the module's tests, each on a run of its own. Synthetic runs of 8 cases (3 and 7
errored; judged 0 eq, 1 div, 2 reg, 4 div, 5 reg, 6 eq): queue order 2, 5, 1, 4, 0, 6, 3, 7."""

from __future__ import annotations

import os
import re
import sqlite3
import sys

import pytest
import zygote
from playwright.sync_api import expect

from abeq.results.review.reviewing import record
from abeq.results.store.store import Store
from abeq.testing.synthetic import EXAMPLE, synthetic_run
from abeq.vocab import AGREE

from .helpers import ROOT, desk, nav, new_context, open_box, settle
from .test_e2e_queue import reviewer, wait_case

CONFIRMER = "Rita Confirmer"  # the desk's `git config user.name` (the highest-precedence git config)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("decisions")
    db = tmp / "desk.db"
    store = Store(str(db))
    names = ("keys", "team", "takeback")
    runs = {n: synthetic_run(store, 8, review=n, seed=40 + i, error_every=4) for i, n in enumerate(names)}
    for run in (runs["team"], runs["takeback"]):
        store.assignments.assign(run, {"case-0002": "ana", "case-0001": "ana", "case-0000": "ana"}, "lead")
        store.assignments.assign(run, {"case-0005": "bo", "case-0004": "bo", "case-0006": "bo"}, "lead")
    # ana's first case in queue order is already reviewed: her queue must not open on it
    record(store, runs["team"], "case-0002", action=AGREE, verdict="candidate-regressed", reviewer="ana")
    store.close()
    git = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": CONFIRMER}
    # `abeq run --confirm`: the bundled example's set (unconfirmed) accepted for that one run, in a
    # process of its own (the browser's event loop runs in this one), while the desk starts
    docs = ["--original", EXAMPLE / "SKILL.md", "--candidate", EXAMPLE / "candidate-lossy.md"]
    docs += ["--transfer-set", EXAMPLE / "transfer-set.json", "--db", db, "--review", "once"]
    flags = ["--runner-model", "scripted/rules", "--confirm", "--quiet", "--out", tmp / "r.json"]
    argv = [sys.executable, "-m", "abeq", "run", *map(str, docs + flags)]
    cli = zygote.popen(argv, cwd=ROOT, env={**os.environ, **git})
    try:
        with desk(db, env=git) as url:
            assert cli.wait(timeout=300) == 1  # ran: the lossy candidate regresses
            yield db, url, runs
    finally:
        cli.kill()


def actions(db, run: int) -> list[tuple]:
    sql = "select case_id, action, verdict, reason, reviewer from overrides where run_id = ? order by id"
    return sqlite3.connect(db).execute(sql, [run]).fetchall()


def assigned(db, run: int) -> list[tuple]:
    sql = "select case_id, reviewer from assignments where run_id = ? order by case_id"
    return sqlite3.connect(db).execute(sql, [run]).fetchall()


def test_a_key_submits_only_what_the_focused_control_means(browser, served):
    """Failed before: Enter in the Reviewer field recorded an Agree on case-0005 (the form's first
    button), and Enter in the Reviewers (deal) field dealt the run out."""
    db, url, runs = served
    run = runs["keys"]
    ctx = new_context(browser)
    page = ctx.new_page()
    page.goto(f"{url}/review?review=keys&run={run}&case=case-0005")
    wait_case(page, "case-0005")
    reviewer(page, "kb")
    page.get_by_label("Reviewer (your name, kept with every action)").press("Enter")
    page.wait_for_timeout(1000)
    settle(page)
    wait_case(page, "case-0005")
    assert actions(db, run) == []
    # the verdict picked and the reason typed, Ctrl+Enter in the Reason: the override, as chosen
    verdict = page.get_by_label("Verdict")
    verdict.click()
    verdict.fill("equivalent")
    verdict.press("ArrowDown")
    verdict.press("Enter")
    settle(page)
    page.get_by_label("Reason (required to override").fill("only reordered: nothing lost")
    page.get_by_label("Reason (required to override").press("Control+Enter")
    page.get_by_text("Override saved: case-0005 → equivalent").wait_for()
    assert actions(db, run) == [("case-0005", "override", "equivalent", "only reordered: nothing lost", "kb")]
    # Enter in the names of the Reviewers box deals nothing: only its button does
    settle(page)
    open_box(page, "Reviewers: 0 of 6 cases assigned", page.get_by_label("Reviewers", exact=True))
    page.get_by_label("Reviewers", exact=True).fill("ana, bo")
    page.get_by_label("Reviewers", exact=True).press("Enter")
    page.wait_for_timeout(1000)
    settle(page)
    assert assigned(db, run) == [] and len(actions(db, run)) == 1
    ctx.close()


def test_a_one_run_confirmation_is_not_the_sets_and_a_confirm_names_its_author(browser, served):
    """Failed before: the set `abeq run --confirm` accepted for one run read "Confirmed … who
    confirmed it is not recorded" on the desk, and the review's Start was enabled on it."""
    db, url, _ = served
    ctx = new_context(browser)
    page = ctx.new_page()
    page.goto(f"{url}/transfer-set?review=once")
    page.get_by_role("heading", name="Transfer set", exact=True).wait_for()
    settle(page)
    expect(page.get_by_text(re.compile("^Not confirmed"))).to_be_visible()
    expect(page.get_by_text(re.compile("^Confirmed 20"))).to_have_count(0)
    nav(page, "Run")
    expect(page.locator(".st-key-start button")).to_be_disabled()
    nav(page, "Transfer set")
    page.get_by_role("button", name="Confirm", exact=True).click()
    expect(page.get_by_text(re.compile(f"^Confirmed 20.* · by {CONFIRMER}"))).to_be_visible()
    store = Store(str(db))
    review = store.inputs.review("once")
    assert store.inputs.confirmation(review["transfer_set_hash"])["confirmed_by"] == CONFIRMER
    (run,) = store.log.runs(review["id"])
    assert run["set_confirmed_for_run"] == CONFIRMER  # the one-run acceptance stays the run's
    ctx.close()


def test_the_queue_opens_on_what_needs_this_reviewer_and_comes_back_to_it(browser, served):
    """Failed before: ana's queue opened on case-0002, which she had already reviewed; after her
    Agree on bo's case-0005 (opened from a link) it went on to bo's case-0004."""
    db, url, runs = served
    run = runs["team"]
    ctx = new_context(browser)
    page = ctx.new_page()
    page.goto(f"{url}/review?review=team&run={run}&reviewer=ana")
    wait_case(page, "case-0001")  # ana's: 2 (reviewed), 1, 0
    expect(page.locator("[data-abeq-case]")).to_contain_text("yours (ana)")
    page.goto(f"{url}/review?review=team&run={run}&case=case-0005&reviewer=ana")  # bo's, from a link
    wait_case(page, "case-0005")
    expect(page.locator("[data-abeq-case]")).to_contain_text("assigned to bo")
    settle(page)
    page.get_by_role("button", name=re.compile("^Agree with the judge")).click()
    page.get_by_text("Agreed with the judge: case-0005").wait_for()
    wait_case(page, "case-0001")  # back to ana's own queue
    assert actions(db, run)[-1][:2] == ("case-0005", "agree")
    ctx.close()


def test_take_back_asks_names_how_many_and_is_only_theirs(browser, served):
    """Failed before: one click on "Take back every assignment" took back all six, for anyone."""
    db, url, runs = served
    run = runs["takeback"]
    everyone = assigned(db, run)
    ctx = new_context(browser)
    page = ctx.new_page()
    # ana holds 3 of the 6 lead dealt: those are hers to take back (whoever holds or dealt none, none:
    # tests/test_assignments.py)
    page.goto(f"{url}/review?review=takeback&run={run}&reviewer=ana")
    wait_case(page, "case-0002")
    settle(page)
    open_box(
        page,
        "Reviewers: 6 of 6 cases assigned",
        page.get_by_role("button", name="Take back 3 assignment(s)…"),
    )
    page.get_by_role("button", name="Take back 3 assignment(s)…").click()
    expect(page.get_by_text(re.compile(r"^Take back 3 assignment\(s\) of run"))).to_be_visible()
    page.get_by_role("button", name="Cancel", exact=True).click()
    settle(page)
    assert assigned(db, run) == everyone  # asked, not done
    page.get_by_role("button", name="Take back 3 assignment(s)…").click()
    page.get_by_role("button", name="Yes, take back 3").click()
    page.get_by_text("Took back 3 assignment(s).").wait_for()
    assert assigned(db, run) == [(c, who) for c, who in everyone if who == "bo"]
    ctx.close()
