"""Run: pick the models and start a background run; live progress counted in calls; cancel; every
unfinished run of the review, with its settings, to cancel or resume."""

from __future__ import annotations

import streamlit as st

from abeq.api import estimate_run
from abeq.desk import links, queries, runs, session, worker
from abeq.desk.observed import COMMAND_NOTE, MODE_LABELS
from abeq.desk.render import md
from abeq.documents import Document, detect_variant
from abeq.errors import AbeqError
from abeq.models import DEFAULT_MODEL
from abeq.results.store import db_path
from abeq.execution.checks import model_checks
from abeq.execution.engine import RunConfig
from abeq.execution.estimate import estimate_calls, tools_ceiling_text
from abeq.execution.modes import RunnerMode
from abeq.sets import confirmation_problem
from abeq.sets import coverage as transferset_coverage
from abeq.vocab import VARIANTS

store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("Run")
original = store.document(review["original_hash"]) if review["original_hash"] else None
candidate = session.current_candidate(store, review, st.session_state)
ts = store.transfer_set(review["transfer_set_hash"]) if review["transfer_set_hash"] else None
if not (original and candidate and ts):
    st.warning("This review needs an original and a candidate (Documents) and a transfer set (Transfer set).")
    st.stop()
st.info(session.EMBEDDED_NOTE, icon=":material/info:")
CALLS_HELP = (
    "Calls resolved in this attempt (made, from the cache, or failed after retries) / calls the run needs."
)
CANCEL_HELP = (
    "No new model call starts; HTTP calls in flight are dropped; a reply the embedded model is generating "
    "is finished, then discarded. What finished is kept: Resume continues the run."
)

st.caption(md(f"Original {original['name']} → candidate {candidate['name']} · {len(ts.cases)} cases"))
# Streamlit drops a widget's state when its page is left; these settings outlive that (per session).
STICKY = {
    "runner_model": DEFAULT_MODEL,
    "judge_model": DEFAULT_MODEL,
    "api_base": "",
    "concurrency": 4,
    "judge_samples": 1,
    "aa": False,
    "runner_mode": "chat",
    "runner_cmd": "",
    "runner_cmd_version": "",
    "fail_fast": False,
}
for k, default in STICKY.items():
    if k not in st.session_state:
        st.session_state[k] = st.session_state.get(f"keep:{k}", default)
c1, c2 = st.columns(2)
runner = c1.text_input("Runner model (any litellm model string)", key="runner_model")
judge = c2.text_input("Judge model", key="judge_model")
api_base = c1.text_input(
    "API base (Ollama, vLLM, any OpenAI-compatible server; blank for hosted APIs)", key="api_base"
)
variants = list(VARIANTS)
variant = c2.selectbox(
    "Variant",
    variants,
    index=variants.index(detect_variant(original["name"])),
    key="variant",
    help="Detected from the original's file name (CLAUDE.md, AGENTS.md, … are instruction files).",
)
concurrency = c1.number_input(
    "Concurrency (model calls in flight; 1 = one case after another)", 1, 64, key="concurrency"
)
samples = c2.number_input(
    "Judge samples per case (recommended 3; more than 1 marks split verdicts as uncertain)",
    1,
    9,
    key="judge_samples",
)
aa = c1.checkbox(
    "A/A noise floor: replay the original once more per case and judge it against itself",
    key="aa",
    help="A case whose replay is not judged equivalent is noisy: a regression there is "
    "flagged 'within noise'. The run reports the A/A false-regression rate.",
)
mode_kind = st.radio(
    "Runner mode", list(MODE_LABELS), format_func=MODE_LABELS.get, key="runner_mode", horizontal=True
)
if mode_kind == "command":
    r1, r2 = st.columns([3, 1])
    r1.text_input(
        "Runner command (stdin: the runner prompt; env: ABEQ_DOCUMENT, ABEQ_VARIANT, ABEQ_CASE_ID)",
        key="runner_cmd",
        placeholder="claude -p --output-format json --permission-mode acceptEdits",
    )
    r2.text_input("Command version (cache key)", key="runner_cmd_version", placeholder="claude 2.1")
    st.caption(COMMAND_NOTE)
fail_fast = c2.checkbox(
    "Fail fast: stop starting cases once one is judged regressed",
    key="fail_fast",
    help="The gate has failed by then. The cases not started are listed as not run; Start again with "
    "this unticked to run them (finished cases come from the cache).",
)
for k in STICKY:
    st.session_state[f"keep:{k}"] = st.session_state[k]
