"""The review queue in a real Chromium: deep links in a fresh context, Agree then κ, two reviewers
on one case, the keyboard, the clickable case list, a download.

Synthetic runs (no model): verdicts cycle equivalent, diverged, regressed; every 4th case errors.
"""

from __future__ import annotations

import re
import sqlite3

import pytest
from playwright.sync_api import expect

from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run

from .helpers import ARTIFACTS, desk, new_context, screenshot, settle


def fresh_page(browser):
    """A new browser context (no cookies, no session): what a colleague opening a shared link gets."""
    ctx = new_context(browser)
    return ctx, ctx.new_page()


@pytest.fixture
def two_reviews(tmp_path):
    db = tmp_path / "desk.db"
    store = Store(str(db))
    first = synthetic_run(store, 8, review="first", error_every=4, seed=1)
    second = synthetic_run(store, 6, review="second", error_every=0, seed=2)  # the newest: the default
    store.close()
    return db, first, second


def wait_case(page, case_id: str) -> None:
    box = page.get_by_role("combobox", name=re.compile(r"queue order"))
    expect(box).to_have_value(case_id, timeout=30_000)


def reviewer(page, name: str) -> None:
    """Type a name in the sidebar: it goes with the next Agree or Save (kept as the field is left,
    or with the click that leaves it). Typed once the page has drawn, as a person would."""
    settle(page)
    page.get_by_label("Reviewer (your name, kept with every action)").fill(name)


def override(page, reason: str) -> None:
    verdict = page.get_by_label("Verdict")
    verdict.click()
    verdict.fill("equivalent")
    verdict.press("ArrowDown")
    verdict.press("Enter")
    page.get_by_label("Reason (required to override").fill(reason)
    page.get_by_role("button", name="Save override").click()


def test_a_deep_link_opens_review_run_and_case_in_a_fresh_context(browser, two_reviews):
    db, first, second = two_reviews
    with desk(db) as url:
        ctx, page = fresh_page(browser)
        page.goto(f"{url}/review?review=first&run={first}&case=case-0005")
        wait_case(page, "case-0005")
        expect(page.get_by_test_id("stSidebar").get_by_role("combobox")).to_have_value("first")
        expect(page.get_by_role("combobox", name="Run", exact=True)).to_have_value(
            re.compile(f"^run {first} ")
        )
        page.get_by_role("button", name="Next →").click()
        wait_case(page, "case-0001")  # after the regressed cases, the diverged ones
        page.wait_for_url(f"**/review?review=first&run={first}&case=case-0001")  # the URL follows
        shared = page.url
        ctx.close()
        ctx, page = fresh_page(browser)  # the link, copied into another browser
        page.goto(shared)
        wait_case(page, "case-0001")
        page.reload()  # and a reload keeps it too
        wait_case(page, "case-0001")
        screenshot(page, ARTIFACTS / "review-queue.png")
        # the sidebar's review picker writes the review into the URL, and the page follows it
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_role("combobox").click()
        page.get_by_role("option", name="second").click()
        # (its run has a case-0001 too: the same case id stays open, as across runs of one review)
        page.wait_for_url(f"**/review?review=second&run={second}&case=case-0001")
        # New review: the popover closes once the review is created. As a person would, wait for
        # each redraw to finish before typing: a popover drawn again by a rerun still in flight (the
        # picker's, then the popover's own) comes back with an empty Name (CI under load, stop 42)
        settle(page)
        sidebar.get_by_role("button", name="New review").click()
        settle(page)
        sidebar_name = page.get_by_label("Name", exact=True)
        sidebar_name.fill("third")
        page.get_by_role("button", name="Create").click()
        expect(sidebar.get_by_role("combobox")).to_have_value("third")
        expect(page.get_by_role("button", name="Create")).to_be_hidden()
        page.wait_for_url("**/review?review=third")
        ctx.close()


