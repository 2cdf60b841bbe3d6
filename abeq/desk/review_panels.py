"""The Review page's parts that draw the queue and one case's evidence: the run picker, the filters,
Previous/Next, the case input, the transcripts and self-reports, the workspace changes. What they
show is computed in `review_vm` (and `cases`); `review_view` draws the summary and the actions."""

from __future__ import annotations

import streamlit as st

from ..errors import AbeqError
from ..results.reports.diff import side_by_side_html
from ..results.reports.report import CaseRow
from ..results.review.assigning import assign, takeable, unassign
from ..results.store.store import Store
from ..schemas import Case
from ..vocab import GATES
from . import cases, observed, session
from . import review_vm as vm
from .render import error_md, md, self_report_html
from .review_view import KEYS


def run_picker(runs: list[dict], candidates: dict[str, str]) -> int:
    by_run = {r["id"]: r for r in runs}
    return st.selectbox(
        "Run",
        list(by_run),
        key=vm.RUN,
        format_func=lambda i: vm.run_label(by_run[i], candidates[by_run[i]["candidate_hash"]]),
    )


def gate_picker() -> str:
    gate = st.radio(
        "Gate",
        list(GATES),
        horizontal=True,
        key="gate_profile",
        help="compress: no regression. directive-clarity: no regression and higher candidate directness.",
    )
    assert gate is not None  # a radio with a default (the first) has a value
    return gate


def redraw_queue() -> None:
    """A filter or a pick in the case list changes the case panel too: both fragments rerun."""
    st.rerun([vm.BOARD, vm.CASE_PANEL])


def queue_filters(shown: list[CaseRow]) -> None:
    """Show (by verdict), Reviewed and Search: what the queue is filtered by (in session state)."""
    n, seen_n = cases.counts(shown), cases.reviewed_counts(shown)
    for k in ("review_filter", "review_seen"):
        st.session_state.setdefault(k, "all")
    f1 = st.container()
    f2, f3 = st.columns([1, 1], vertical_alignment="bottom")
    f1.segmented_control(
        "Show",
        list(cases.FILTERS),
        key="review_filter",
        required=True,
        format_func=lambda k: f"{cases.FILTERS[k]} ({n[k]})",
        on_change=redraw_queue,
    )
    f2.segmented_control(
        "Reviewed",
        list(cases.REVIEWED),
        key="review_seen",
        required=True,
        format_func=lambda k: f"{cases.REVIEWED[k]} ({seen_n[k]})",
        on_change=redraw_queue,
    )
    f3.text_input(
        "Search",
        key="review_search",
        placeholder="case ids, inputs, transcripts",
        help="Case-insensitive.",
        on_change=redraw_queue,
    )


def _go(case_id: str) -> None:
    st.session_state[vm.CASE] = case_id


def case_nav(ids: list[str], current: str) -> str:
    """Previous, the case picker and Next; the case open."""
    prev_id, next_id = cases.neighbours(ids, current)
    nav = st.columns([1, 4, 1], vertical_alignment="bottom")
    nav[0].button(
        "← Previous",
        on_click=_go,
        args=(prev_id,),
        disabled=prev_id is None,
        key="prev",
        width="stretch",
        shortcut=KEYS["prev"],
    )
    pos = ids.index(current)
    case_id = nav[1].selectbox(f"Case ({pos + 1} of {len(ids)}, queue order)", ids, key=vm.CASE)
    nav[2].button(
        "Next →",
        on_click=_go,
        args=(next_id,),
        disabled=next_id is None,
        key="next",
        width="stretch",
        shortcut=KEYS["next"],
    )
    assert case_id is not None  # a selectbox over the queue (never empty here) has a value
    return case_id


def no_evidence(kind: str, said: str, code: str | None) -> None:
    icon = {"info": ":material/skip_next:", "warning": ":material/pending:", "error": ":material/error:"}
    getattr(st, kind)(said, icon=icon[kind])
    if code is not None:
        st.code(code, language=None, wrap_lines=True)


def case_input(case: Case) -> None:
    """The input the runner was given, in view (a long one scrolls in a pane of its own)."""
    st.markdown(f"**{vm.case_input_title(case)}**")
    long = len(case.input.splitlines()) + len(case.input) // 100 > 7
    with st.container(height=170 if long else "content", border=long):
        st.text(case.input)
    for said in vm.gate_answers(case):
        st.caption(said)


