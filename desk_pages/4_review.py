"""Review: a queue of cases, original and candidate side by side; Agree or Override each verdict."""

from __future__ import annotations

import streamlit as st

from abeq.desk import cases, links, observed, session
from abeq.desk import review_view as view
from abeq.desk import runs as run_state
from abeq.desk.render import md, self_report_html
from abeq.results.diff import side_by_side_html
from abeq.results.report import build_report, gate_result
from abeq.timestamps import local
from abeq.vocab import GATES, NOT_RUN_STAGE

store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("Review")
runs = store.runs(review["id"])[::-1]
q, ss = st.query_params, st.session_state
if not runs:
    for name in ("run", "case"):  # another review's run and case must not linger in the URL
        links.publish(q, ss, name, None, scope="review")
    st.info("No run yet for this review: start one on Run.")
    st.stop()

run_ids = [r["id"] for r in runs]
if (
    asked := links.adopt(q, ss, "run", scope="review")
) is not None:  # a deep link, a reload, a link the desk drew
    if asked.isdigit() and int(asked) in run_ids:
        ss["review_run"] = int(asked)
    else:
        st.warning(
            md(
                f"Run {asked} is not a run of this review; showing its latest run. (Pick the run's review "
                "in the sidebar to open it.)"
            )
        )
if ss.get("review_run") not in run_ids:  # the widget's state goes when the page is left: keep a copy
    ss["review_run"] = ss.get("keep:review_run") if ss.get("keep:review_run") in run_ids else run_ids[0]
by_run = {r["id"]: r for r in runs}
cand_names = {r["candidate_hash"]: (store.document(r["candidate_hash"]) or {}).get("name", "?") for r in runs}
run_id = st.selectbox(
    "Run",
    run_ids,
    key="review_run",
    format_func=lambda i: (
        f"run {i} · round {by_run[i]['round']} · candidate {cand_names[by_run[i]['candidate_hash']]} · "
        f"{by_run[i]['runner_model']} / {by_run[i]['judge_model']} · {by_run[i]['status']} · "
        f"{local(by_run[i]['started_at'])}"
    ),
)
ss["keep:review_run"] = run_id
rr = build_report(store, run_id)

# ---------------------------------------------------------------- summary, trust, exports
profile = st.radio(
    "Gate",
    list(GATES),
    horizontal=True,
    key="gate_profile",
    help="compress: no regression. directive-clarity: no regression and higher candidate directness.",
)
running = run_state.review_headline(by_run[run_id], rr.rows)
view.summary(st, store, rr, by_run[run_id], gate_result(rr, profile), running)
view.export_buttons(st, run_id, profile)
view.keyboard(st)

# ---------------------------------------------------------------- the queue: filters, search, list
if running:
    st.caption("The run is still going: finished cases are listed; reload to see the ones that land.")
shown = run_state.finished_rows(by_run[run_id], rr.rows)  # a pending case is not an error yet
by_id = {r.case_id: r for r in shown}
if (asked := links.adopt(q, ss, "case", scope="review")) is not None:
    if asked in by_id:
        ss["review_goto"] = asked
        # a link opens its case whatever this session's filters are
        ss.update(review_filter="all", review_seen="all", review_search="")
    else:
        st.warning(md(f"Run {run_id} has no case '{asked}'."))
n, seen_n = cases.counts(shown), cases.reviewed_counts(shown)
for k in ("review_filter", "review_seen"):
    ss.setdefault(k, "all")
f1 = st.container()
f2, f3 = st.columns([1, 1], vertical_alignment="bottom")
with f1:
    which = (
        st.segmented_control(
            "Show",
            list(cases.FILTERS),
            key="review_filter",
            required=True,
            format_func=lambda k: f"{cases.FILTERS[k]} ({n[k]})",
        )
        or "all"
    )
with f2:
    seen = (
        st.segmented_control(
            "Reviewed",
            list(cases.REVIEWED),
            key="review_seen",
            required=True,
            format_func=lambda k: f"{cases.REVIEWED[k]} ({seen_n[k]})",
        )
        or "all"
    )
text = f3.text_input(
    "Search", key="review_search", placeholder="case ids, inputs, transcripts", help="Case-insensitive."
)
run_set = store.transfer_set(by_run[run_id]["transfer_set_hash"])
set_cases = {c.id: c for c in (run_set.cases if run_set else [])}
found = None
if text.strip():
    memo = (run_id, text.strip(), by_run[run_id]["status"], by_run[run_id]["finished_at"])
    if ss.get("review_found", (None,))[0] != memo:
        ss["review_found"] = (memo, cases.search(store, run_id, set_cases, text))
    found = ss["review_found"][1]
rows = cases.filter_rows(shown, which, seen, found)
if not rows:
    st.info("No case has finished yet." if running and not shown else "No case matches these filters.")
    st.stop()
ids = [r.case_id for r in rows]
if (goto := ss.pop("review_goto", None)) in ids:
    ss["review_case"] = goto
if ss.get("review_case") not in ids:
    kept = ss.get("keep:review_case")
    before = ss.get("review_ids", [])
    cur = ss.get("review_case")
    after = before[before.index(cur) + 1 :] if cur in before else []  # it left the list: the one after it
    ss["review_case"] = (
        kept[1]
        if kept and kept[0] == run_id and kept[1] in ids
        else next((c for c in after if c in ids), ids[0])
    )
ss["review_ids"] = ids
view.case_table(st, rows, ss["review_case"], run_id)


def go(case_id):
    ss["review_case"] = case_id


prev_id, next_id = cases.neighbours(ids, ss["review_case"])
nav = st.columns([1, 4, 1], vertical_alignment="bottom")
nav[0].button(
    "← Previous",
    on_click=go,
    args=(prev_id,),
    disabled=prev_id is None,
    key="prev",
    width="stretch",
    shortcut=view.KEYS["prev"],
)
pos = ids.index(ss["review_case"])
case_id = nav[1].selectbox(f"Case ({pos + 1} of {len(ids)}, queue order)", ids, key="review_case")
nav[2].button(
    "Next →",
    on_click=go,
    args=(next_id,),
    disabled=next_id is None,
    key="next",
    width="stretch",
    shortcut=view.KEYS["next"],
)
ss["keep:review_case"] = (run_id, case_id)
links.publish(q, ss, "run", run_id, scope="review")
links.publish(q, ss, "case", case_id, scope="review")
row = by_id[case_id]

# ---------------------------------------------------------------- one case
if row.error_stage == NOT_RUN_STAGE:
    st.info(md(row.error or NOT_RUN_STAGE), icon=":material/skip_next:")
    st.stop()
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

view.badges(st, row)
st.page_link(
    links.COMPARE_PAGE,
    label="Blind-compare this case's two outputs",
    icon=":material/compare:",
    query_params=links.review_params(review["name"], run_id, case_id),
)
view.judge_and_reviewer(st, row)
the_case = set_cases.get(case_id)
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
    # a pane of its own height keeps Agree and Override in reach below a long transcript
    t1.container(height=560).html(
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

# ---------------------------------------------------------------- the reviewer's word
done = {r.case_id for r in rr.rows if r.reviewed or r.status != "judged"} | {case_id}
view.actions(st, store, run_id, row, cases.next_in_queue(ids, done, case_id))
