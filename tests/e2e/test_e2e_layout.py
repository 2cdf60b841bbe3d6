"""The desk laid out for a reviewer's eye (issue 38), in a real Chromium at 1440x900 and 1024x768:
the case open, its verdict, its behaviour delta and Agree/Override in the first screen; after Agree
the next case named at the top; the A key waits a moment on a case just shown; the reviewer's
name survives a reload and a deep link; History fits at 1024 (it wraps); Documents says what abeq is
and loads a dropped file at once.

One desk for the module's tests, one browser context per screen size.
"""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from playwright.sync_api import expect

from abeq.desk.session import default_reviewer
from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run

from .helpers import ARTIFACTS, WAIT_MS, desk, settle
from .test_e2e_queue import wait_case

SIZES = [(1440, 900), (1024, 768)]


# a behaviour delta as long as a real judge's (five lines at 1024 px), above the case's input
DELTA = (
    "The candidate skipped the step that strips ticket ids from each entry, so the release notes it "
    "wrote still carry JIRA-1234 style references; it also grouped the fixes under a single heading "
    "instead of by type, which the original asks for explicitly in its Steps section."
)


def make_uncertain(store: Store, run: int, case_id: str) -> None:
    """Two more judge samples for the case, one of them another verdict: the case is uncertain."""
    row = store.sql.one("select * from run_cases where run_id = ? and case_id = ?", [run, case_id])
    keys = json.loads(row["judge_keys"])
    first = store.sql.one("select * from judgements where key = ?", [keys[0]])
    for n, verdict in enumerate(["equivalent", first["verdict"]], start=1):
        store.cache.put_judgement({**first, "key": f"{keys[0]}-{n}", "sample": n, "verdict": verdict})
    keys += [f"{keys[0]}-1", f"{keys[0]}-2"]
    store.sql.update(
        "run_cases",
        {"run_id": run, "case_id": case_id},
        {"judge_keys": json.dumps(keys), "agreement": 0.67, "uncertain": 1},
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    db = tmp_path_factory.mktemp("layout") / "desk.db"
    store = Store(str(db))
    runs = {
        size: synthetic_run(store, 8, review=f"r{size[0]}", error_every=0, seed=size[0], words=300)
        for size in SIZES
    }
    for size in SIZES:  # the first case in the queue: uncertain, its badge the longest
        make_uncertain(store, runs[size], "case-0002")
    store.sql.execute("update judgements set behaviour_delta = ? where behaviour_delta != ''", [DELTA])
    runs["history"] = synthetic_run(store, 4, review="r1440", error_every=0, seed=7)  # a second round
    store.sql.update(  # a candidate's name longer than its column: shown whole, wrapped
        "documents", {"name": "candidate.md"}, {"name": "candidate-rewritten-for-round-two-of-the-release.md"}
    )
    store.close()
    with desk(db) as url:
        yield db, url, runs


def in_view(page, locator) -> bool:
    """The element is wholly inside the viewport as it stands (nothing scrolled)."""
    box = locator.bounding_box()
    vp = page.viewport_size
    return (
        bool(box)
        and box["y"] >= 0
        and box["y"] + box["height"] <= vp["height"]
        and (box["x"] + box["width"] <= vp["width"])
    )


def shown_case(page):
    return page.locator("[data-abeq-case]")


def badge(page):
    """The effective verdict's badge (the first place its words appear: the case's own column)."""
    verdict = shown_case(page).get_attribute("data-abeq-verdict")
    return page.get_by_text(verdict, exact=True).first


def main_pane_to_bottom(page) -> None:
    page.evaluate(
        "() => { const m = document.querySelector('[data-testid=stMain]'); m.scrollTo(0, m.scrollHeight); }"
    )
    page.wait_for_timeout(300)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_case_and_its_actions_are_on_the_first_screen(browser, served, size):
    db, url, runs = served
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    page.goto(f"{url}/review?review=r{size[0]}&run={runs[size]}")
    first = shown_case(page).get_attribute("data-abeq-case", timeout=WAIT_MS)
    wait_case(page, first)
    settle(page)
    verdict = badge(page)
    delta = page.get_by_text("behaviour delta")
    agree = page.get_by_role("button", name="Agree with the judge")
    save = page.get_by_role("button", name="Save override")
    case_input = page.get_by_text(re.compile(r"^Case input \(")).first
    first_line = page.get_by_text("synthetic input 2", exact=True)
    name = page.get_by_label("Reviewer (your name")
    for what in (shown_case(page), verdict, delta, agree, save, case_input, first_line, name):
        assert in_view(page, what), (size, what)
    # no empty band above the title (Streamlit's own is ~100 px)
    assert page.get_by_role("heading", name="Review", exact=True).bounding_box()["y"] <= 70
    # the uncertain badge whole (it wraps), Agree the primary action and Save override the other
    cut = page.evaluate(
        """() => [...document.querySelectorAll('.stMarkdownBadge')]
                 .filter(b => b.scrollWidth > b.clientWidth + 1).map(b => b.textContent)"""
    )
    assert not cut and in_view(page, page.get_by_text("(agreement 67%)")), (size, cut)
    assert "primary" in agree.get_attribute("data-testid") and "secondary" in save.get_attribute(
        "data-testid"
    )
    page.screenshot(path=str(ARTIFACTS / f"review-first-screen-{size[0]}.png"))
    # the name comes from the machine: nobody has to type it to agree
    name = page.get_by_label("Reviewer (your name")
    expect(name).to_have_value(default_reviewer())

    # A on a case just shown does nothing (a reviewer pressing it twice must read the next case first)
    page.wait_for_timeout(1500)
    main_pane_to_bottom(page)  # reading the transcripts, far below
    page.keyboard.press("a")  # agree: the first case has been in view long enough
    expect(shown_case(page)).not_to_have_attribute("data-abeq-case", first)
    second = shown_case(page).get_attribute("data-abeq-case")
    status = page.get_by_role("status").filter(has_text=second)  # announced (a live region)
    expect(status).to_contain_text(f"Agreed with the judge: {first} stays")
    page.keyboard.press("a")  # at once: refused, and says so
    expect(shown_case(page)).to_have_attribute("data-abeq-wait", "1")
    settle(page)
    # the next case and its verdict at the top of the screen, not the tail of its transcript
    box = shown_case(page).bounding_box()
    assert 0 <= box["y"] <= size[1] / 4, box
    assert in_view(page, badge(page)) and in_view(page, agree)
    page.screenshot(path=str(ARTIFACTS / f"review-after-agree-{size[0]}.png"))
    ctx.close()
    con = sqlite3.connect(db)
    rows = con.execute(
        "select case_id, action, reviewer from overrides where run_id = ?", [runs[size]]
    ).fetchall()
    assert rows == [(first, "agree", default_reviewer())]  # the second A was not taken


def test_a_typed_name_survives_a_reload_and_a_deep_link_and_history_fits(browser, served):
    db, url, runs = served
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    page.goto(f"{url}/review?review=r1440&run={runs[(1440, 900)]}")
    name = page.get_by_label("Reviewer (your name")
    name.wait_for()
    settle(page)  # type once the page has drawn, as a person would
    name.fill("Bea Q")
    name.press("Tab")  # typed and left: no action taken yet
    page.wait_for_url("**reviewer=Bea+Q**")
    page.reload()  # before any action, the name stays
    expect(page.get_by_label("Reviewer (your name")).to_have_value("Bea Q")
    settle(page)
    page.get_by_role("button", name="Agree with the judge").click()
    expect(shown_case(page)).to_contain_text("Agreed with the judge")
    link = page.url
    ctx.close()
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})  # the link, in a fresh browser
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    page.goto(link)
    expect(page.get_by_label("Reviewer (your name")).to_have_value("Bea Q")

    # History at 1024: the rounds table within the page (it wraps), every candidate's name whole
    # with a tooltip, the start's date and time; its links keep the name
    page.set_viewport_size({"width": 1024, "height": 768})
    page.get_by_test_id("stSidebarNav").get_by_text("History", exact=True).click()
    page.get_by_role("heading", name="History", exact=True).wait_for()
    table = page.locator("table.abeq-rounds")
    table.wait_for()
    settle(page)
    sizes = table.evaluate(
        """t => { const m = document.querySelector('[data-testid=stMain]');
                  return [t.scrollWidth, t.parentElement.clientWidth, t.getBoundingClientRect().right,
                          m.scrollWidth, m.clientWidth]; }"""
    )
    assert sizes[0] <= sizes[1] + 1 and sizes[2] <= 1024 and sizes[3] <= sizes[4] + 1, sizes
    headers = table.evaluate("t => [...t.querySelectorAll('th')].map(h => h.textContent)")
    for col in ("round", "candidate", "started", "regr.", "err.", "pass"):
        assert col in headers, (col, headers)
    long_name = "candidate-rewritten-for-round-two-of-the-release.md"
    cell = table.locator(f'td[title="{long_name}"]').first
    expect(cell).to_have_text(long_name)
    assert cell.bounding_box()["x"] + cell.bounding_box()["width"] <= 1024
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", table.inner_text())  # a time, not only a date
    assert "reviewer=Bea+Q" in table.locator("a").first.get_attribute("href")
    page.screenshot(path=str(ARTIFACTS / "history-1024.png"))
    page.set_viewport_size({"width": 1440, "height": 900})

    # Documents: a first visit reads what abeq is; a dropped file is loaded at once (one step)
    page.get_by_test_id("stSidebarNav").get_by_text("Documents", exact=True).click()
    page.get_by_text("abeq checks whether a rewritten instruction file").wait_for()
    page.get_by_text("Load another candidate").click()
    upload = page.get_by_test_id("stFileUploaderDropzoneInput").last  # the candidate's column
    upload.set_input_files(
        files=[{"name": "dropped.md", "mimeType": "text/markdown", "buffer": b"# Steps\n- one step\n"}]
    )
    page.get_by_text("dropped.md · sha256").wait_for()  # loaded: no second button to press
    ctx.close()
