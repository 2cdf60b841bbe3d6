"""What the desk pages show, computed without Streamlit: the view-model functions in abeq/desk take
the store, ids and choices and return what a page lays out."""

from __future__ import annotations

import sys

from abeq import sets
from abeq.desk import run_vm
from abeq.desk.queries import Progress


def doc_row(doc) -> dict:
    return {"name": doc.name, "content": doc.text, "hash": doc.hash}


# ---------------------------------------------------------------- Run
def test_the_run_page_and_the_cli_say_the_same_estimate(example, store, scripted_cfg, capsys):
    from abeq.api import prepare_run
    from abeq.cli.run import print_estimate

    cfg = scripted_cfg(aa=True, judge_samples=2)
    said = run_vm.estimate_lines(
        store, doc_row(example["original"]), doc_row(example["lossy"]), example["ts"], cfg
    )
    assert said[0].startswith("This run: at most 42 model calls (21 runner, 21 judge, A/A replays included; ")
    prepared = prepare_run(
        example["original"], example["lossy"], example["ts"], runner_model="scripted/rules", store=store,
        aa=True, judge_samples=2,
    )  # fmt: skip
    print_estimate(prepared)
    assert said[0] in capsys.readouterr().err


def test_an_unconfirmed_set_is_estimated_in_calls_and_refused(example):
    ts = sets.load(example["dir"] / "transfer-set.json")  # as read: never confirmed
    state: dict = {}
    run_vm.restore_settings(state)
    state["variant"] = "skill"
    settings = run_vm.desk_settings(state, ts, "example")
    lines = run_vm.estimate_lines(None, doc_row(example["original"]), doc_row(example["lossy"]), ts, settings)
    assert lines == [
        "At most 21 model calls (14 runner, 7 judge); the original's cached transcripts are reused, so "
        "later rounds make fewer."
    ]
    gate = run_vm.start_gate(example["original"], ts, settings)
    assert gate.refused and not gate.thin and "press **Confirm**" in gate.errors()[0]


def test_a_thin_confirmed_set_is_refused_and_a_full_one_is_not(example):
    original = example["original"]
    assert run_vm.start_gate(original, example["ts"]).errors() == []
    thin = sets.confirm(example["ts"].model_copy(update={"cases": example["ts"].cases[:2]}), original.hash)
    gate = run_vm.start_gate(original, thin)
    assert gate.refused and gate.errors() == [run_vm.THIN]


def test_the_settings_outlive_the_page_and_make_the_run_settings(example):
    state: dict = {}
    run_vm.restore_settings(state)
    state.update(runner_mode="command", runner_cmd="agent -p", runner_cmd_version="v1", concurrency=2.0)
    state["variant"] = "skill"
    run_vm.keep_settings(state)
    settings = run_vm.desk_settings(state, example["ts"], "example")
    mode = settings.mode()
    assert (mode.kind, mode.command, mode.command_version) == ("command", "agent -p", "v1")
    assert settings.concurrency == 2 and settings.review == "example" and settings.judge_samples == 1
    fresh = {k: v for k, v in state.items() if k.startswith("keep:")}  # the page was left: widgets gone
    run_vm.restore_settings(fresh)
    assert fresh["runner_cmd"] == "agent -p" and fresh["concurrency"] == 2.0
    state["runner_mode"] = "chat"  # a command typed, then another mode picked: the command is not used
    assert run_vm.desk_settings(state, example["ts"], "example").mode().command == ""


def test_the_mutation_test_keys_its_calls_as_a_run_of_the_same_form(example, store):
    """The Transfer set page's mutation test takes the Run page's settings whole: its calls are keyed
    as the run's (the command's version included), so each finds the other's cached transcripts."""
    from abeq.desk import mutation_vm

    state: dict = {}
    run_vm.restore_settings(state)
    state.update(runner_model="scripted/rules", judge_model="scripted/rules", judge_samples=2, aa=True)
    state.update(runner_mode="command", runner_cmd="cat", runner_cmd_version="cat 9.4", variant="skill")
    run_vm.keep_settings(state)
    run = run_vm.desk_settings(state, example["ts"], "example").config("skill")
    left = {k: v for k, v in state.items() if k.startswith("keep:")}  # on Transfer set: no Run widgets
    original = store.inputs.document(store.inputs.put_document("SKILL.md", example["original"].text))
    mutation = mutation_vm.prepare(store, original, example["ts"], left).cfg
    assert mutation.key_parts() == run.key_parts()
    assert mutation.mode.command_version == "cat 9.4"