mode = RunnerMode(
    kind=mode_kind,
    command=st.session_state["runner_cmd"] if mode_kind == "command" else "",
    command_version=st.session_state["runner_cmd_version"] if mode_kind == "command" else "",
)
cfg = RunConfig(
    runner=session.model_spec(runner, api_base),
    judge=session.model_spec(judge, api_base),
    variant=variant,
    concurrency=int(concurrency),
    judge_samples=int(samples),
    aa=bool(aa),
    allow_thin=ts.thin_accepted,
    review=review["name"],
    mode=mode,
    fail_fast=bool(fail_fast),
)
original_doc = Document(original["name"], original["content"])
candidate_doc = Document(candidate["name"], candidate["content"])
unconfirmed_why = confirmation_problem(ts, original["hash"])
if not unconfirmed_why:
    # The same estimate the CLI prints: the cache is consulted for the teacher's transcripts.
    est = estimate_run(store, original_doc, candidate_doc, ts, cfg)
    cost = est["est_cost"]
    st.caption(
        f"This run: at most {est['runner_calls'] + est['judge_calls'] + est['grading_calls']} model calls "
        f"({est['runner_calls']} runner, {est['judge_calls']} judge{', A/A replays included' if aa else ''}"
        + (f", {est['grading_calls']} check grading" if est["grading_calls"] else "")
        + f"; {est['teacher_cached']} of the original's {len(ts.cases)} transcripts come from the cache), "
        f"~{est['est_prompt_tokens'] + est['est_completion_tokens']:,} tokens (est.), "
        + ("price unknown for this model" if cost is None else f"~${cost:.4f}")
        + (
            f"; the provider's prompt cache could serve up to {est['est_cache_read_tokens']:,} of the "
            "prompt tokens"
            + (f" (saving up to ~${est['est_cache_saved']:.4f})" if est["est_cache_saved"] else "")
            if est["est_cache_read_tokens"]
            else ""
        )
        + "."
    )
    if ceiling := tools_ceiling_text(est):
        st.caption(ceiling[0].upper() + ceiling[1:] + ".")
else:
    graded = sum(1 for c in ts.cases if model_checks(c))
    est = estimate_calls(len(ts.cases), 1, int(samples), bool(aa), graded)
    st.caption(
        f"At most {est['total']} model calls ({est['runner_calls']} runner, {est['judge_calls']} judge"
        f"{', A/A replays included' if aa else ''}"
        + (f", {est['grading_calls']} check grading" if graded else "")
        + "); the original's cached transcripts are reused, "
        "so later rounds make fewer."
    )

thin = not unconfirmed_why and not transferset_coverage(original["content"], ts).runnable
if thin:
    st.error(
        "This set is thin (fewer than 5 cases, or a case type missing), so a run would be refused. On "
        "**Transfer set**, add cases, or tick **Accept a thin set** and press **Confirm** (the report "
        "records it).",
        icon=":material/block:",
    )
if unconfirmed_why:
    st.error(
        md(f"{unconfirmed_why[0].upper()}{unconfirmed_why[1:]}") + ", so this run is refused: no runner call "
        "happens before a person accepts the cases. Read them on **Transfer set** and press **Confirm**.",
        icon=":material/block:",
    )
if st.button("Start run", type="primary", key="start", disabled=bool(unconfirmed_why) or thin):
    # every check before a model call (model strings included) is the library's: a refusal means no run exists
    try:
        st.session_state[f"run:{review['id']}"] = worker.start(
            db_path(), original_doc, candidate_doc, ts, cfg
        )
    except AbeqError as e:
        st.error(md(e.render()), icon=":material/block:")

run_key = f"run:{review['id']}"
run_id = st.session_state.get(run_key) or (store.latest_run(review["id"]) or {}).get("id")