def test_agree_then_kappa_updates(browser, two_reviews):
    db, first, _ = two_reviews
    with desk(db) as url:
        ctx, page = fresh_page(browser)
        page.goto(f"{url}/review?review=first&run={first}")
        wait_case(page, "case-0002")
        kappa = page.get_by_test_id("stMetric").filter(has_text="Cohen's κ")
        expect(kappa).to_contain_text("—")
        reviewer(page, "ana")
        override(page, "only reordered: nothing lost")  # regressed → equivalent
        page.get_by_text("Override saved").wait_for()
        wait_case(page, "case-0005")
        page.get_by_role("button", name=re.compile("^Agree with the judge")).click()  # regressed, accepted
        page.get_by_text("Agreed with the judge: case-0005").wait_for()
        # pairs (regressed, equivalent) and (regressed, regressed): 50% raw agreement; κ from two
        # actions is no figure (issue 46)
        expect(kappa).to_contain_text("too few (2)")
        expect(page.get_by_test_id("stMetric").filter(has_text="Agreement")).to_contain_text("50%")
        wait_case(page, "case-0001")
        page.get_by_role("button", name=re.compile("^Agree with the judge")).click()  # diverged, accepted
        expect(kappa).to_contain_text("too few (3)")  # under 10 actions
        ctx.close()
    con = sqlite3.connect(db)
    assert con.execute("select action, reviewer from overrides order by id").fetchall() == [
        ("override", "ana"),
        ("agree", "ana"),
        ("agree", "ana"),
    ]


def test_two_reviewers_overriding_one_case_get_the_warning(browser, two_reviews):
    db, first, _ = two_reviews
    link = f"/review?review=first&run={first}&case=case-0001"
    with desk(db) as url:
        (ca, a), (cb, b) = fresh_page(browser), fresh_page(browser)
        for page, name in ((a, "A"), (b, "B")):
            page.goto(url + link)
            wait_case(page, "case-0001")
            reviewer(page, name)
        override(a, "A: the reorder is harmless")
        a.get_by_text("Override saved").wait_for()
        override(b, "B: it dropped a step")  # B read the case before A saved
        b.get_by_text("A overrode this just now to equivalent: replace?").wait_for()
        screenshot(b, ARTIFACTS / "review-conflict.png")
        b.get_by_role("button", name="Replace with mine").click()
        b.get_by_text("Override saved").wait_for()
        ca.close()
        cb.close()
    con = sqlite3.connect(db)
    assert con.execute("select reviewer, seen_verdict from overrides order by id").fetchall() == [
        ("A", "candidate-diverged"),
        ("B", "equivalent"),
    ]


def test_keyboard_next_previous_agree_and_the_reason(browser, two_reviews):
    db, first, _ = two_reviews
    with desk(db) as url:
        ctx, page = fresh_page(browser)
        page.goto(f"{url}/review?review=first&run={first}")
        wait_case(page, "case-0002")
        reviewer(page, "kb")
        page.get_by_role("heading", name="Review", exact=True).click()  # focus the page, not a field
        page.keyboard.press("n")
        wait_case(page, "case-0005")
        settle(page)
        page.keyboard.press("p")
        wait_case(page, "case-0002")
        settle(page)
        page.wait_for_timeout(1300)  # A waits a moment on a case just shown (read it first)
        page.keyboard.press("a")
        page.get_by_text("Agreed with the judge: case-0002").wait_for()
        wait_case(page, "case-0005")  # the queue moved on
        settle(page)
        page.keyboard.press("o")
        reason = page.get_by_label("Reason (required to override")
        expect(reason).to_be_focused()
        page.keyboard.type("a note")  # typing in the field is text, not keys: no 'n' next, no 'a' agree
        page.wait_for_timeout(800)
        wait_case(page, "case-0005")
        expect(reason).to_have_value("a note")
        ctx.close()
    con = sqlite3.connect(db)
    assert con.execute("select case_id, action, reviewer from overrides").fetchall() == [
        ("case-0002", "agree", "kb")
    ]


def test_the_case_list_is_clickable_and_exports_download(browser, two_reviews, tmp_path):
    db, first, _ = two_reviews
    with desk(db) as url:
        ctx, page = fresh_page(browser)
        page.goto(f"{url}/review?review=first&run={first}&case=case-0002")
        wait_case(page, "case-0002")
        settle(page)
        page.get_by_text("Case list (8)").click()  # opening it reruns the board, which draws the grid
        grid = page.get_by_test_id("stDataFrame").first
        grid.scroll_into_view_if_needed()
        settle(page, 500)  # a click on the canvas reaches the grid that stays
        box = grid.bounding_box()
        # the grid is a canvas: its first column holds the row checkboxes, rows 35 px under a 35 px
        # header. Queue order: case-0002, case-0005, case-0001, … — click the third row's box.
        page.mouse.click(box["x"] + 17, box["y"] + 35 + 35 * 2 + 17)
        wait_case(page, "case-0001")
        with page.expect_download() as dl:
            page.get_by_role("button", name="CSV", exact=True).click()
        path = tmp_path / "export.csv"
        dl.value.save_as(path)
        assert path.read_text().startswith("case_id,status,verdict,judge_verdict,overridden")
        ctx.close()