def transcripts(store: Store, row: CaseRow) -> None:
    """Both runs' transcripts (word diff) and self-reports (six fields), side by side."""
    teacher, cand = cases.side(store, row.teacher_key), cases.side(store, row.candidate_key)
    if not (teacher and cand):
        st.warning("The stored transcripts for this case are missing.")
        return
    t1, t2 = st.tabs(["Transcripts (word diff)", "Self-reports (six fields)"])
    t1.caption("Removed words are struck through on the left, added words highlighted on the right.")
    # a long transcript gets a pane of its own height, so Agree and Override stay in reach below
    # it; a short one is shown whole (no fixed pane around one line)
    long = max(len(x.transcript.splitlines()) + len(x.transcript) // 120 for x in (teacher, cand)) > 28
    t1.container(height=560 if long else "content").html(
        side_by_side_html(
            teacher.transcript, cand.transcript, left_label="Original (teacher)", right_label="Candidate"
        )
    )
    t2.caption("One row per field; inside a field that differs, the same word diff as the transcripts.")
    t2.html(
        self_report_html(
            cases.self_report_rows(teacher.self_report, cand.self_report), "Original (teacher)", "Candidate"
        )
    )


def workspaces(store: Store, row: CaseRow) -> None:
    """Runs in a workspace (tools, a runner command): what each did to its copy, side by side."""
    sides = observed.arms(store, row)
    for col, arm in zip(st.columns(2) if sides else [], sides):
        with col:
            st.markdown(f"**{arm.label}: workspace changes**")
            if arm.not_reported:
                st.caption(
                    md(f"Self-report fields not reported by the runner: {', '.join(arm.not_reported)}")
                )
            for title, diff, note in arm.changes:
                st.caption(md(title + (f" ({note})" if note else "")))
                if diff:
                    st.code(diff, language="diff")
            if not arm.changes:
                st.caption("No file added, changed or deleted.")
            if arm.trace:
                st.markdown(f"**{arm.label}: tool trace**")
                st.dataframe(arm.trace, hide_index=True, width="stretch")


ASSIGN_WHICH = {"open": "Cases nobody has yet", "listed": "The cases listed now (filters, search)"}


def team(store: Store, run_id: int, rows: list[CaseRow], listed: list[str]) -> None:
    """Work shared out: each reviewer's progress and agreement with the judge, and the control that
    deals the run's cases out (or assigns the listed ones) to the reviewers named."""
    ss = st.session_state
    table, shared = vm.team(store, run_id, rows)
    if said := ss.pop("assign_flash", None):  # outside the box: said even when it is closed
        st.success(said, icon=":material/group:")
    if err := ss.pop("assign_error", None):
        st.error(err)
    box = st.expander(f"Reviewers: {shared}", icon=":material/group:", key="review_team", on_change="rerun")
    if not box.open:
        return
    with box:
        if table:
            st.dataframe(table, hide_index=True, width="stretch")
        else:
            st.caption("No case of this run is assigned yet: each reviewer sees their own cases first.")
        # Enter in the names field deals nothing: only the button does (issue 46)
        with st.form("assign_form", border=False, enter_to_submit=False):
            st.text_input("Reviewers", key="assign_to", placeholder="ana, bo", help="Names, comma-separated.")
            st.radio("Which cases", list(ASSIGN_WHICH), format_func=ASSIGN_WHICH.get, key="assign_which")
            deal = st.form_submit_button("Deal out evenly", icon=":material/playing_cards:")
        take_back(store, run_id, bool(table))
    if not deal:
        return
    try:
        which = listed if ss.get("assign_which") == "listed" else None
        who = session.reviewer(ss)
        plan = assign(store, run_id, ss.get("assign_to") or "", which, deal=True, by=who)
        loads = ", ".join(f"{md(n)} {list(plan.values()).count(n)}" for n in dict.fromkeys(plan.values()))
        none = "Nothing to assign: every case has a reviewer."
        ss["assign_flash"] = f"Assigned {len(plan)} case(s): {loads}." if plan else none
    except AbeqError as e:
        ss["assign_error"] = error_md(e)
    st.rerun()  # the whole page: each reviewer's queue order changes with it


def take_back(store: Store, run_id: int, any_assigned: bool) -> None:
    """Take back assignments: the ones this reviewer dealt or holds, after a question that names how
    many (one click must not undo a team's sharing-out)."""
    ss = st.session_state
    if not any_assigned:
        return
    me = session.reviewer(ss)
    mine = takeable(store, run_id, me)
    asked = ss.get("assign_ask")
    if asked and asked[0] == run_id:
        n = len(asked[1])
        st.warning(
            md(f"Take back {n} assignment(s) of run {run_id} (the ones {me} dealt or holds)? ")
            + "Their reviewers' queues go back to the usual order.",
            icon=":material/warning:",
        )
        row = st.container(horizontal=True)
        yes = row.button(f"Yes, take back {n}", type="primary", key="assign_clear_yes")
        if row.button("Cancel", key="assign_clear_no") or yes:
            ss.pop("assign_ask", None)
            if yes:
                try:
                    took = unassign(store, run_id, asked[1], by=me)
                    ss["assign_flash"] = f"Took back {took} assignment(s)."
                except AbeqError as e:
                    ss["assign_error"] = error_md(e)
            st.rerun()
        return
    label = f"Take back {len(mine)} assignment(s)…" if mine else "Take back assignments…"
    why = (
        "The ones you dealt and the ones that are yours; you are asked first."
        if me
        else "Type your name under Reviewer first: you may take back the ones you dealt or hold."
    )
    if st.button(label, key="assign_clear", disabled=not mine, help=why):
        ss["assign_ask"] = (run_id, mine)
        st.rerun()