def progress_panel(run_id: int, ticking: bool) -> None:
    db = session.open_store()
    p = queries.progress(db, run_id)
    if ticking and not p.active:
        st.rerun()  # ended: redraw the page once, without the timer
    label = runs.status_text(p.status, p.cancel_requested or worker.cancelling(run_id))
    st.progress(p.fraction, text=f"Run {run_id}: {p.done}/{p.total} cases · {label}")
    st.caption(md(runs.settings_text(db.run(run_id))))  # the run's own models, whatever the form says
    m = st.columns(5)
    m[0].metric("Cases done", f"{p.done}/{p.total}", help="judged or errored")
    m[1].metric("Runner calls", f"{p.runner_done}/{p.runner_needed}", help=CALLS_HELP)
    m[2].metric("Judge calls", f"{p.judge_done}/{p.judge_needed}", help=CALLS_HELP)
    m[3].metric("Cache hits", p.cache_hits)
    m[4].metric(
        "Errors",
        p.errors,
        f"{p.failed_calls} call(s) failed" if p.failed_calls else None,
        delta_color="off",
        delta_arrow="off",
        help="Cases that errored (a case without a verdict fails the gate); calls that failed after "
        "their retries.",
    )
    m = st.columns(5)
    m[0].metric("Elapsed", f"{p.elapsed:.0f} s")
    m[1].metric(
        "Time left (est.)",
        f"~{p.eta:.0f} s" if p.eta is not None else "—",
        help="The calls still to resolve, at this run's pace so far (cache hits still to come make it "
        "shorter).",
    )
    m[2].metric("Tokens", f"{p.tokens:,}")
    m[3].metric(
        "Cost",
        "unknown" if p.unpriced and not p.cost else f"${p.cost:.4f}",
        f"+{p.unpriced} unpriced call(s)" if p.unpriced else None,
        delta_color="off",
        delta_arrow="off",
        help="Calls litellm has no price for are counted, never shown as $0.",
    )
    if p.cache_read_tokens or p.cache_write_tokens:
        st.caption(
            f"Provider prompt cache: {p.cache_read_tokens:,} prompt tokens read from it, "
            f"{p.cache_write_tokens:,} written"
            + ("" if p.unpriced else f"; it saved ${p.cache_saved:.4f}")
            + "."
        )
    if notice := worker.notice(run_id):
        st.warning(md(notice), icon=":material/speed:")
    if p.stopped_after:
        st.info(
            f"Stopped early (fail fast): case {md(p.stopped_after)} was judged regressed, so no new case "
            "started. Untick **Fail fast** and press **Start run** to run the rest.",
            icon=":material/skip_next:",
        )
    if p.active and label == "running":
        m[4].button(
            "Cancel run",
            key="cancel",
            on_click=worker.cancel,
            args=(run_id, db_path()),
            help=CANCEL_HELP,
        )
        if p.runner_done + p.judge_done == 0:
            st.caption(
                "Starting: the first call of a fresh desk loads the model library and the model (about 10 s)."
            )
    elif p.active:
        st.caption(f"Cancelling: {CANCEL_HELP}")
    elif err := worker.error(run_id):
        st.error(md(f"The run stopped: {err}"))
    elif p.status in ("finished", "stopped"):
        st.page_link(
            "desk_pages/4_review.py",
            label="Read the verdicts on Review",
            icon=":material/rate_review:",
            query_params=links.review_params(review["name"], run_id),
        )
    else:
        st.caption(
            f"{p.done} of {p.total} cases finished and are kept; **Resume** below continues the run with "
            "its own settings, making only the calls it has not made."
        )


if run_id:
    st.subheader("Progress")
    ticking = queries.progress(store, run_id).active
    st.fragment(progress_panel, run_every=1.0 if ticking else None)(run_id, ticking)


def open_runs_panel(review_id: int) -> None:
    open_runs = runs.unfinished(session.open_store(), review_id)
    if not open_runs:
        return
    st.subheader("Runs not finished")
    st.caption(
        "Every run of this review that is running or stopped before its end, in this desk or in another "
        "process (`abeq run`). **Resume** uses the run's own settings, shown here; nothing it finished is "
        "asked again."
    )
    for r in open_runs:
        with st.container(border=True):
            c1, c2 = st.columns([5, 1], vertical_alignment="center")
            c1.markdown(
                f"**Run {r['id']}** · round {r['round']} · candidate {md(r['candidate'])} · "
                f"**{md(r['label'])}** · {r['counts']['done']} of {r['counts']['total']} cases done · "
                f"started {md(r['started_at'])}"
            )
            c1.caption(md(r["settings_text"]))
            if r["status"] in ("running", "cancelling"):
                c2.button(
                    "Cancel",
                    key=f"cancel_{r['id']}",
                    on_click=worker.cancel,
                    args=(r["id"], db_path()),
                    disabled=r["label"] != "running",
                    help=CANCEL_HELP,
                )
            elif r["resume_problem"]:
                c1.caption(md(f"Cannot resume: {r['resume_problem']}."))
            elif c2.button(f"Resume run {r['id']}", key=f"resume_{r['id']}"):
                try:
                    st.session_state[run_key] = worker.resume(db_path(), r["id"])
                    st.rerun()  # the whole page: its progress panel follows the resumed run
                except AbeqError as e:
                    st.error(md(e.render()), icon=":material/block:")


# runs of other processes change too: keep the list fresh while any of them runs
active = any(r["status"] in ("running", "cancelling") for r in store.runs(review["id"]))
st.fragment(open_runs_panel, run_every=2.0 if active else None)(review["id"])
