"""The Review page's parts: the run's summary and trust figures, the exports, one case's evidence,
and the reviewer's actions (Agree, Override, the concurrent-edit question, the audit trail).

Drawing only: every decision is the library's (abeq.results.review.reviewing records actions,
abeq.results.reports.exports renders the files). `st` is the streamlit module, passed in so this module
imports without it.
"""

from __future__ import annotations

import html
import time
from collections import Counter

from ..errors import AbeqError, ReviewConflict
from ..results.reports import agreement, exports
from ..results.reports.agreement import aa_rates, check_witness, judge_agreement, judge_calibration
from ..results.reports.report import CaseRow, RunReport, build_report
from ..results.review.reviewing import describe, record
from ..results.store.store import Store, db_path
from ..timestamps import ago, local
from ..vocab import AGREE, OVERRIDE, VERDICTS
from . import cases, session
from .keys import KEYS, KEYS_HELP, keyboard  # noqa: F401 (keyboard: the page calls it from here)
from .render import VERDICT_COLOR, checks_html, error_md, md
from .review_vm import BOARD, CASE_PANEL, figures


# ---------------------------------------------------------------- summary
def summary(
    st, store: Store, rr: RunReport, run: dict, gate: dict, running: str | None, in_flight: list[str]
) -> None:
    """PASS/FAIL (or, while the run runs, how far it is), the effective verdict counts, reviewed
    cases, and how far to trust the judge."""
    # metrics of their own width that wrap: every label whole from 1024 px up (columns cut them)
    verdict, head = st.columns([1, 4], vertical_alignment="center")
    with verdict:
        if running:  # a running run is not a failed one
            st.markdown("### :blue[running]")
            st.caption(running)
        elif incomplete := rr.incomplete():  # cancelled, interrupted: what was judged stands
            st.markdown(f"### :orange[{incomplete.split(':')[0]}]")
            st.caption(incomplete)
        else:
            st.markdown("### :green[✓ PASS]" if gate["pass"] else "### :red[✗ FAIL]")
            st.caption(f"{gate['gate']} gate, from effective verdicts")
    row = head.container(horizontal=True, gap="medium")
    for label, value, why in figures(rr, in_flight):
        if label != "Not run" or value:
            row.metric(label, value, help=why, width="content")
    trust = [
        f"A/A false-regression rate {a['false_regression_rate']:.0%} over {a['cases']} cases (the judge "
        "called the teacher's own replay regressed); regressions on noisy cases are marked within noise"
        for a in aa_rates(store, run["id"])
    ]
    trust.append(judge_calibration(store, run["judge_model"])["line"])
    trust += [
        f"where a check the original passes failed on the candidate, this judge also said regressed in "
        f"{w['judge_also_regressed']} of {w['cases_with_lost_checks']} cases"
        for w in check_witness(store)
        if w["judge_model"] == run["judge_model"]
    ]
    # this run's actions only: the judge's other runs (other sets, other candidates) are not this one
    agree = next(
        (a for a in judge_agreement(store, run["id"]) if a["judge_model"] == run["judge_model"]), None
    )
    t = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
    t.metric(
        "Reviewed (this run)",
        agree["reviewed"] if agree else 0,
        help="Cases of this run a reviewer agreed with or overrode.",
        width="content",
    )
    t.metric(
        "Agreement",
        f"{agree['raw_agreement']:.0%}" if agree else "—",
        help="Share of this run's reviewed cases where the reviewer's verdict is the judge's.",
        width="content",
    )
    kappa = agreement.kappa_text(agree["kappa"], agree["kappa_note"], agree["reviewed"]) if agree else "—"
    t.metric(
        "Cohen's κ",
        kappa,
        help="Agreement between the judge and this run's reviewers beyond chance (1 = perfect; 0 = "
        f"chance). 'too few' under {agreement.MIN_KAPPA_N} reviewed cases (one more case moves it by "
        "0.3 or more); — when undefined (nothing reviewed, or a single verdict on both sides).",
        width="content",
    )
    if agree:
        counts = f"{agree['agreed']} agreed, {agree['overridden']} overridden"
        t.caption(
            md(f"{run['judge_model']} in this run: {counts}")
            + "".join(f" · {x}" for x in (agree["kappa_note"], agree["note"]) if x)
        )
    if caution := session.run_caution(run):  # only beside a run the embedded model made
        st.caption(md(caution))
    if trust:
        st.caption(" · ".join(trust))
    if rr.overridden:
        st.caption(
            f"{rr.overridden} verdict(s) overridden by a reviewer; the summary, gate and exports use them "
            "(the judge's verdicts are kept and listed in the exports)."
        )
    if said := one_run_confirmation(run):
        st.caption(said)


