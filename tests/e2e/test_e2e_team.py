"""Work shared out in a real Chromium: the Reviewers box deals a run's cases out, and the reviewer's
own cases then come first in their queue with how many are left (issue 40, item 6).

Synthetic run of 8 cases: 3 and 7 errored; judged 0 eq, 1 div, 2 reg, 4 div, 5 reg, 6 eq."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run

from .helpers import desk, new_context, open_box, settle
from .test_e2e_queue import wait_case


def test_dealing_the_run_puts_each_reviewers_own_cases_first(browser, tmp_path):
    db = tmp_path / "desk.db"
    store = Store(str(db))
    run = synthetic_run(store, 8, review="team", error_every=4, seed=3)
    with desk(db) as url:
        ctx = new_context(browser)
        page = ctx.new_page()
        page.goto(f"{url}/review?review=team&run={run}&reviewer=bo")
        wait_case(page, "case-0002")  # the usual queue: regressed first
        settle(page)
        open_box(page, "Reviewers: 0 of 6 cases assigned", page.get_by_label("Reviewers", exact=True))
        page.get_by_label("Reviewers", exact=True).fill("ana, bo")
        page.get_by_role("button", name=re.compile("Deal out evenly")).click()
        expect(page.get_by_text("Assigned 6 case(s): ana 3, bo 3.")).to_be_visible()
        expect(page.get_by_text("Your queue (bo): 3 of 3 left")).to_be_visible()
        # the case open stays open (it is now 4th: bo's three come first) ...
        expect(page.get_by_role("combobox", name=re.compile(r"Case \(4 of 8, queue order\)"))).to_be_visible()
        page.goto(f"{url}/review?review=team&run={run}&reviewer=bo")  # ... and bo's queue opens on his first
        wait_case(page, "case-0001")  # bo's: 1 div, 4 div, 6 eq, in queue order
        assert {a["reviewer"] for a in Store(str(db)).assignments.of_run(run).values()} == {"ana", "bo"}
        ctx.close()
