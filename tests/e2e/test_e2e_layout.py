"""The desk laid out for a reviewer's eye (issue 38), in a real Chromium at 1440x900 and 1024x768:
the case open, its verdict, its behaviour delta and Agree/Override in the first screen; after Agree
the next case named at the top; the A key waits a moment on a case just shown; the reviewer's
name survives a reload and a deep link; History's columns fit at 1440; Documents says what abeq is
and loads a dropped file at once.

One desk for the module's tests, one browser context per screen size.
"""

from __future__ import annotations

import sqlite3

import pytest
from playwright.sync_api import expect

from abeq.desk.session import default_reviewer
from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run

from .helpers import ARTIFACTS, WAIT_MS, desk, settle
from .test_e2e_queue import wait_case

SIZES = [(1440, 900), (1024, 768)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    db = tmp_path_factory.mktemp("layout") / "desk.db"
    store = Store(str(db))
    runs = {
        size: synthetic_run(store, 8, review=f"r{size[0]}", error_every=0, seed=size[0], words=300)
        for size in SIZES
    }
    runs["history"] = synthetic_run(store, 4, review="r1440", error_every=0, seed=7)  # a second round
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
    for what in (shown_case(page), verdict, delta, agree, save):
        assert in_view(page, what), (size, what)
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
    page.get_by_role("button", name="Agree with the judge").click()
    page.wait_for_url("**reviewer=Bea+Q**")
    page.reload()
    expect(page.get_by_label("Reviewer (your name")).to_have_value("Bea Q")
    link = page.url
    ctx.close()
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})  # the link, in a fresh browser
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    page.goto(link)
    expect(page.get_by_label("Reviewer (your name")).to_have_value("Bea Q")

    # History: every column of the rounds table within the page at 1440, and its links keep the name
    page.get_by_test_id("stSidebarNav").get_by_text("History", exact=True).click()
    page.get_by_role("heading", name="History", exact=True).wait_for()
    grid = page.get_by_test_id("stDataFrame").first
    grid.wait_for()
    page.wait_for_timeout(800)
    widths = grid.evaluate(
        """g => { const s = g.querySelector('.dvn-scroller');
                  return [s.scrollWidth, s.clientWidth, g.getBoundingClientRect().right]; }"""
    )
    assert widths[0] <= widths[1] + 1 and widths[2] <= 1440, widths  # no horizontal scroll
    headers = grid.evaluate("g => [...g.querySelectorAll('th')].map(h => h.textContent)")
    for col in ("pass", "regressed", "overridden", "directness", "mutation score"):
        assert any(col in h for h in headers), (col, headers)
    page.screenshot(path=str(ARTIFACTS / "history-1440.png"))

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
