"""The desk's runner modes: the Run page offers chat, tools and command; Review shows what a run in a
workspace did (files changed, tool trace)."""

from __future__ import annotations

import shlex
import sys

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from abeq.desk import worker
from abeq.results.store.store import Store


@pytest.fixture
def app(app):
    """The desk on the Run page: the example's set confirmed, both models scripted."""
    at = app
    at.switch_page("desk_pages/2_transfer_set.py").run()
    at.button(key="confirm").click().run()
    at.switch_page("desk_pages/3_run.py").run()
    at.text_input(key="runner_model").input("scripted/rules")
    at.text_input(key="judge_model").input("scripted/rules")
    return at


def start(at: AppTest, db: str) -> int:
    at.button(key="start").click().run()
    run_id = Store(db).log.runs()[0]["id"]
    assert worker.wait(run_id, 120)
    at.switch_page("desk_pages/4_review.py").run()
    assert not at.exception
    return run_id


def test_the_run_page_offers_three_runner_modes(app):
    modes = app.radio(key="runner_mode").options
    assert [m.split(":")[0] for m in modes] == ["chat", "tools", "command"] and app.radio(
        key="runner_mode"
    ).value == "chat"


def test_a_tools_run_shows_its_workspace_changes_and_tool_trace_on_review(app, db):
    app.radio(key="runner_mode").set_value("tools").run()
    start(app, db)
    heads = [m.value for m in app.markdown if "workspace changes" in m.value or "tool trace" in m.value]
    assert sorted(heads) == [  # each arm's block once (a merge once rendered it twice)
        "**Candidate: tool trace**",
        "**Candidate: workspace changes**",
        "**Original (teacher): tool trace**",
        "**Original (teacher): workspace changes**",
    ]
    assert any("CHANGELOG" in c.value for c in app.caption)  # the file each arm wrote
    assert any("CHANGELOG.md" in c.value for c in app.code)  # and its diff


def test_a_command_run_from_the_desk(app, db, tmp_path):
    app.radio(key="runner_mode").set_value("command").run()
    app.button(key="start").click().run()
    assert any("needs a command" in e.value for e in app.error)  # refused, nothing started
    agent = ROOT / "tests" / "agents" / "changelog_agent.py"
    cmd = shlex.join([sys.executable, str(agent), "--log", str(tmp_path / "calls.log")])
    app.text_input(key="runner_cmd").input(cmd).run()
    run_id = start(app, db)
    assert Store(db).log.run(run_id)["runner_model"].startswith("command: ")
    assert (tmp_path / "calls.log").read_text().count("\n") == 14


def test_the_run_page_says_a_tools_runs_ceiling(app):
    app.radio(key="runner_mode").set_value("tools").run()
    said = [c.value for c in app.caption if c.value.startswith("Tools mode: each runner run")]
    assert len(said) == 1 and "could reach 434 turns and 2,800,000 tokens (at most ~$0.0000)" in said[0]
    app.radio(key="runner_mode").set_value("chat").run()
    assert not any(c.value.startswith("Tools mode") for c in app.caption)
