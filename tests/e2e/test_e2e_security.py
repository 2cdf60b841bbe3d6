"""The desk on a run full of hostile strings in a real Chromium: no page makes a request to any
host but the desk's own (issue 27 item 6)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from conftest import EXAMPLE

from abeq import sets
from abeq.documents import Document, load_document
from abeq.execution.engine import Engine, RunConfig
from abeq.models import ModelSpec
from abeq.results.review.reviewing import record
from abeq.results.store.store import Store

from .helpers import desk, nav

IMG = "![x](http://evil.example/{}.png)"
HOSTILE = (
    "{} <img src=http://evil.example/{}.png> www.evil.example http://evil.example/{} [l](http://evil.example)"
)


def hostile(what: str) -> str:
    return IMG.format(what) + " " + HOSTILE.format(what, what, what)


def _hostile_run(db) -> int:
    store = Store(str(db))
    original = load_document(EXAMPLE / "SKILL.md")
    candidate = Document(hostile("candidate-name") + ".md", (EXAMPLE / "candidate-lossy.md").read_text())
    ts = sets.load(EXAMPLE / "transfer-set.json")
    cases = [
        c.model_copy(
            update={
                "id": f"{hostile('case-id')}-{i}",
                "exercises_sections": [*c.exercises_sections, hostile("section")],
                "rationale": hostile("rationale"),
                "expectations": [hostile("expectation")],
            }
        )
        for i, c in enumerate(ts.cases)
    ]
    ts = sets.confirm(ts.model_copy(update={"cases": cases}), original.hash)
    spec = ModelSpec(name="scripted/rules")
    cfg = RunConfig(runner=spec, judge=spec, review="hostile", allow_thin=True)
    run_id = Engine(store, original, candidate, ts, cfg).run()
    record(
        store,
        run_id,
        cases[0].id,
        action="agree",
        verdict=None,
        reason=hostile("reason"),
        reviewer=hostile("rev"),
    )
    record(
        store, run_id, cases[1].id, action="override", verdict="equivalent", reason=hostile("why"),
        reviewer=hostile("reviewer"),
    )  # fmt: skip
    store.close()
    return run_id


def test_no_page_of_a_hostile_run_requests_another_host(page, tmp_path):
    db = tmp_path / "desk.db"
    with ThreadPoolExecutor(1) as pool:  # the engine's asyncio.run cannot share Playwright's loop
        run_id = pool.submit(_hostile_run, db).result()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    with desk(db) as url:
        page.goto(f"{url}/review?review=hostile&run={run_id}")
        page.get_by_role("heading", name="Review", exact=True).wait_for(timeout=30_000)
        page.get_by_text("evil.example", exact=False).first.wait_for()  # the strings are on the page
        for _ in range(3):  # the agreed case, the overridden one, an unreviewed one
            page.get_by_role("button", name="Next →").click()
            page.wait_for_timeout(800)
        for title in ("Documents", "Transfer set", "Run", "History", "Compare", "Review"):
            nav(page, title)
            page.wait_for_timeout(1500)  # images and fonts load after the page draws
            for exp in page.get_by_test_id("stExpander").all()[:6]:
                exp.click()
            page.wait_for_timeout(500)
        assert page.get_by_test_id("stException").count() == 0
    hosts = {urlsplit(u).hostname for u in requests if urlsplit(u).scheme in ("http", "https", "ws", "wss")}
    assert hosts and hosts <= {"127.0.0.1", "localhost"}, sorted(u for u in requests if "127.0.0.1" not in u)
