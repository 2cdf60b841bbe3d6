"""The desk's other pages through AppTest: the transfer set's case detail and unsaved edits, the
next-step banner, links on History and Run, and the small things a reviewer reads."""

from __future__ import annotations

import re

from conftest import DESK_APP
from streamlit.testing.v1 import AppTest

from abeq.desk import session, worker
from abeq.results.review.reviewing import record
from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run


def plain(text: str) -> str:
    """What a reader sees of text the desk escaped for Markdown."""
    return text.replace("\\", "")


def editor_key(db: str) -> str:
    return f"ts_editor_{Store(db).inputs.review('example')['transfer_set_hash']}"


def test_the_case_detail_panel_shows_a_whole_case(app):
    app.switch_page("desk_pages/2_transfer_set.py").run()
    app.selectbox(key="ts_detail_case").select("edge-1").run()
    shown = plain(" ".join(m.value for m in app.markdown))
    assert "**Gate answers** (1)" in shown and "**Checks** (1)" in shown
    assert "Exercises:** Gathering the input · Sorting changes by type" in shown
    assert any("(request for" in c.value or len(c.value) > 40 for c in app.code)  # the input, whole
    gates = next(d.value for d in app.dataframe if "it answers" in d.value.columns)
    assert len(gates) == 1
    checks = next(d.value for d in app.dataframe if "reads" in d.value.columns)
    assert len(checks) == 1 and checks["type"][0]


def test_unsaved_edits_are_named_and_a_half_filled_row_is_refused(app, db):
    app.switch_page("desk_pages/2_transfer_set.py").run()
    app.session_state[editor_key(db)] = {
        "edited_rows": {0: {"input": "A different request."}},
        "added_rows": [],
        "deleted_rows": [1],
    }
    app.run()
    warning = plain(next(w.value for w in app.warning if w.value.startswith("Unsaved edits")))
    assert "edited happy-1: input" in warning and "deleted happy-2" in warning
    app.selectbox(key="ts_detail_case").select("happy-1").run()
    assert any("unsaved edits: input" in m.value for m in app.markdown)

    before = Store(db).inputs.review("example")["transfer_set_hash"]
    app.session_state[editor_key(db)] = {
        "edited_rows": {},
        "added_rows": [{"id": "new-1", "type": "edge"}],
        "deleted_rows": [],
    }
    app.run()
    errors = [plain(e.value) for e in app.error]
    assert (
        "row 8 (new-1): input is empty\n\nFill it in, or delete the row: a half-filled row is not saved."
        in errors
    )
    assert next(b for b in app.button if b.label == "Save edits").disabled
    assert app.button(key="confirm").disabled
    assert Store(db).inputs.review("example")["transfer_set_hash"] == before


def test_an_error_and_its_hint_are_two_paragraphs(app):
    app.sidebar.text_input(key="new_review").input("example")
    app.sidebar.button[0].click().run()
    (err,) = app.sidebar.error
    assert (
        err.value == "a review named 'example' already exists\n\nPick it in the list, or choose another name."
    )


def test_new_review_closes_its_popover_after_create(app, db):
    app.session_state["new_review_open"] = True
    app.sidebar.text_input(key="new_review").input("second")
    app.sidebar.button[0].click().run()
    assert app.session_state["new_review_open"] is False
    assert (
        Store(db).inputs.review("second")
        and app.sidebar.selectbox(key="review_id").value == Store(db).inputs.review("second")["id"]
    )
    assert app.query_params["review"] == "second"


def test_compare_renders_its_note_as_markdown(app):
    app.switch_page("desk_pages/6_compare.py").run()
    note = next(i.value for i in app.info if "local/smollm2" in i.value)
    assert "`local/smollm2`" in note and "\\" not in note


def test_the_next_step_follows_the_run_and_the_reviews(db):
    store = Store(db)
    run = synthetic_run(store, 4, review="r", error_every=0)
    step = lambda: session.next_step(store, store.inputs.review("r"), {})  # noqa: E731
    from abeq.results.store.liveness import owner_id
    from abeq.timestamps import now

    store.log.update_run(run, status="running", finished_at=None, owner=owner_id(), heartbeat_at=now())
    for i in range(4):  # nothing judged yet: the banner says so, it does not send the reviewer to read
        store.log.put_run_case(
            {"run_id": run, "case_id": f"case-{i:04d}", "position": i, "status": "pending"}
        )
    assert step().startswith(f"Run {run} is running: 0 of 4 cases done")
    run = synthetic_run(store, 4, review="r", error_every=0)  # a later run of the review, judged
    store.log.update_run(run, status="running", finished_at=None, owner=owner_id(), heartbeat_at=now())
    assert step().startswith(f"Run {run} is running: 4 of 4 cases done")
    store.log.update_run(run, owner="nohost-elsewhere:1", heartbeat_at="2020-01-01T00:00:00Z")  # long dead
    assert step().startswith(f"Run {run} stopped (interrupted) after 4 of 4 cases")
    store.log.update_run(run, status="finished")
    assert "4 of 4 judged cases await a reviewer" in step()
    for c in ("case-0000", "case-0001", "case-0002", "case-0003"):
        record(store, run, c, action="agree", reviewer="ana")
    assert step().startswith(f"Every judged case of run {run} is reviewed")