def test_the_desks_defaults_are_the_option_tables(example):
    from abeq.execution.options import BY_NAME

    state: dict = {}
    run_vm.restore_settings(state)
    assert state["concurrency"] == BY_NAME["concurrency"].default
    assert run_vm.desk_settings({}, example["ts"]).concurrency == BY_NAME["concurrency"].default


def test_every_setting_is_read_from_the_desk_or_left_at_the_tables_default(example):
    """A new row in the options table is a decision here: a control of the Run page, a value the page
    knows otherwise (the set, the review), or the table's default."""
    from abeq.execution.options import BY_NAME, OPTIONS
    from abeq.execution.settings import RunSettings

    controls, given, defaulted = set(run_vm.CONTROLS), set(run_vm.GIVEN), set(run_vm.DEFAULTED)
    assert not (controls & given or controls & defaulted or given & defaulted)
    assert controls | given | defaulted == {o.name for o in OPTIONS} == set(RunSettings.model_fields)
    state: dict = {}
    run_vm.restore_settings(state)
    plain = run_vm.desk_settings(state, example["ts"], "example")
    assert all(getattr(plain, n) == BY_NAME[n].default for n in defaulted)
    changed = {  # a value other than the default, for each control
        "runner_model": "scripted/rules", "judge_model": "scripted/other", "api_base": "http://127.0.0.1:9",
        "variant": "skill", "concurrency": 3, "judge_samples": 3, "runner_samples": 2, "aa": True,
        "fail_fast": True, "min_judge_recall": 0.8, "require_judge_recall": True, "runner_mode": "command",
        "runner_cmd": "cat", "runner_cmd_version": "cat 9", "trust_code": True,
    }  # fmt: skip
    assert set(changed) == controls
    got = run_vm.desk_settings({**state, **changed}, example["ts"], "example")
    assert {n: getattr(got, n) for n in controls} == changed


def progress(**kw) -> Progress:
    base = dict(
        run_id=1, status="running", total=7, done=3, judged=3, errors=0, runner_done=6, runner_needed=14,
        judge_done=3, judge_needed=7, cache_hits=2, calls_made=7, failed_calls=0, tokens=12345, cost=0.0,
        unpriced=0, elapsed=12.4, eta=None, cancel_requested=False,
    )  # fmt: skip
    return Progress(**{**base, **kw})


def test_progress_reads_as_metrics_and_never_shows_an_unknown_price_as_zero():
    first, second = run_vm.progress_metrics(progress(unpriced=4, failed_calls=1))
    shown = {m.label: (m.value, m.delta) for m in first + second}
    assert shown["Cases done"] == ("3/7", None) and shown["Runner calls"] == ("6/14", None)
    assert shown["Errors"] == (0, "1 call(s) failed") and shown["Time left (est.)"] == ("—", None)
    assert shown["Cost"] == ("unknown", "4 unpriced call(s)") and shown["Tokens"] == ("12,345", None)
    assert run_vm.progress_metrics(progress(cost=0.5))[1][3].value == "$0.5000"
    assert run_vm.progress_metrics(progress(cost=0.5, unpriced=1))[1][3].value == "unknown"  # no partial sum
    assert run_vm.prompt_cache_text(progress()) == ""
    said = run_vm.prompt_cache_text(
        progress(cache_read_tokens=2048, cache_write_tokens=1024, cache_saved=0.01)
    )
    assert said == "Provider prompt cache: 2,048 prompt tokens read from it, 1,024 written; it saved $0.0100."


