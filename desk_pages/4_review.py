"""Review: one case at a time, original and candidate side by side; override a verdict with a reason."""

from __future__ import annotations

import json

import streamlit as st

from abeq.desk import cases, observed, session
from abeq.desk import runs as run_state
from abeq.desk.render import VERDICT_COLOR, checks_html, md, self_report_html
from abeq.errors import AbeqError
from abeq.results.agreement import aa_rates, check_witness, judge_agreement
from abeq.results.diff import side_by_side_html
from abeq.results.report import build_report, gate_result
from abeq.schemas import VERDICTS
from abeq.vocab import GATES

PAGE = 25
store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("Review")
runs = store.runs(review["id"])[::-1]
if not runs:
    st.info("No run yet for this review: start one on Run.")
    st.stop()

q = st.query_params
run_ids = [r["id"] for r in runs]
if q.get("run", "").isdigit() and int(q["run"]) in run_ids and "review_run" not in st.session_state:
    st.session_state["review_run"] = int(q["run"])
if (
    q.get("run")
    and not (q["run"].isdigit() and int(q["run"]) in run_ids)
    and "review_run" not in st.session_state
):
    st.warning(
        md(
            f"Run {q['run']} is not a run of this review; showing its latest run. (Pick the run's review "
            "in the sidebar to open it.)"
        )
    )
if st.session_state.get("review_run") not in run_ids:
    st.session_state["review_run"] = run_ids[0]
by_run = {r["id"]: r for r in runs}
cand_names = {r["candidate_hash"]: (store.document(r["candidate_hash"]) or {}).get("name", "?") for r in runs}
run_id = st.selectbox(
    "Run",
    run_ids,
    key="review_run",
    format_func=lambda i: (
        f"run {i} · round {by_run[i]['round']} · candidate {cand_names[by_run[i]['candidate_hash']]} · "
        f"{by_run[i]['runner_model']} / {by_run[i]['judge_model']} · {by_run[i]['status']}"
    ),
)
rr = build_report(store, run_id)

# ---------------------------------------------------------------- summary and gate
profile = st.radio(
    "Gate",
    list(GATES),
    horizontal=True,
    key="gate_profile",
    help="compress: no regression. directive-clarity: no regression and higher candidate directness.",
)
gate, s = gate_result(rr, profile), rr.report["summary"]
head = st.columns([1.2, 1, 1, 1, 1, 1, 1.6])
running = run_state.review_headline(by_run[run_id], rr.rows)  # a running run is not a failed one
with head[0]:
    if running:
        st.markdown("### :blue[running]")
        st.caption(running)
    else:
        st.markdown("### :green[✓ PASS]" if gate["pass"] else "### :red[✗ FAIL]")
        st.caption(f"{profile} gate, from effective verdicts")
head[1].metric("Regressed", s["regressions"])
head[2].metric("Diverged", s["divergences"])
head[3].metric("Equivalent", s["equivalents"])
head[4].metric("Errored", sum(r.status == "error" for r in rr.rows) if running else len(rr.errors))
head[5].metric("Overridden", rr.overridden)
head[6].download_button(
    "Export report JSON",
    json.dumps(rr.with_errors(), indent=2, ensure_ascii=False),
    file_name=f"abeq-run-{run_id}.json",
    mime="application/json",
    icon=":material/download:",
)
trust = []
for a in aa_rates(store, run_id):
    trust.append(
        f"A/A false-regression rate {a['false_regression_rate']:.0%} over {a['cases']} cases "
        f"(the judge called the teacher's own replay regressed); regressions on noisy cases are "
        "marked within noise"
    )
for a in judge_agreement(store):
    if a["judge_model"] == by_run[run_id]["judge_model"]:
        k = "n/a" if a["kappa"] is None else f"{a['kappa']:.2f}"
        trust.append(
            f"this judge agrees with reviewers on {a['raw_agreement']:.0%} of {a['reviewed']} reviewed "
            f"cases (Cohen's κ {k}{'; ' + a['note'] if a['note'] else ''})"
        )
for w in check_witness(store):
    if w["judge_model"] == by_run[run_id]["judge_model"]:
        trust.append(
            f"where a check the original passes failed on the candidate, this judge also said regressed in "
            f"{w['judge_also_regressed']} of {w['cases_with_lost_checks']} cases"
        )
