"""The review desk through Streamlit's AppTest: every page, the confirm gate, a run, overrides, escaping."""

from __future__ import annotations

import json

import pytest
from conftest import DESK_APP
from streamlit.testing.v1 import AppTest

from abeq import sets
from abeq.desk import worker
from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run  # noqa: E402

PAGES = [
    "desk_pages/1_documents.py",
    "desk_pages/2_transfer_set.py",
    "desk_pages/3_run.py",
    "desk_pages/4_review.py",
    "desk_pages/5_history.py",
    "desk_pages/6_compare.py",
]
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'


def confirm_and_open_run(at: AppTest, runner: str = "scripted/rules", judge: str = "scripted/rules") -> None:
    at.switch_page("desk_pages/2_transfer_set.py").run()
    at.button(key="confirm").click().run()
    at.switch_page("desk_pages/3_run.py").run()
    at.text_input(key="runner_model").input(runner)
    at.text_input(key="judge_model").input(judge)


def confirm_and_run(at: AppTest, db: str) -> int:
    confirm_and_open_run(at)
    at.button(key="start").click().run()
    run_id = Store(db).log.runs()[0]["id"]
    assert worker.wait(run_id, 120)
    return run_id


def metrics(at: AppTest) -> dict:
    return {m.label: m.value for m in at.metric}


