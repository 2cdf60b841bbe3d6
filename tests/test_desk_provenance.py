"""Where what the desk shows came from, and who acts (issue 46, item 7), through AppTest: a document
shows the name and place it was loaded from, not the name its text was first stored under; two
desks acting under the machine's default name are told; a typed name survives a reload before any
action; the Run page follows the run it just started and a newer one, never a stale one."""

from __future__ import annotations

from conftest import DESK_APP, EXAMPLE
from streamlit.testing.v1 import AppTest
from test_app import confirm_and_open_run

from abeq.api import prepare_run
from abeq.desk import documents_vm, session, worker
from abeq.results.store.liveness import owner_id
from abeq.results.store.store import Store

DOCUMENTS = "desk_pages/1_documents.py"


def fresh(**params) -> AppTest:
    at = AppTest.from_file(str(DESK_APP), default_timeout=60)
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    return at


def captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption).replace("\\", "")


def test_a_document_shows_the_name_and_path_it_was_loaded_from(app, tmp_path):
    text = "# Release notes\n\n## Steps\n- Gather the changes.\n"
    app.switch_page(DOCUMENTS).run()
    app.radio(key="candidate_mode").set_value("Paste").run()
    app.text_input(key="candidate_name").input("older-name.md")
    app.text_area(key="candidate_text").input(text)
    app.button(key="candidate_load_text").click().run()
    assert "older-name.md · sha256" in captions(app)
    path = tmp_path / "skill" / "SKILL.md"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")  # the same text, stored already under the older name
    app.radio(key="candidate_mode").set_value("Path").run()
    app.text_input(key="candidate_path").input(str(path))
    app.button(key="candidate_load_path").click().run()
    assert not app.exception, app.exception
    said = captions(app)
    assert "older-name.md" not in said
    assert "SKILL.md · sha256" in said and f"from {path.resolve()}" in said
    assert documents_vm.source_of("git:HEAD~2:skill/SKILL.md") == "git:HEAD~2:skill/SKILL.md"


def test_two_desks_under_the_default_name_are_told(db):
    first = fresh()
    assert not first.sidebar.warning  # alone
    second = fresh()
    (said,) = [w.value for w in second.sidebar.warning]
    assert "Another desk open now also acts as" in said and session.default_reviewer() in said.replace(
        "\\", ""
    )
    second.sidebar.text_input(key="ov_reviewer").input("Bea Q").run()
    assert not second.sidebar.warning  # her own name now
    first.run()
    assert not first.sidebar.warning


def test_a_typed_name_survives_a_reload_before_any_action(db):
    at = fresh()
    at.sidebar.text_input(key="ov_reviewer").input("Bea Q").run()  # typed, then the field left
    assert at.query_params.get("reviewer") in ("Bea Q", ["Bea Q"])
    again = fresh(**{k: v for k, v in at.query_params.items()})  # a reload: the URL, a new session
    assert again.sidebar.text_input(key="ov_reviewer").value == "Bea Q"


def test_the_run_page_follows_the_run_it_started_then_a_newer_one(app, db):
    confirm_and_open_run(app)
    app.button(key="start").click().run()
    assert not app.exception, app.exception
    (started,) = [r["id"] for r in Store(db).log.runs()]
    said = " ".join(i.value for i in app.info)
    assert "has no run yet" not in said and f"Run {started}" in said
    assert worker.wait(started, 120)
    # a newer run of the review, begun elsewhere (a terminal), running now
    newer = prepare_run(
        EXAMPLE / "SKILL.md",
        EXAMPLE / "candidate-lossy.md",
        EXAMPLE / "transfer-set.json",
        runner_model="scripted/rules",
        store=Store(db),
        confirm=True,
        review="example",
    ).run_id
    Store(db).log.claim_run(newer, owner_id())
    app.run()
    bars = [p.proto.text for p in app.get("progress")]
    assert bars and bars[0].startswith(f"Run {newer}:"), bars  # not "Run {started}: … finished"
    assert f"Run {newer} is" in " ".join(i.value for i in app.info)