def one_run_confirmation(run: dict) -> str:
    """Whose acceptance a run made with `abeq run --confirm` ran on (Markdown; '' for a run on a
    confirmed set): the run's, not the set's."""
    who = run.get("set_confirmed_for_run")
    if not who:
        return ""
    return (
        f"The cases were accepted for this run only, by {md(who)} (`abeq run --confirm`); the set itself "
        "is not confirmed: Confirm it on **Transfer set** before the desk starts a run on it."
    )


def export_buttons(st, run_id: int, gate: str) -> None:
    """One download per CLI export format, overrides applied; each file is made when clicked."""
    db = db_path()

    def make(fmt: str):
        def data() -> str:
            store = Store(db)
            try:
                return exports.render(store, build_report(store, run_id), fmt, gate)
            finally:
                store.close()

        return data

    row = st.container(horizontal=True, vertical_alignment="center")
    row.caption("Export (overrides applied):")
    for fmt, (label, suffix, mime) in exports.FORMATS.items():
        row.download_button(
            label,
            make(fmt),
            file_name=f"abeq-run-{run_id}{suffix}",
            mime=mime,
            key=f"export_{fmt}",
            on_click="ignore",
            icon=":material/download:",
        )


# ---------------------------------------------------------------- one case
def badges(st, row: CaseRow) -> None:
    assert row.verdict is not None  # only judged cases are shown
    with st.container(horizontal=True):
        st.badge(row.verdict, color=VERDICT_COLOR[row.verdict])
        if row.override:
            carried = row.override.get("carried_from")
            st.badge(
                f"overridden (judge said {row.judge_verdict})"
                + (f"; carried from run {carried}" if carried else ""),
                color="violet",
                icon=":material/edit:",
            )
        elif row.agreed and row.review:
            who = md(row.review["reviewer"])  # a badge's label is Markdown
            st.badge(f"reviewer agreed ({who})", color="green", icon=":material/done_all:")
        else:
            st.badge("not reviewed", color="gray")
        if len(set(row.samples)) > 1 and not row.sampling:  # a sampled case's pairs: its rates say
            split = ", ".join(f"{n} {v}" for v, n in Counter(row.samples).most_common())
            st.badge(
                f"uncertain: judge samples split {split} (agreement {row.agreement:.0%})", color="yellow"
            )
        if row.undecided:
            st.badge(
                "undecided: a lower rate these samples cannot tell from chance; more may change the verdict",
                color="yellow",
            )
        if row.checks_disagree:
            st.badge(f"uncertain: checks found a loss, the judge said {row.judge_verdict}", color="yellow")
        if row.gate_truncated:
            st.badge("gate-truncated: judged up to the unanswered gate", color="gray")


def judge_and_reviewer(st, row: CaseRow) -> None:
    """The judge's delta and notes stay in view after an override, beside the reviewer's reason."""
    st.markdown(f"**Judge: {row.judge_verdict}** · behaviour delta")
    st.text(row.judge_delta or "— (none: equivalent)")
    if row.review:
        st.markdown("**Reviewer:** " + md(describe(row.review)) + " · " + md(local(row.review["created_at"])))
        if row.review.get("reason"):
            st.markdown("**Reviewer's reason**")
            st.text(row.review["reason"])


def case_figures(st, row: CaseRow) -> None:
    """The judge's notes, directness, what the case cost, and its checks."""
    st.markdown("**Interpretation notes**")
    st.text(row.interpretation_notes or "—")
    figures = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
    figures.metric(
        "Directness original → candidate",
        f"{row.original_directness} → {row.candidate_directness}",
        (row.candidate_directness or 0) - (row.original_directness or 0),  # both set on a judged case
        help="5 = acted at once; 1 = heavy unpacking.",
        width="content",
    )
    figures.caption(
        f"This case in this run: {row.calls_made} model call(s) made, {row.calls_cached} from the cache, "
        f"{row.tokens:,} tokens, "
        + (
            f"cost unknown ({row.unpriced_calls} unpriced call(s))"
            if row.unpriced_calls
            else f"${row.cost:.4f}"
        )
    )
    if row.checks:  # the full width: its four columns stay legible from 1024 px up
        lost = len(row.checks_lost)
        st.markdown(
            f"**Checks** ({len(row.checks)}"
            + (f"; {lost} lost on the candidate, so the case is regressed" if lost else "")
            + ")"
        )
        st.html(checks_html(row.checks))