def test_the_time_left_is_a_range_over_the_last_half_minute_not_one_swinging_reading():
    """Readings 539, 804, 389, 569 s a few seconds apart (issue 38) show as one steady range."""
    shown = []
    for i, eta in enumerate((539.0, 804.0, 389.0, 569.0)):
        p = progress(run_id=38, eta=eta, elapsed=100.0 + 3 * i)
        shown.append(run_vm.eta_text(run_vm.eta_range(p, now=1000.0 + 3 * i)))
    assert shown == ["about 9 min", "8–14 min", "6–14 min", "6–14 min"]
    later = run_vm.eta_range(progress(run_id=38, eta=300.0, elapsed=160.0), now=1060.0)
    assert later == (300.0, 300.0)  # readings older than 30 s are dropped
    assert run_vm.eta_text((41.0, 58.0)) == "40–60 s" and run_vm.eta_text(None) == "—"


def test_the_view_models_need_no_streamlit():
    import subprocess
    from pathlib import Path

    import abeq.desk

    names = sorted(p.stem for p in Path(abeq.desk.__file__).parent.glob("*_vm.py"))
    assert {"run_vm", "transfer_set_vm", "review_vm", "documents_vm", "compare_vm"} <= set(names)
    code = f"import sys\nfor n in {names!r}: __import__('abeq.desk.' + n)\nprint('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- Transfer set
def test_the_set_says_where_it_stands(example):
    from abeq.desk import transfer_set_vm as vm

    ts, original = example["ts"], doc_row(example["original"])
    said = vm.status(vm.SetState(ts, "h", "", has_runs=False))
    assert [k for k, _ in said] == ["success", "info"] and "Editing makes a new unconfirmed version" in said[
        1
    ][1]
    assert "cases are fixed" in vm.status(vm.SetState(ts, "h", "", has_runs=True))[1][1]
    read = sets.load(example["dir"] / "transfer-set.json")
    why = sets.confirmation_problem(read, original["hash"])
    assert vm.status(vm.SetState(read, "h", why, has_runs=False)) == [
        ("warning", "Not confirmed: no runner call happens until you read these cases and press Confirm.")
    ]


def test_a_set_confirmed_in_another_review_says_who_confirmed_it_when_and_where(example, store):
    """The same cases for the same original count as confirmed in a new review: it names the colleague,
    the time and the review they confirmed it in, never passes it off as this review's own."""
    from abeq.desk import session
    from abeq.desk import transfer_set_vm as vm

    original = doc_row(example["original"])
    oh = store.inputs.put_document(original["name"], original["content"])
    store.inputs.upsert_review("mine", oh, None, "skill")
    store.inputs.upsert_review("theirs", oh, None, "skill")
    mine, theirs = store.inputs.review("mine"), store.inputs.review("theirs")
    session.set_transfer_set(store, theirs, example["ts"], by="ana")  # ana confirms in her review
    unconfirmed = sets.load(example["dir"] / "transfer-set.json")  # the same cases, unconfirmed file
    session.set_transfer_set(store, mine, unconfirmed, by="bo")
    review = store.inputs.review("mine")
    said = vm.status(vm.set_state(store, review, original))[0][1]
    assert said.startswith("Confirmed ") and "by ana in review theirs" in said.replace("\\", "")
    assert "bo" not in said
    own = vm.status(vm.set_state(store, store.inputs.review("theirs"), original))[0][1]
    assert "by ana" in own and "in review" not in own


def test_an_edited_table_is_unsaved_until_saved_and_locked_once_the_review_has_runs(example):
    from abeq.desk import editor
    from abeq.desk import transfer_set_vm as vm

    s = vm.SetState(example["ts"], "h", "", has_runs=False)
    table = editor.to_frame(s.ts)
    untouched = vm.edits(s, table, [])
    assert not untouched.dirty and untouched.save_disabled and untouched.confirm_disabled
    assert untouched.unsaved_text() == ""
    table.loc[0, "input"] = "A different request"
    e = vm.edits(s, table, [])
    first = s.ts.cases[0].id
    assert e.dirty and not e.save_disabled and not e.confirm_disabled and not e.thin_box_disabled
    assert e.unsaved["edited"] == [f"{first}: input"] and e.edited_fields() == {first: "input"}
    assert e.unsaved_text().startswith("Unsaved edits: edited ")  # Markdown-escaped
    assert (
        e.shown.cases[0].input == "A different request"
        and e.to_save().cases[0].input == e.shown.cases[0].input
    )
    locked = vm.edits(vm.SetState(example["ts"], "h", "", has_runs=True), table, [])
    assert locked.save_disabled and locked.confirm_disabled
    table.loc[0, "type"] = "no-such-type"
    wrong = vm.edits(s, table, [])
    assert wrong.cases is None and wrong.problem_shown and wrong.confirm_disabled


