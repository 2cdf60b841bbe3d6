"""The Transfer set page answers "Would this set notice a loss?" in a real Chromium: the mutation test
starts from the page, the original is drawn with each section coloured by its state, and a survived
section opens its evidence (the transcripts side by side)."""

from __future__ import annotations

import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from playwright.sync_api import expect

from .helpers import ARTIFACTS, desk, nav, screenshot, settle


def cached_calls(db: Path) -> None:
    """Every call the page's test will need, made here and cached in the desk's database (a first
    model call in a fresh desk process on a loaded machine took minutes), and the set confirmed (as a
    run with --confirm stores it); the record of this test is removed, so the page starts from the
    cache alone."""
    from abeq import mutate, sets
    from abeq.desk import session
    from abeq.documents import Document
    from abeq.results.store.store import Store

    store = Store(str(db))
    session.load_example(store)  # what the desk loads on a fresh database
    review = store.inputs.review(session.EXAMPLE_REVIEW)
    original = store.inputs.document(review["original_hash"])
    ts = sets.confirm(store.inputs.transfer_set(review["transfer_set_hash"]), original["hash"])
    doc = Document(original["name"], original["content"])
    mutate(doc, ts, runner_model="scripted/rules", store=store, all_cases=True)
    store.sql.tx(store.sql.db.conn.execute, "delete from mutations")
    store.close()


def test_the_coloured_map_and_a_survived_sections_evidence(page, tmp_path):
    db = tmp_path / "desk.db"
    # in a thread of its own: Playwright's sync API keeps an event loop running in this one
    with ThreadPoolExecutor(1) as pool:
        pool.submit(cached_calls, db).result()
    with desk(db) as url:
        page.goto(url)
        page.get_by_role("heading", name="Documents", exact=True).wait_for(timeout=30_000)
        nav(page, "Run")  # the mutation test uses the Run page's models
        for label, value in (
            ("Runner model (any litellm model string)", "scripted/rules"),
            ("Judge model", "scripted/rules"),
            ("Concurrency (model calls in flight; 1 = one case after another)", "1"),  # one case per kill
        ):
            field = page.get_by_label(label)
            field.fill(value)
            field.press("Enter")
            settle(page)  # each Enter reruns the page: the next field as it redraws it
        nav(page, "Transfer set")
        # (the set was confirmed with the calls cached above; the page's own gate is in test_desk_mutation)
        page.get_by_text("at most 0 model calls").wait_for(timeout=120_000)  # the estimate: all cached
        page.get_by_role("button", name="Would this set notice a loss?").click(timeout=120_000)
        page.get_by_text("Mutation score 86%").wait_for(timeout=180_000)

        blocks = page.locator("div[data-state]")
        expect(blocks).to_have_count(8)  # the front matter (not a section) and the 7 sections, drawn
        states = [blocks.nth(i).get_attribute("data-state") for i in range(blocks.count())]
        assert states.count("survived: claimed but unnoticed") == 1  # the Preamble: no case makes it matter
        assert sum(s.startswith("killed by") for s in states) == 6
        survived = page.locator('div[data-state="survived: claimed but unnoticed"]')
        assert survived.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(255, 248, 197)"
        killed = page.locator('div[data-state^="killed"]').first
        assert killed.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(218, 251, 225)"

        button = page.get_by_role("button", name="Evidence").first  # the Preamble's, the first section
        button.click()
        heading = page.get_by_text("Evidence: Preamble")
        heading.wait_for()
        # in place, under its own section: in view where it was asked for (it drew ~935 px below)
        box, below = heading.bounding_box(), button.bounding_box()
        assert 0 <= box["y"] and box["y"] + box["height"] <= page.viewport_size["height"], box
        assert 0 < box["y"] - below["y"] < 200, (box, below)
        # the original's and the mutant's transcripts are the same: said so, and shown once
        page.get_by_text("produced the identical transcript").wait_for()
        page.get_by_text("Not a trust figure").first.wait_for()  # the scripted double made the calls
        page.get_by_text("compare the transcripts").first.wait_for()
        screenshot(page, ARTIFACTS / "transfer-set-mutation.png")

    con = sqlite3.connect(db)
    ((status, score, report),) = con.execute("select status, score, report from mutations").fetchall()
    assert (status, score) == ("finished", 0.8571)
    assert json.loads(report)["calls"]["made"] == 0  # from the cache alone