# ---------------------------------------------------------------- actions
def _act(run_id: int, case_id: str, action: str, verdict, reason: str, goto, replace: bool = False) -> None:
    """Record an action (after the form's submit, or as Replace's callback) and say what happened;
    a conflict or a refusal is kept for the page to show."""
    import streamlit as st

    ss = st.session_state
    store = Store(db_path())
    try:
        record(
            store,
            run_id,
            case_id,
            action=action,
            verdict=verdict,
            reason=reason,
            reviewer=session.acting_reviewer(ss),
            seen=ss.get("ov_seen"),
            replace=replace,
        )
    except ReviewConflict as e:
        ss["review_conflict"] = {
            "key": (run_id, case_id),
            "action": action,
            "verdict": verdict,
            "reason": reason,
            "goto": goto,
            "message": e.message,
        }
        return
    except AbeqError as e:
        ss["review_error"] = error_md(e)
        return
    finally:
        store.close()
    ss.pop("review_conflict", None)
    ss["ov_case"] = None  # a fresh form (and a fresh `seen`) for whatever case comes next
    ss["review_flash"] = (
        f"Agreed with the judge: {case_id} stays {verdict}."
        if action == AGREE
        else f"Override saved: {case_id} → {verdict}."
    )
    if goto:
        ss["review_goto"] = goto


def _keep_theirs() -> None:
    import streamlit as st

    st.session_state.pop("review_conflict", None)
    st.session_state["ov_case"] = None  # read the case afresh: what is in effect now is what you saw


def announce(st, row: CaseRow, pos: int, total: int, whose: str = "") -> None:
    """The case open, named at the top of its panel (with whose it is, when the run is shared out),
    then what the last action did. After Agree or Override the page scrolls back here, and a screen
    reader reads it (a live region)."""
    ss = st.session_state
    flash = ss.pop("review_flash", None)
    assert row.verdict is not None  # only judged cases get here
    # data-abeq-case tells the keyboard script which case is shown (A waits a moment after it changes)
    st.html(
        f'<div class="abeq-case" data-abeq-case="{html.escape(row.case_id, quote=True)}" '
        f'data-abeq-verdict="{html.escape(row.verdict, quote=True)}" role="status" aria-live="polite" '
        'style="scroll-margin-top:4.5rem"><div style="font:600 1.25rem/1.4 sans-serif">'
        f"{html.escape(row.case_id)} <span style='font-weight:400;color:#59636e'>· case {pos} of "
        f"{total}{' · ' + html.escape(whose) if whose else ''}</span></div>"
        + (f'<div style="color:#1a7f37;font-size:.9rem">{html.escape(flash)}</div>' if flash else "")
        + "</div>"
    )
    if flash:  # the view stays where Agree was: bring the next case's top to the top of the screen
        st.html(
            "<script>(() => {const c = window.document.querySelector('[data-abeq-case]');"
            "if (c) c.scrollIntoView({block: 'start'});"
            f"/* {html.escape(row.case_id)} {time.time()} */}})();</script>",
            unsafe_allow_javascript=True,
        )