if trust:
    st.caption(" · ".join(trust))
if rr.overridden:
    st.caption(
        f"{rr.overridden} verdict(s) overridden by a reviewer; the summary, gate and export use them "
        "(the judge's verdicts are kept and listed in the export)."
    )

# ---------------------------------------------------------------- case list
if running:
    st.caption("The run is still going: finished cases are listed; reload to see the ones that land.")
shown = run_state.finished_rows(by_run[run_id], rr.rows)
n = cases.counts(shown)
which = (
    st.segmented_control(
        "Show",
        list(cases.FILTERS),
        key="review_filter",
        required=True,
        default="all",
        format_func=lambda k: f"{cases.FILTERS[k]} ({n[k]})",
    )
    or "all"
)
rows = cases.filter_rows(shown, which)
if not rows:
    st.info("No case has finished yet." if running and not shown else "No case matches this filter.")
    st.stop()
ids = [r.case_id for r in rows]
if q.get("case") in ids and "review_case" not in st.session_state:
    st.session_state["review_case"] = q["case"]
if st.session_state.get("review_case") not in ids:
    # the case left the filtered list (an override changed its verdict): go on to the one after it
    before = st.session_state.get("review_ids", [])
    cur = st.session_state.get("review_case")
    after = before[before.index(cur) + 1 :] if cur in before else []
    st.session_state["review_case"] = next((c for c in after if c in ids), ids[0])
