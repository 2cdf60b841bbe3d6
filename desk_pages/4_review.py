"""Review: a queue of cases, original and candidate side by side; Agree or Override each verdict."""

from __future__ import annotations

import streamlit as st

from abeq.desk import cases, links, session
from abeq.desk import review_panels as panels
from abeq.desk import review_view as view
from abeq.desk import review_vm as vm
from abeq.desk import runs as run_state
from abeq.results.report import CaseRow, RunReport, build_report, gate_result

store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("Review")
runs = store.runs(review["id"])[::-1]
q, ss = st.query_params, st.session_state
if not runs:
    vm.forget_run(q, ss)
    st.info("No run yet for this review: start one on Run.")
    st.stop()

if warning := vm.choose_run(q, ss, [r["id"] for r in runs]):
    st.warning(warning)
run_id = panels.run_picker(runs, vm.candidate_names(store, runs))
ss[f"keep:{vm.RUN}"] = run_id
profile = panels.gate_picker()
view.keyboard(st)
live = vm.live(next(r for r in runs if r["id"] == run_id))


# ---------------------------------------------------------------- one case: Next reruns only this
@st.fragment
def case_panel(rr: RunReport, ids: list[str], by_id: dict[str, CaseRow], set_cases: dict) -> None:
    case_id = panels.case_nav(ids)
    ss[f"keep:{vm.CASE}"] = (run_id, case_id)
    links.publish(q, ss, "run", run_id, scope="review")
    links.publish(q, ss, "case", case_id, scope="review")
    row = by_id[case_id]
    if stop := vm.no_evidence(row, run_id):
        panels.no_evidence(*stop)
        return
    view.badges(st, row)
    st.page_link(
        links.COMPARE_PAGE,
        label="Blind-compare this case's two outputs",
        icon=":material/compare:",
        query_params=links.review_params(review["name"], run_id, case_id),
    )
    view.judge_and_reviewer(st, row)
    if case_id in set_cases:
        panels.case_input(set_cases[case_id])
    panels.transcripts(store, row)
    panels.workspaces(store, row)
    view.actions(st, store, run_id, row, vm.next_case(rr, ids, case_id))


# ---------------------------------------------------------------- the run: read again while it runs
@st.fragment(run_every=vm.REFRESH_SECONDS if live else None)
def board() -> None:
    run = store.run(run_id) or {}
    if live and not vm.live(run):
        st.rerun()  # the run ended: draw the page once more, without the timer
    rr = build_report(store, run_id)
    running = vm.in_flight(store, run, rr.rows)
    st.info(vm.banner(rr, runs[0]["id"], running), icon=":material/arrow_forward:")  # the run shown
    view.summary(st, store, rr, run, gate_result(rr, profile), run_state.review_headline(run, rr.rows))
    view.export_buttons(st, run_id, profile)
    if live:
        st.caption(
            f"The run is still going: this page reads it again every {vm.REFRESH_SECONDS:g} s."
            + (f" Running now: {', '.join(running)}." if running else "")
        )
    shown = run_state.finished_rows(run, rr.rows)  # a pending case is not an error yet
    by_id = {r.case_id: r for r in shown}
    if warning := vm.adopt_case(q, ss, run_id, set(by_id)):
        st.warning(warning)
    which, seen, text = panels.queue_filters(shown)
    run_set = store.transfer_set(run["transfer_set_hash"])
    set_cases = {c.id: c for c in (run_set.cases if run_set else [])}
    rows = cases.filter_rows(shown, which, seen, vm.found(store, ss, run, set_cases, text))
    if not rows:
        st.info("No case has finished yet." if live and not shown else "No case matches these filters.")
        return
    ids = [r.case_id for r in rows]
    view.case_table(st, rows, vm.choose_case(ss, ids, run_id), run_id)
    case_panel(rr, ids, by_id, set_cases)


board()