def review_form(st, run_id: int, row: CaseRow, goto: str | None) -> None:
    """Agree, Override, and the question when someone else acted first."""
    ss = st.session_state
    case_id = row.case_id
    if ss.get("ov_case") != (run_id, case_id):  # a fresh form for each case; the name stays
        ss.update(
            ov_case=(run_id, case_id),
            ov_verdict=row.verdict,
            ov_reason="",
            ov_seen=row.review["id"] if row.review else None,  # what this reviewer has in front of them
        )
    if err := ss.pop("review_error", None):
        st.error(err)
    conflict = ss.get("review_conflict")
    if conflict and conflict["key"] == (run_id, case_id):
        st.warning(md(conflict["message"]), icon=":material/group:")
        c = st.container(horizontal=True)
        c.button(
            "Replace with mine",
            type="primary",
            key="conflict_replace",
            on_click=_act,
            args=(
                run_id,
                case_id,
                conflict["action"],
                conflict["verdict"],
                conflict["reason"],
                conflict["goto"],
            ),
            kwargs={"replace": True},
        )
        c.button("Keep theirs", key="conflict_keep", on_click=_keep_theirs)

    # One form for both actions. The reviewer's name is the sidebar's (the router draws it on every
    # page): it is kept, and put in the URL, as it is typed, so a reload keeps it before any action.
    # A key never submits the form: Streamlit's Enter / Ctrl+Enter press its first button, Agree,
    # which recorded an Agree nobody chose (issue 46). Ctrl+Enter in the Reason is Save override
    # (keys.py).
    with st.form("review_action", border=True, enter_to_submit=False):
        label = f"Agree with the judge: {row.machine_verdict}"
        if row.machine_verdict != row.judge_verdict:  # a lost check made it regressed
            label = f"Agree: {row.machine_verdict} (a check was lost; the judge said {row.judge_verdict})"
        if row.override:
            label += " (replaces the override)"
        agree = st.form_submit_button(
            label,
            key="agree",
            type="primary",  # the usual action; Save override is the secondary one
            icon=":material/done_all:",
            width="stretch",
            help="Accept the judge's verdict: recorded with your name and the time; it counts toward κ. "
            "Key A (it waits a moment after a new case is shown, so that you read it first).",
        )
        verdict = st.selectbox("Verdict (for an override)", list(VERDICTS), key="ov_verdict")
        reason = st.text_area(
            "Reason (required to override)",
            key="ov_reason",
            height=68,
            placeholder="Required to override; a note when you agree. Kept with your name and the time.",
        )
        save = st.form_submit_button("Save override", key="ov_submit", width="stretch")
        if signed_in := ss.get(session.SIGNED_IN_KEY):  # the person signed in acts: no name to type
            st.caption(f"Recorded as **{md(signed_in)}** (signed in).")
        else:
            st.caption(
                f"Recorded as **{md(session.acting_reviewer(ss)) or '(no name)'}** (the sidebar's name)."
            )
    st.caption(KEYS_HELP)
    if agree or save:
        if agree:
            _act(run_id, case_id, AGREE, row.machine_verdict, reason, goto)
        else:
            _act(run_id, case_id, OVERRIDE, verdict, reason, goto)
        st.rerun()


def audit_trail(st, store: Store, run_id: int, case_id: str) -> None:
    history = store.ledger.override_history(run_id, case_id)
    if history:
        st.caption("Audit trail (the latest is in effect)")
        st.dataframe(
            [
                {
                    "when": f"{local(h['created_at'])} ({ago(h['created_at'])})",
                    "reviewer": h["reviewer"],
                    "action": h["action"],
                    "verdict": h["verdict"],
                    "judge said": h["judge_verdict"],
                    "replaced": h["seen_verdict"] if h["seen_id"] else "",
                    "reason": h["reason"],
                }
                for h in history
            ],
            hide_index=True,
            width="stretch",
        )


def case_table(st, rows: list[CaseRow], current: str, run_id: int, page_size: int = 25) -> None:
    """The filtered cases as a table; clicking a row opens that case."""
    pos = next((i for i, r in enumerate(rows) if r.case_id == current), 0)
    # drawn only while open: a closed list costs the browser nothing (a data grid is its heaviest part)
    box = st.expander(
        f"Case list ({len(rows)}): click a row to open it", key="review_list", on_change="rerun"
    )
    if not box.open:
        return
    with box:
        pages = max(1, -(-len(rows) // page_size))
        page = st.number_input("Page", 1, pages, pos // page_size + 1, key=f"page_{run_id}_{len(rows)}")
        shown = rows[(page - 1) * page_size : page * page_size]
        key = f"case_table_{run_id}_{page}_{current}"  # a new key per case clears the old highlight

        def pick() -> None:
            picked = st.session_state[key]["selection"]["rows"]
            if picked:
                st.session_state["review_goto"] = shown[picked[0]].case_id
                st.rerun([BOARD, CASE_PANEL])  # the case panel opens it (the timer never redraws it)

        st.dataframe(
            cases.table(shown),
            hide_index=True,
            width="stretch",
            key=key,
            on_select=pick,
            selection_mode="single-row",
        )