def test_coverage_and_checks_read_as_what_the_page_shows(example):
    from abeq.desk import transfer_set_vm as vm

    cov = sets.coverage(example["original"].text, example["ts"])
    shown = vm.coverage_metrics(cov)
    assert shown[0].label == "Sections covered" and shown[0].value == f"{cov.coverage_pct:.0f}%"
    assert [m.label for m in shown[1:]] == list(vm.CASE_TYPES)
    assert sum(m.value for m in shown[1:]) == len(example["ts"].cases)
    said = vm.checks_said(example["ts"])
    assert said.caption == "" or said.caption.startswith("Checks: ")
    assert vm.checks_said(example["ts"].model_copy(update={"cases": []})).caption == ""


# ---------------------------------------------------------------- Review
def test_a_link_opens_its_run_once_and_a_stranger_run_is_said():
    from abeq.desk import review_vm as vm

    state: dict = {}
    assert vm.choose_run({"run": "3"}, state, [5, 3]) == "" and state[vm.RUN] == 3
    state[vm.RUN] = 5  # the reviewer picks another run: the same URL does not pull it back
    assert vm.choose_run({"run": "3"}, state, [5, 3]) == "" and state[vm.RUN] == 5
    fresh: dict = {}
    assert "Run 9 is not a run of this review" in vm.choose_run({"run": "9"}, fresh, [5, 3])
    assert fresh[vm.RUN] == 5  # the latest
    kept = {f"keep:{vm.RUN}": 3}  # the page was left: the widget's own state is gone, its copy is not
    vm.choose_run({}, kept, [5, 3])
    assert kept[vm.RUN] == 3


def test_the_case_open_follows_a_link_then_the_queue():
    from abeq.desk import review_vm as vm

    state: dict = {"review_filter": "regressed"}
    assert vm.adopt_case({"case": "c2"}, state, 1, {"c1", "c2"}) == ""
    assert state["review_filter"] == "all"  # a link opens its case whatever the filters are
    assert vm.choose_case(state, ["c1", "c2", "c3"], 1) == "c2"
    assert "has no case" in vm.adopt_case({"case": "zz"}, {}, 1, {"c1"})
    # an action moved c2 out of the filtered list: the case after it opens, not the first
    assert vm.choose_case(state, ["c1", "c3"], 1) == "c3" and state["review_ids"] == ["c1", "c3"]
    back = {f"keep:{vm.CASE}": (1, "c3")}  # the page was left and opened again: the case read last
    assert vm.choose_case(back, ["c1", "c3"], 1) == "c3"
    assert vm.choose_case({f"keep:{vm.CASE}": (2, "c3")}, ["c1", "c3"], 1) == "c1"  # another run's


def test_a_case_without_a_verdict_says_why():
    from abeq.desk import review_vm as vm
    from abeq.results.reports.report import CaseRow
    from abeq.vocab import NOT_RUN_STAGE

    assert vm.no_evidence(CaseRow(case_id="a", status="judged")) is None
    assert vm.no_evidence(CaseRow(case_id="a", status="pending"))[0] == "warning"
    kind, said, code = vm.no_evidence(CaseRow(case_id="a", status="error", error_stage="judge", error="boom"))
    assert kind == "error" and "**judge**" in said and code == "boom"
    skipped = CaseRow(case_id="a", status="error", error_stage=NOT_RUN_STAGE, error="not run: fail fast")
    assert vm.no_evidence(skipped) == ("info", "not run: fail fast", None)


