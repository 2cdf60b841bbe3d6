"""The desk's policy is the MCP server's (issue 44 item 4), in a real Chromium: a reviewer signed in
through a trusted proxy's header on a team desk is offered no runner command, no free-text API base
and no trust in the set's code, unless the person who started `abeq app` allowed them."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit

from playwright.sync_api import expect
from test_desk_policy import team_store

from .helpers import new_context, settle
from .test_e2e_signin import abeq_app, shown

BO = "bo@example.org"


def _open(page, link: str, path: str) -> None:
    """A page of the desk on review 'team' (the launch token goes too), once it has drawn."""
    parts = urlsplit(link)
    query = urlencode({"review": "team", **dict(parse_qsl(parts.query))})
    page.goto(f"{parts.scheme}://{parts.netloc}/{path}?{query}")
    page.get_by_text(shown(f"Signed in as {BO}")).wait_for()
    settle(page)


def test_a_signed_in_reviewer_is_offered_no_command_api_base_nor_code_trust(browser, tmp_path):
    """`abeq app --trusted-proxy 127.0.0.1` with no --allow-* option (what each option then offers is
    tests/test_desk_policy.py's, on the same pages)."""
    db = team_store(tmp_path / "desk.db")
    ctx = new_context(browser)
    ctx.set_extra_http_headers({"X-Forwarded-Email": BO})
    page = ctx.new_page()
    with abeq_app(tmp_path, db, "--trusted-proxy", "127.0.0.1") as (link, _):
        _open(page, link, "transfer-set")
        page.get_by_role("heading", name="Transfer set", exact=True).wait_for()
        page.get_by_role("button", name="Confirm", exact=True).wait_for()
        expect(page.get_by_text("Trust its code too")).to_have_count(0)

        _open(page, link, "run")
        page.get_by_role("heading", name="Run", exact=True).wait_for()
        expect(page.get_by_text("What runs on this desk may use")).to_be_visible()
        expect(page.get_by_text("tools: the model acts")).to_be_visible()  # the runner modes are drawn
        expect(page.get_by_text("command: any agent CLI")).to_have_count(0)
        expect(page.get_by_label("Runner model (as this desk allows)")).to_be_visible()
        expect(page.get_by_label(re.compile(r"^API base"))).to_have_count(0)
        expect(page.get_by_text("This set's checks run code on this machine").first).to_be_visible()
        expect(page.get_by_text("Run the set's code in this run")).to_have_count(0)
        expect(page.get_by_text("This desk does not offer to run a set's code")).to_be_visible()
    ctx.close()