st.session_state["review_ids"] = ids
pos = ids.index(st.session_state["review_case"])
with st.expander(f"Case list ({len(rows)})", expanded=False):
    page = st.number_input(
        "Page", 1, max(1, -(-len(rows) // PAGE)), pos // PAGE + 1, key=f"page_{which}_{run_id}"
    )
    st.dataframe(cases.table(rows[(page - 1) * PAGE : page * PAGE]), hide_index=True, width="stretch")


def go(case_id):
    st.session_state["review_case"] = case_id


prev_id, next_id = cases.neighbours(ids, st.session_state["review_case"])
nav = st.columns([1, 4, 1], vertical_alignment="bottom")
nav[0].button(
    "← Previous", on_click=go, args=(prev_id,), disabled=prev_id is None, key="prev", width="stretch"
)
case_id = nav[1].selectbox(f"Case ({pos + 1} of {len(ids)})", ids, key="review_case")
nav[2].button("Next →", on_click=go, args=(next_id,), disabled=next_id is None, key="next", width="stretch")
row = next(r for r in rows if r.case_id == case_id)

# ---------------------------------------------------------------- one case
if row.status == "pending":
    st.warning(
        "This case was not run: the run was cancelled or interrupted before it. **Start** on Run with the "
        "same settings resumes the run. A case without a verdict fails the gate; it is listed under "
        "`errors` in the export.",
        icon=":material/pending:",
    )
    st.stop()
if row.status != "judged":
    st.error(
        f"This case has no verdict: it errored at the **{md(row.error_stage or row.status)}** stage. "
        "An errored case fails the gate; it is listed under `errors` in the export.",
        icon=":material/error:",
    )
    st.code(
        row.error or "the case was never judged (interrupted or cancelled run)",
        language=None,
        wrap_lines=True,
    )
    st.stop()

badges = st.container(horizontal=True)
with badges:
    st.badge(row.verdict, color=VERDICT_COLOR[row.verdict])
    if row.override:
        carried = row.override.get("carried_from")
        st.badge(
            f"overridden (judge said {row.judge_verdict})"
            + (f"; carried from run {carried}" if carried else ""),
            color="violet",
            icon=":material/edit:",
        )
    if len(set(row.samples)) > 1:
        st.badge(
            f"uncertain: judge samples split {' / '.join(row.samples)} (agreement {row.agreement:.0%})",
            color="yellow",
        )
    if row.checks_disagree:
        st.badge(f"uncertain: checks found a loss, the judge said {row.judge_verdict}", color="yellow")
    if row.gate_truncated:
        st.badge("gate-truncated: judged up to the unanswered gate", color="gray")
c1, c2 = st.columns([3, 1])
with c1:
    st.markdown("**Behaviour delta**")
    st.text(row.behaviour_delta or "— (none: equivalent)")
    st.markdown("**Interpretation notes**")
    st.text(row.interpretation_notes or "—")
if row.checks:
    with c1:
        lost = len(row.checks_lost)
        st.markdown(
            f"**Checks** ({len(row.checks)}"
            + (f"; {lost} lost on the candidate, so the case is regressed" if lost else "")
            + ")"
        )
        st.html(checks_html(row.checks))
        if row.checks_disagree:
            st.caption(md(f"The judge's own verdict: {row.judge_verdict}. {row.judge_delta}"))
c2.metric(
    "Directness original → candidate",
    f"{row.original_directness} → {row.candidate_directness}",
    row.candidate_directness - row.original_directness,
    help="5 = acted at once; 1 = heavy unpacking.",
)
c2.caption(
    f"This case in this run: {row.calls_made} model call(s) made, {row.calls_cached} from the cache, "
    f"{row.tokens:,} tokens, ${row.cost:.4f}"
    + (f" (+{row.unpriced_calls} unpriced)" if row.unpriced_calls else "")
)

run_set = store.transfer_set(by_run[run_id]["transfer_set_hash"])
the_case = next((c for c in (run_set.cases if run_set else []) if c.id == case_id), None)
if the_case is not None:
    with st.expander(
        f"Case input ({the_case.type}; exercises {', '.join(the_case.exercises_sections) or 'no section'})"
    ):
        st.text(the_case.input)
        for g in the_case.gate_responses:
            st.caption(md(f"gate answer: when asked “{g.pattern}” → “{g.response}”"))
teacher, cand = cases.side(store, row.teacher_key), cases.side(store, row.candidate_key)
if teacher and cand:
    t1, t2 = st.tabs(["Transcripts (word diff)", "Self-reports (six fields)"])
    t1.caption("Removed words are struck through on the left, added words highlighted on the right.")
    t1.html(
        side_by_side_html(
            teacher.transcript, cand.transcript, left_label="Original (teacher)", right_label="Candidate"
        )
    )
    t2.caption("One row per field; rows that differ are tinted.")
    t2.html(
        self_report_html(
            cases.self_report_rows(teacher.self_report, cand.self_report), "Original (teacher)", "Candidate"
        )
    )
else:
    st.warning("The stored transcripts for this case are missing.")
# runs in a workspace (tools, a runner command): what each did to its copy, side by side
sides = observed.arms(store, row)
for col, arm in zip(st.columns(2) if sides else [], sides):
    with col:
        st.markdown(f"**{arm.label}: workspace changes**")
        if arm.not_reported:
            st.caption(md(f"Self-report fields not reported by the runner: {', '.join(arm.not_reported)}"))
        for title, diff, note in arm.changes:
            st.caption(md(title + (f" ({note})" if note else "")))
            if diff:
                st.code(diff, language="diff")
        if not arm.changes:
            st.caption("No file added, changed or deleted.")
        if arm.trace:
            st.markdown(f"**{arm.label}: tool trace**")
            st.dataframe(arm.trace, hide_index=True, width="stretch")


# ---------------------------------------------------------------- override
st.subheader("Override")
if msg := st.session_state.pop("override_flash", None):
    st.success(msg)
if st.session_state.get("ov_case") != (run_id, case_id):  # a fresh form for each case; the name stays
    st.session_state.update(ov_case=(run_id, case_id), ov_verdict=row.verdict, ov_reason="")
with st.form("override"):
    verdict = st.selectbox("Verdict", list(VERDICTS), key="ov_verdict")
    reason = st.text_area("Reason (required; stored with your name and the time)", key="ov_reason")
    reviewer = st.text_input("Reviewer (required)", key="ov_reviewer")
    if st.form_submit_button("Save override", type="primary", key="ov_submit"):
        try:
            if not reviewer.strip():
                raise AbeqError("an override needs the reviewer's name", hint="It goes into the audit trail.")
            store.add_override(run_id, case_id, verdict, reason, reviewer.strip(), row.judge_verdict)
            st.session_state["override_flash"] = f"Override saved: {case_id} → {verdict}."
            st.session_state["ov_case"] = None
            st.rerun()
        except AbeqError as e:
            st.error(md(e.render()))
history = store.override_history(run_id, case_id)
if history:
    st.caption("Audit trail (latest in effect)")
    st.dataframe(
        [
            {k: h[k] for k in ("created_at", "reviewer", "judge_verdict", "verdict", "reason")}
            for h in history
        ],
        hide_index=True,
        width="stretch",
    )