# ---------------------------------------------------------------- Documents
def test_the_candidates_size_is_said_against_the_original():
    from abeq.desk import documents_vm as vm

    caption, metrics = vm.size_said("one two three four\n" * 10, "one two\n" * 5)
    assert caption.startswith("The candidate's size, and its change from the original (190 characters")
    shown = {m.label: (m.value, m.delta, m.delta_color) for m in metrics}
    assert shown["Candidate characters"] == ("40", "-150", "inverse")
    assert shown["Candidate lines"] == ("5", "-5", "inverse")
    assert shown["Compression ratio"][1].endswith("% shorter") and shown["Compression ratio"][2] == "off"
    assert vm.size_said("ab", "abcd")[1][3].delta == "100% longer"


def test_an_instruction_file_whose_imports_were_not_followed_is_warned_about():
    from abeq.desk import documents_vm as vm

    pasted = {"name": "CLAUDE.md", "content": "Read @docs/style.md first.\n"}
    kind, said = vm.imports_said(pasted)
    assert kind == "warning" and "@docs/style" in said and "load it by Path" in said
    assert vm.imports_said({"name": "SKILL.md", "content": "Read @docs/style.md first.\n"}) is None
    assert vm.follow_imports("candidate", "instruction-file") is True
    assert vm.follow_imports("candidate", "skill") is None and vm.follow_imports("original", "x") is None


# ---------------------------------------------------------------- Compare
def test_the_comparison_settings_and_assertions_are_read_as_typed():
    import pytest

    from abeq.desk import compare_vm as vm

    assert vm.assertions("  ") is None
    assert vm.assertions('["mentions 2.0", "no ticket ids"]') == ["mentions 2.0", "no ticket ids"]
    assert vm.assertions("mentions 2.0\n\n no ticket ids \n") == ["mentions 2.0", "no ticket ids"]
    kw = vm.settings("", 0.7)
    assert kw["seed"] is None and (kw["weights"].content, kw["weights"].structure) == (0.7, 0.3)
    assert vm.settings(" 12 ", 0.6)["seed"] == 12
    with pytest.raises(ValueError):
        vm.settings("twelve", 0.6)
    state = {"compare_case": "gone"}
    vm.keep_valid(state, "compare_case", ["c1", "c2"])
    assert state["compare_case"] == "c1"
    vm.adopt_link({"run": "4", "case": "c2"}, state, [3, 4])
    assert (state["compare_src"], state["compare_run"], state["compare_case"]) == (vm.FROM_RUN, 4, "c2")


def test_a_comparison_reads_as_a_verdict_totals_and_both_orders():
    from abeq.comparator.comparator import compare
    from abeq.desk import compare_vm as vm
    from abeq.models import ModelSpec

    task = "Write release notes for version 2.0 of the tool."
    good = "## 2.0\n\n- Added: export to CSV (#12).\n- Fixed: crash on empty input (#15).\n"
    r = compare(task, good, "some changes were made", [], ModelSpec(name="scripted/rules"), seed=0)
    assert vm.verdict(r) == ("success", "**a wins** in both orders.")
    said = vm.orders_caption(r)
    assert said.startswith("order 1: a shown as ") and " · order 2: " in said and said.endswith(" · seed 0")
    title, rows = vm.totals(r)
    assert title == "**Weighted totals** (content 60%, structure 40%)" and [x["output"] for x in rows] == [
        "a",
        "b",
    ]
    assert rows[0]["overall"] > rows[1]["overall"]
    tie = r.model_copy(update={"winner": "tie", "order_dependent": True})
    kind, said = vm.verdict(tie)
    assert kind == "warning" and said.startswith("**Tie, order-dependent**")