def badges(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


def gate(at: AppTest) -> str:
    return next(m.value for m in at.markdown if "PASS" in m.value or "FAIL" in m.value)


def open_review(at: AppTest, db: str, name: str) -> None:
    """Pick a review in the sidebar and open its Review page."""
    at.run()
    at.sidebar.selectbox(key="review_id").select(Store(db).inputs.review(name)["id"]).run()
    at.switch_page("desk_pages/4_review.py").run()


def override(at: AppTest, reason: str, verdict: str = "equivalent", reviewer: str = "ana") -> None:
    at.selectbox(key="ov_verdict").select(verdict)
    at.text_area(key="ov_reason").input(reason)
    at.text_input(key="ov_reviewer").input(reviewer)
    at.button(key="ov_submit").click().run()


def test_first_start_loads_the_example_and_says_what_to_do(app, db):
    assert [r["name"] for r in Store(db).inputs.reviews()] == ["example"]
    assert "Confirm" in app.info[0].value
    # what abeq is, in one sentence with its three words (issue 38); the tiny model's caution is on Run
    intro = next(m.value for m in app.markdown if m.value.startswith("abeq checks whether"))
    assert all(w in intro for w in ("**original**", "**candidate**", "**transfer set**"))
    app.switch_page("desk_pages/3_run.py").run()
    assert any("135M" in i.value for i in app.info)
    app.switch_page("desk_pages/1_documents.py").run()
    assert [s.label for s in app.metric] == [
        "Candidate characters",
        "Candidate tokens (est.)",
        "Candidate lines",
        "Compression ratio",
    ]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders(app, page):
    app.switch_page(page).run()
    assert not app.exception


def test_run_is_refused_until_the_set_is_confirmed(app, db):
    app.switch_page("desk_pages/3_run.py").run()
    assert "not confirmed" in app.error[0].value
    assert app.button(key="start").disabled
    assert any("135M" in i.value for i in app.info)
    assert Store(db).log.runs() == []


def test_a_model_no_provider_serves_is_refused_before_a_run_exists(app, db):
    confirm_and_open_run(app, runner="nosuchprovider/xyz")
    app.button(key="start").click().run()
    assert any(
        "Runner model nosuchprovider/xyz: no provider serves this model string" in e.value.replace("\\", "")
        for e in app.error
    ), [e.value for e in app.error]
    assert Store(db).log.runs() == []


def test_a_set_confirmed_for_another_original_must_be_confirmed_again(app, db):
    store = Store(db)
    review = store.inputs.reviews()[0]
    ts = store.inputs.transfer_set(review["transfer_set_hash"])
    store.inputs.upsert_review(
        review["name"],
        review["original_hash"],
        store.inputs.put_transfer_set(sets.confirm(ts, "0" * 64)),
        review["variant"],
    )
    app.switch_page("desk_pages/3_run.py").run()
    assert "confirmed for another original document, not this one" in app.error[0].value
    assert app.button(key="start").disabled
    app.switch_page("desk_pages/2_transfer_set.py").run()
    assert not app.button(key="confirm").disabled
    app.button(key="confirm").click().run()
    app.switch_page("desk_pages/3_run.py").run()
    assert not app.button(key="start").disabled


def test_confirming_then_running_the_scripted_model_judges_every_case(app, db):
    run_id = confirm_and_run(app, db)
    cases = Store(db).log.run_cases(run_id)
    assert len(cases) == 7 and {c["status"] for c in cases} == {"judged"}
    app.run()
    assert metrics(app)["Cases done"] == "7/7"
    app.switch_page("desk_pages/4_review.py").run()
    assert metrics(app)["Regressed"] == "7"
    assert "FAIL" in gate(app) and ":red-badge[candidate-regressed]" in badges(app)
    assert any(
        c.value.startswith("This case in this run: 3 model call(s) made, 0 from the cache")
        for c in app.caption
    )


def test_judge_samples_and_aa_from_the_run_page_reach_the_run_and_the_budget(app, db):
    confirm_and_open_run(app)
    app.number_input(key="judge_samples").set_value(3)
    app.checkbox(key="aa").check().run()
    # 7 cases: 7 teacher + 7 candidate + 7 replays; 7 x 3 judge samples + 7 A/A judgements
    assert any(
        c.value.startswith(
            "This run: at most 49 model calls (21 runner, 28 judge, A/A replays included; "
            "0 of the original's 7 transcripts come from the cache)"
        )
        for c in app.caption
    ), [c.value for c in app.caption]
    app.button(key="start").click().run()
    run_id = Store(db).log.runs()[0]["id"]
    assert worker.wait(run_id, 120)
    cfg = json.loads(Store(db).log.run(run_id)["config"])
    assert cfg["judge_samples"] == 3 and cfg["aa"] is True
    assert Store(db).log.call_stats(run_id)["made"] == 49
    app.switch_page("desk_pages/4_review.py").run()
    assert not app.exception
    assert any("A/A false-regression rate" in c.value for c in app.caption), [c.value for c in app.caption]
    # the judge's calibration stands beside A/A: this one was never measured, and the page says so
    assert any("judge scripted/rules was never calibrated" in c.value for c in app.caption)
    # round 2 of the same review: the teacher's transcripts are cached, and the estimate says so
    app.switch_page("desk_pages/3_run.py").run()
    # the settings made before leaving the page are still there
    assert app.text_input(key="runner_model").value == "scripted/rules" and app.checkbox(key="aa").value
    assert app.number_input(key="judge_samples").value == 3
    assert any("7 of the original's 7 transcripts come from the cache" in c.value for c in app.caption), [
        c.value for c in app.caption
    ]


def test_editing_a_confirmed_set_makes_an_unconfirmed_version(app, db):
    app.switch_page("desk_pages/2_transfer_set.py").run()
    app.button(key="confirm").click().run()
    review = Store(db).inputs.review("example")
    key = f"ts_editor_{review['transfer_set_hash']}"
    app.session_state[key] = {
        "edited_rows": {0: {"input": "A different request."}},
        "added_rows": [],
        "deleted_rows": [],
    }
    app.run()
    assert any("new unconfirmed version" in i.value for i in app.info)
    app.button(key="confirm").click().run()  # re-confirming the edit is allowed
    ts = Store(db).inputs.transfer_set(Store(db).inputs.review("example")["transfer_set_hash"])
    assert ts.user_confirmed and ts.cases[0].input == "A different request."
    assert ts.cases[0].status == "confirmed"


def test_an_override_needs_a_reason_changes_the_summary_and_is_stored(app, db):
    run_id = confirm_and_run(app, db)
    app.switch_page("desk_pages/4_review.py").run()
    override(app, reason="")
    assert any("needs a reason" in e.value for e in app.error)
    assert Store(db).ledger.overrides(run_id) == {}

    override(app, reason="The candidate still strips ticket ids; the judge misread the step.")
    assert metrics(app)["Regressed"] == "6" and metrics(app)["Overridden"] == "1"
    (row,) = Store(db).ledger.overrides(run_id).values()
    assert row["reason"].startswith("The candidate still strips") and row["reviewer"] == "ana"
    assert row["judge_verdict"] == "candidate-regressed" and row["verdict"] == "equivalent"


def test_overriding_every_regression_turns_the_gate_to_pass(app, db):
    confirm_and_run(app, db)
    app.switch_page("desk_pages/4_review.py").run()
    assert "FAIL" in gate(app)
    for _ in range(7):  # the queue moves on to the next unreviewed case after each override
        override(app, reason="reviewed by hand")
    assert metrics(app)["Regressed"] == "0" and metrics(app)["Overridden"] == "7"
    assert "PASS" in gate(app)


def test_a_script_in_a_transcript_is_escaped(app, db):
    synthetic_run(
        Store(db), 3, review="xss", error_every=0, transcript=lambda i, side: f"Step one. {XSS} done"
    )
    open_review(app, db, "xss")
    from abeq.desk.keys import KEY_SCRIPT

    # the desk's own key binding is the only script on the page; the transcript's is text
    bodies = " ".join(h.value for h in app.get("html") if h.value != KEY_SCRIPT)
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in bodies
    assert "<script" not in bodies and "<img" not in bodies


def test_an_errored_case_shows_its_error_and_no_verdict(app, db):
    synthetic_run(Store(db), 4, review="errors", error_every=2)
    open_review(app, db, "errors")
    app.segmented_control(key="review_filter").set_value("errored").run()
    assert "no verdict" in app.error[0].value
    assert "rate limited" in app.code[0].value
    assert not any(b.label == "Save override" for b in app.button)


def test_a_run_survives_a_new_session_and_can_be_cancelled_from_it(app, db):
    import threading

    from abeq.models import scripted

    release = threading.Event()
    scripted.model("rules").handler = lambda model, messages, schema: (
        release.wait(60) and None
    )  # hold every call
    try:
        app.switch_page("desk_pages/2_transfer_set.py").run()
        app.button(key="confirm").click().run()
        app.switch_page("desk_pages/3_run.py").run()
        app.text_input(key="runner_model").input("scripted/rules")
        app.text_input(key="judge_model").input("scripted/rules")
        app.button(key="start").click().run()
        run_id = Store(db).log.runs()[0]["id"]
        assert worker.alive(run_id)

        reloaded = AppTest.from_file(str(DESK_APP), default_timeout=60)  # a browser reload
        reloaded.run()
        reloaded.switch_page("desk_pages/3_run.py").run()
        assert "running" in reloaded.get("progress")[0].proto.text
        reloaded.button(key="cancel").click().run()
    finally:
        release.set()
    assert worker.wait(run_id, 60)
    assert Store(db).log.run(run_id)["status"] == "cancelled"


def test_pasting_a_candidate_makes_it_current_and_shows_the_size_delta(app, db):
    app.radio(key="candidate_mode").set_value("Paste").run()
    app.text_input(key="candidate_name").input("short.md")
    app.text_area(key="candidate_text").input("# Release notes\n- Write the notes.\n")
    app.button(key="candidate_load_text").click().run()
    assert not app.exception
    assert any(c.value.startswith("short") for c in app.caption)  # the candidate's name and hash
    assert metrics(app)["Candidate lines"] == "2"


def test_the_original_cannot_change_under_existing_runs(app, db):
    confirm_and_run(app, db)
    app.switch_page("desk_pages/1_documents.py").run()
    app.radio(key="original_mode").set_value("Paste").run()
    app.text_area(key="original_text").input("# Another original\n- step\n")
    app.button(key="original_load_text").click().run()
    assert any("already has runs" in e.value for e in app.error)


def test_compare_page_judges_two_pasted_outputs_blind(app):
    from abeq.models import scripted

    app.switch_page("desk_pages/6_compare.py").run()
    app.text_input(key="compare_model").set_value("scripted/rules").run()
    areas = {t.key: t for t in app.text_area}
    keys = sorted(areas)
    assert len(keys) >= 3, keys
    for k in keys:
        areas[k].set_value(f"# Heading\n- point one for {k}\n- point two about the task\n")
    app.run()
    buttons = [b for b in app.button if "ompare" in b.label]
    assert buttons, [b.label for b in app.button]
    buttons[0].click().run()
    assert not app.exception
    judge_calls = [h for h in scripted.model("rules").history if "output_a" in h["messages"][-1]["content"]]
    assert len(judge_calls) >= 2  # both orders


def test_review_shows_the_case_input_and_the_candidate_and_needs_a_reviewer(app, db):
    run_id = confirm_and_run(app, db)
    app.switch_page("desk_pages/4_review.py").run()
    assert any(m.value.startswith("**Case input (") for m in app.markdown)  # in view, not folded away
    assert "candidate candidate-lossy.md" in app.selectbox(key="review_run").format_func(run_id)
    override(app, reason="looks fine to me", reviewer="  ")
    assert any("reviewer's name" in e.value for e in app.error)
    assert Store(db).ledger.overrides(run_id) == {}


def test_an_override_under_a_filter_moves_on_to_the_next_case(app, db):
    confirm_and_run(app, db)
    app.switch_page("desk_pages/4_review.py").run()
    app.segmented_control(key="review_filter").set_value("candidate-regressed").run()
    ids = app.selectbox(key="review_case").options
    app.selectbox(key="review_case").select(ids[2]).run()
    override(app, reason="checked by hand", verdict="equivalent")
    assert app.selectbox(key="review_case").value == ids[3]  # not back to the first case
    assert len(app.selectbox(key="review_case").options) == len(ids) - 1


def test_a_thin_set_is_refused_on_the_run_page_in_the_desks_words(app, db):
    store = Store(db)
    review = store.inputs.reviews()[0]
    ts = store.inputs.transfer_set(review["transfer_set_hash"])
    original = store.inputs.document(review["original_hash"])
    thin = sets.confirm(ts.model_copy(update={"cases": ts.cases[:3]}), original["hash"])
    store.inputs.upsert_review(
        review["name"], review["original_hash"], store.inputs.put_transfer_set(thin), review["variant"]
    )
    app.switch_page("desk_pages/3_run.py").run()
    assert any("Accept a thin set" in e.value for e in app.error) and app.button(key="start").disabled
    app.switch_page("desk_pages/2_transfer_set.py").run()
    assert not app.exception


def test_confirm_refuses_a_thin_set_until_it_is_accepted_as_thin_as_check_set_does(app, db):
    store = Store(db)
    review = store.inputs.reviews()[0]
    ts = store.inputs.transfer_set(review["transfer_set_hash"])
    thin = ts.model_copy(update={"cases": ts.cases[:3]})
    store.inputs.upsert_review(
        review["name"], review["original_hash"], store.inputs.put_transfer_set(thin), review["variant"]
    )
    app.switch_page("desk_pages/2_transfer_set.py").run()
    app.button(key="confirm").click().run()
    assert any("a run would refuse this set" in e.value for e in app.error), [e.value for e in app.error]
    stored = Store(db).inputs.review(review["name"])
    assert not Store(db).inputs.transfer_set(stored["transfer_set_hash"]).user_confirmed
    next(c for c in app.checkbox if c.label.startswith("Accept a thin set")).check().run()
    app.button(key="confirm").click().run()
    stored = Store(db).inputs.review(review["name"])
    done = Store(db).inputs.transfer_set(stored["transfer_set_hash"])
    assert done.user_confirmed and done.thin_accepted and not app.exception


def test_fail_fast_from_the_run_page_stops_and_says_so_then_runs_the_rest(app, db):
    confirm_and_open_run(app)
    app.checkbox(key="fail_fast").check().run()
    app.number_input(key="concurrency").set_value(1).run()
    app.button(key="start").click().run()
    run_id = Store(db).log.runs()[0]["id"]
    assert worker.wait(run_id, 120)
    app.run()
    cases = Store(db).log.run_cases(run_id)
    assert [c["status"] for c in cases] == ["judged"] + ["not-run"] * 6
    assert any("Stopped early (fail fast)" in i.value for i in app.info), [i.value for i in app.info]
    app.switch_page("desk_pages/4_review.py").run()
    assert not app.exception
    app.switch_page("desk_pages/3_run.py").run()
    app.checkbox(key="fail_fast").uncheck().run()
    app.button(key="start").click().run()
    assert Store(db).log.runs()[0]["id"] == run_id  # the same run, resumed
    assert worker.wait(run_id, 120)
    assert {c["status"] for c in Store(db).log.run_cases(run_id)} == {"judged"}
