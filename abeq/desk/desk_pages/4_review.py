"""Review: a queue of cases, original and candidate side by side; Agree or Override each verdict."""

from __future__ import annotations

import streamlit as st

from abeq.desk import links, samples_panel, session
from abeq.desk import review_panels as panels
from abeq.desk import review_view as view
from abeq.desk import review_vm as vm
from abeq.desk import runs as run_state
from abeq.results.reports.report import gate_result

store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("Review")
runs = store.log.runs(review["id"])[::-1]
q, ss = st.query_params, st.session_state
if not runs:
    vm.forget_run(q, ss)
    st.info("No run yet for this review: start one on Run.")
    st.stop()

if warning := vm.choose_run(q, ss, [r["id"] for r in runs]):
    st.warning(warning)
top = st.columns([3, 2], vertical_alignment="bottom")
with top[0]:
    run_id = panels.run_picker(runs, vm.candidate_names(store, runs))
with top[1]:
    profile = panels.gate_picker()
ss[f"keep:{vm.RUN}"] = run_id
view.keyboard(st)
live = vm.live(next(r for r in runs if r["id"] == run_id))
rr0 = vm.report(store, store.log.run(run_id) or {})
if warning := vm.adopt_case(q, ss, run_id, {r.case_id for r in run_state.finished_rows(rr0.run, rr0.rows)}):
    st.warning(warning)


# Laid out as a review queue: the run in one line at the top, then the case open with Agree and
# Override beside it (in the first screen at 1024x768), then its evidence; the run's figures,
# filters and case list below. The run's parts are read again every few seconds while it runs; the
# case is a fragment of its own, never redrawn by the timer (a redraw closes an open case picker).
@st.fragment(run_every=vm.REFRESH_SECONDS if live else None, key=vm.HEADER)
def header() -> None:
    run = store.log.run(run_id) or {}
    rr = vm.report(store, run)
    running = vm.in_flight(store, run, rr.rows)
    st.caption(vm.headline(rr, gate_result(rr, profile), running))


@st.fragment(run_every=vm.REFRESH_SECONDS if live else None, key=vm.BOARD)
def board() -> None:
    run = store.log.run(run_id) or {}
    if live and not vm.live(run):
        st.rerun()  # the run ended: draw the page once more, without the timer
    rr = vm.report(store, run)
    running = vm.in_flight(store, run, rr.rows)
    st.divider()
    st.info(vm.banner(rr, runs[0]["id"], running), icon=":material/arrow_forward:")  # the run shown
    rows = vm.queue(store, ss, run, rr.rows)
    if live:
        st.caption(vm.live_caption(running, len(rows) - len(ss.get("review_ids", rows))))
    panels.queue_filters(run_state.finished_rows(dict(run), rr.rows))
    if rows:
        view.case_table(st, rows, ss.get(vm.CASE, ""), run_id)
    view.summary(
        st, store, rr, run, gate_result(rr, profile), run_state.review_headline(run, rr.rows), running
    )
    panels.team(store, run_id, rr.rows, [r.case_id for r in rows])  # who reviews what, and how it goes
    view.export_buttons(st, run_id, profile)


@st.fragment(key=vm.CASE_PANEL)
def case_panel() -> None:
    run = store.log.run(run_id) or {}
    rr = vm.report(store, run)
    if not (rows := vm.queue(store, ss, run, rr.rows)):
        none = vm.live(run) and not run_state.finished_rows(run, rr.rows)
        st.info("No case has finished yet." if none else "No case matches these filters.")
        return
    ids, owner, me = [r.case_id for r in rows], vm.owners(store, run_id), session.reviewer(ss)
    if said := vm.own_queue(store, ss, run_id, rr.rows):  # "Your queue: 3 of 7 left"
        st.caption(said)
    case_id = panels.case_nav(ids, vm.choose_case(ss, ids, run_id, vm.needing(rows, owner, me)))
    ss[f"keep:{vm.CASE}"] = (run_id, case_id)
    links.publish(q, ss, "run", run_id, scope="review")
    links.publish(q, ss, "case", case_id, scope="review")
    row = next(r for r in rows if r.case_id == case_id)
    if stop := vm.no_evidence(row, run_id):
        panels.no_evidence(*stop)
        return
    left, right = st.columns([3, 2], gap="medium")
    with left:
        view.announce(st, row, ids.index(case_id) + 1, len(ids), vm.whose(owner, me, case_id))
        view.badges(st, row)
        view.judge_and_reviewer(st, row)
        if case := vm.set_cases(store, run).get(case_id):
            panels.case_input(case)
    with right:
        view.review_form(st, run_id, row, vm.next_case(rows, owner, me, case_id))
    samples_panel.samples(store, row)  # a sampled run's rates per behaviour, its samples on request
    panels.transcripts(store, row)
    view.case_figures(st, row)
    panels.workspaces(store, row)
    st.page_link(
        links.COMPARE_PAGE,
        label="Blind-compare this case's two outputs",
        icon=":material/compare:",
        query_params=links.review_params(review["name"], run_id, case_id),
    )
    view.audit_trail(st, store, run_id, case_id)


header()
case_panel()
board()