def test_cases_confirmed_for_another_document_are_not_called_a_version_of_this_one(example, store):
    """A new review loading the same cases for another original (issue 38): the page says who
    confirmed them, where, and that it was for another document; nobody confirmed them for this one."""
    from abeq.desk import session
    from abeq.desk import transfer_set_vm as vm

    original = doc_row(example["original"])
    oh = store.inputs.put_document(original["name"], original["content"])
    other = store.inputs.put_document("OTHER.md", "# Other\n\n## Steps\n- something else entirely\n")
    store.inputs.upsert_review("theirs", other, None, "skill")
    store.inputs.upsert_review("mine", oh, None, "skill")
    theirs = store.inputs.review("theirs")
    session.set_transfer_set(store, theirs, sets.confirm(example["ts"], other), by="ana")
    session.set_transfer_set(
        store, store.inputs.review("mine"), sets.load(example["dir"] / "transfer-set.json")
    )
    state = vm.set_state(store, store.inputs.review("mine"), original)
    [(kind, said)] = vm.status(state)
    assert kind == "warning" and "different version" not in said
    assert said.startswith(
        "Not confirmed for this original: these cases were confirmed by ana in review theirs for another "
        "document, not this review's original (nobody has confirmed them for it)."
    )


def test_a_live_runs_unfinished_cases_read_queued_and_running_not_not_run(store):
    """A running run's cases without a verdict are queued or running (issue 38: "Not run 6"); a
    cancelled run's are not run."""
    from abeq.desk import review_vm
    from abeq.results.reports.report import build_report
    from abeq.results.store.liveness import owner_id
    from abeq.testing.synthetic import synthetic_run
    from abeq.timestamps import now

    run = synthetic_run(store, 3, review="live", error_every=0)
    store.log.update_run(run, status="running", finished_at=None, owner=owner_id(), heartbeat_at=now())
    for i in range(3, 9):
        store.log.put_run_case(
            {"run_id": run, "case_id": f"case-{i:04d}", "position": i, "status": "pending"}
        )
    rr = build_report(store, run)
    said = {label: value for label, value, _ in review_vm.figures(rr, ["case-0003", "case-0004"])}
    assert said["Running"] == 2 and said["Queued"] == 4 and "Not run" not in said
    line = review_vm.headline(rr, {"gate": "compress", "pass": False}, ["case-0003", "case-0004"])
    assert "running" in line and "2 running · 4 queued" in line and "not run" not in line
    store.log.update_run(run, status="cancelled")
    said = {label: value for label, value, _ in review_vm.figures(build_report(store, run))}
    assert said["Not run"] == 6 and "Queued" not in said


def test_the_queue_goes_to_what_still_needs_this_reviewer_and_says_whose_a_case_is():
    """Failed before (issue 46): a fresh open started on the first case listed, reviewed or not, and
    an action on a teammate's case went on through the teammate's."""
    from abeq.desk import review_vm as vm
    from abeq.results.reports.report import CaseRow

    def row(cid, reviewed=False, status="judged"):
        return CaseRow(case_id=cid, status=status, review={"action": "agree"} if reviewed else None)

    rows = [row("a1", reviewed=True), row("a2"), row("x1"), row("b1"), row("b2"), row("e", status="error")]
    owner = {"a1": "ana", "a2": "ana", "b1": "bo", "b2": "bo"}
    assert vm.needing(rows, owner, "ana") == ["a2", "x1", "b1", "b2"]  # hers, nobody's, then the team's
    assert vm.choose_case({}, [r.case_id for r in rows], 1, vm.needing(rows, owner, "ana")) == "a2"
    assert vm.next_case(rows, owner, "ana", "b1") == "a2"  # after bo's case (a link): back to her own
    assert vm.next_case(rows, {}, "ana", "b1") == "b2"  # nothing shared out: the next one not reviewed
    assert vm.next_case(rows, {}, "ana", "b2") == "a2"  # wrapping round, past what is reviewed
    assert vm.whose(owner, "ana", "a2") == "yours (ana)" and vm.whose(owner, "ana", "b1") == "assigned to bo"
    assert vm.whose(owner, "ana", "x1") == "assigned to nobody" and vm.whose({}, "ana", "x1") == ""


def test_a_run_made_on_a_one_run_confirmation_says_whose_it_was():
    from abeq.desk.review_view import one_run_confirmation

    said = one_run_confirmation({"set_confirmed_for_run": "Ana *B*"})
    assert "accepted for this run only, by Ana \\*B\\*" in said and "not confirmed" in said
    assert one_run_confirmation({"set_confirmed_for_run": None}) == ""