def test_before_the_first_run_the_banner_says_start_and_the_sidebar_names_the_model(app):
    app.switch_page("desk_pages/2_transfer_set.py").run()
    app.button(key="confirm").click().run()
    assert app.info[0].value == "Start a run on **Run**."  # the sidebar names the model (issue 38: once)
    assert any("embedded model is tiny" in c.value for c in app.sidebar.caption)
    # local, readable time (the database keeps UTC ISO 8601)
    assert any(re.search(r"Confirmed \d{4}-\d\d-\d\d \d\d:\d\d \w+ ·", plain(s.value)) for s in app.success)


def test_history_rows_and_the_run_page_link_to_their_run_on_review(app, db):
    app.switch_page("desk_pages/2_transfer_set.py").run()
    app.button(key="confirm").click().run()
    app.switch_page("desk_pages/3_run.py").run()
    app.text_input(key="runner_model").input("scripted/rules")
    app.text_input(key="judge_model").input("scripted/rules")
    app.button(key="start").click().run()
    run_id = Store(db).log.runs()[0]["id"]
    assert worker.wait(run_id, 120)
    app.run()
    (link,) = [p for p in app.get("page_link") if p.value == "Read the verdicts on Review"]
    assert link.proto.query_string == f"review=example&run={run_id}"
    app.switch_page("desk_pages/5_history.py").run()
    # the table is HTML that wraps within 1024 px (issue 46): each run's number is its link
    (table,) = [h.proto.body for h in app.get("html") if "<table" in h.proto.body]
    assert f'href="review?review=example&amp;run={run_id}"' in table


def test_compare_opens_the_linked_case_and_links_back_to_review(db):
    run = synthetic_run(Store(db), 3, review="c", error_every=0)
    at = AppTest.from_file(str(DESK_APP), default_timeout=60)
    at.query_params.update(review="c", run=str(run), case="case-0002")
    at.run()
    at.switch_page("desk_pages/6_compare.py").run()
    assert at.radio(key="compare_src").value == "A case from a run"
    assert (at.selectbox(key="compare_run").value, at.selectbox(key="compare_case").value) == (
        run,
        "case-0002",
    )
    at.selectbox(key="compare_case").select("case-0001").run()
    assert at.query_params == {"review": "c", "run": str(run), "case": "case-0001"}
    (back,) = [p for p in at.get("page_link") if p.value == "Read this case on Review"]
    assert back.proto.query_string == f"review=c&run={run}&case=case-0001"


def test_a_word_diff_inside_a_self_report_field_is_escaped():
    from abeq.desk.render import self_report_html

    html = self_report_html([("1 · Output produced", "run <b>x</b> now", "run <script>y()</script> now")])
    assert "&lt;<del" in html and "&lt;<ins" in html and "<script" not in html and "<b>" not in html


def test_the_tiny_model_warning_is_said_once_and_only_while_it_is_chosen(app):
    """On Run it was said three times (sidebar, next step, the page) and Compare still said it after
    scripted/rules was typed (issue 38)."""

    def said(at) -> int:
        texts = [e.value for e in (*at.info, *at.caption, *at.warning)]
        return sum("is tiny" in t for t in texts)

    assert said(app) == 1  # Documents: the sidebar's line
    app.switch_page("desk_pages/3_run.py").run()
    assert said(app) == 1, [
        e.value[:90] for e in (*app.info, *app.caption, *app.warning) if "is tiny" in e.value
    ]
    for key in ("runner_model", "judge_model"):
        app.text_input(key=key).set_value("scripted/rules").run()
    assert said(app) == 0
    app.switch_page("desk_pages/6_compare.py").run()
    assert app.text_input(key="compare_model").value == "scripted/rules" and said(app) == 0
    app.switch_page("desk_pages/1_documents.py").run()
    assert said(app) == 0


def test_the_diff_pane_is_as_tall_as_its_text():
    from abeq.desk import documents_vm as vm

    assert vm.diff_height("# a\n\nshort\n", "# a\n") == "content"  # no tall empty box (issue 38)
    assert vm.diff_height("line\n" * 400, "line\n") == 1100  # a long one scrolls in its own pane
