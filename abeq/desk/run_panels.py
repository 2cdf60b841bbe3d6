"""The Run page's parts that draw: the settings form, the progress panel and the unfinished runs.
What they show is computed in `run_vm`; these only lay it out."""

from __future__ import annotations

import streamlit as st

from ..errors import AbeqError
from ..execution.options import BY_NAME
from ..results.store.store import db_path
from ..vocab import CANCELLING, FINISHED, RUNNING, STOPPED_EARLY, VARIANTS
from . import links, queries, runs, session, worker
from .metric import draw
from .observed import COMMAND_NOTE, MODE_LABELS
from .policy import OPEN, Policy
from .render import md
from .run_vm import (
    CANCEL_HELP,
    MIN_RECALL_LABEL,
    Gate,
    model_choices,
    open_run_line,
    progress_metrics,
    prompt_cache_text,
    runner_modes,
    variant_index,
)


def _cancel(run_id: int, db: str | None) -> None:
    worker.cancel(run_id, db)  # a button's callback returns nothing: whether a run was asked is not shown


def settings_form(original_name: str, policy: Policy = OPEN) -> None:
    """The run's models and settings; each widget's value is in session state under its key. Only
    what the desk's policy allows is offered (Start checks it again: worker.start)."""
    c1, c2 = st.columns(2)
    if listed := model_choices(policy):
        c1.selectbox("Runner model (as this desk allows)", listed, key="runner_model")
        c2.selectbox("Judge model", listed, key="judge_model")
    else:
        c1.text_input("Runner model (any litellm model string)", key="runner_model")
        c2.text_input("Judge model", key="judge_model")
    bases = policy.api_bases()
    if bases is None:
        c1.text_input(
            "API base (Ollama, vLLM, any OpenAI-compatible server; blank for hosted APIs)", key="api_base"
        )
    elif bases:
        c1.selectbox(
            "API base (the servers this desk allows; blank for hosted APIs)",
            ["", *bases],
            format_func=lambda u: u or "(none: hosted APIs)",
            key="api_base",
        )
    c2.selectbox(
        "Variant",
        list(VARIANTS),
        index=variant_index(original_name),
        key="variant",
        help="Detected from the original's file name (CLAUDE.md, AGENTS.md, … are instruction files).",
    )
    c1.number_input(
        "Concurrency (model calls in flight; 1 = one case after another)", 1, 64, key="concurrency"
    )
    c2.number_input(
        "Judge samples per case (recommended 3; more than 1 marks split verdicts as uncertain)",
        1,
        9,
        key="judge_samples",
    )
    c2.number_input(
        "Runner samples per case (N runs of each arm; a loss is called only beyond chance)",
        1,
        50,
        key="runner_samples",
        help=BY_NAME["runner_samples"].help,
    )
    c1.checkbox(
        "A/A noise floor: replay the original once more per case and judge it against itself",
        key="aa",
        help="A case whose replay is not judged equivalent is noisy: a regression there is "
        "flagged 'within noise'. The run reports the A/A false-regression rate.",
    )
    c1.number_input(
        f"{MIN_RECALL_LABEL} (warn before a run whose judge catches fewer regressions, or calls more "
        "than 1 minus this of unchanged pairs regressed; 0 = off)",
        0.0,
        1.0,
        step=0.05,
        key="min_judge_recall",
        help="As `abeq run --min-judge-recall`: the judge, as `abeq calibrate` measured it, must catch at "
        "least this share of regressions and call at most 1 minus it of the pairs that lost nothing "
        "regressed; otherwise, or when never measured, the page warns before you start.",
    )
    c1.checkbox(
        "Refuse a judge below the minimum",
        key="require_judge_recall",
        help="As `abeq run --require-judge-recall`: Start is refused, rather than warned of, while the "
        "judge fails the minimum judge recall or was never calibrated.",
    )
    kind = st.radio(
        "Runner mode", runner_modes(policy), format_func=MODE_LABELS.get, key="runner_mode", horizontal=True
    )
    if kind == "command":
        r1, r2 = st.columns([3, 1])
        r1.text_input(
            "Runner command (stdin: the runner prompt; env: ABEQ_DOCUMENT, ABEQ_VARIANT, ABEQ_CASE_ID)",
            key="runner_cmd",
            placeholder="claude -p --output-format json --permission-mode acceptEdits",
        )
        r2.text_input("Command version (cache key)", key="runner_cmd_version", placeholder="claude 2.1")
        st.caption(COMMAND_NOTE)
    c2.checkbox(
        "Fail fast: stop starting cases once one is judged regressed",
        key="fail_fast",
        help="The gate has failed by then. The cases not started are listed as not run; Start again with "
        "this unticked to run them (finished cases come from the cache).",
    )


def judge_warning(gate: Gate) -> None:
    """The warning `abeq run --min-judge-recall` prints, before the run starts (a refusal, when
    asked for, is among the gate's errors)."""
    if gate.judge and not gate.judge_refused:
        st.warning(md(gate.judge), icon=":material/gavel:")


def progress_panel(run_id: int, ticking: bool, review_name: str) -> None:
    """A run's live progress (a fragment: it redraws itself while the run is active)."""
    db = session.open_store()
    p = queries.progress(db, run_id)
    if ticking and not p.active and not worker.alive(run_id):
        st.rerun()  # ended: redraw the page once, without the timer
    label = runs.status_text(p.status, p.cancel_requested or worker.cancelling(run_id))
    st.progress(p.fraction, text=f"Run {run_id}: {p.done}/{p.total} cases · {label}")
    st.caption(
        md(runs.settings_text(db.log.run(run_id) or {}))
    )  # the run's own models, whatever the form says
    first, second = progress_metrics(p)
    draw(st.columns(5), first)
    m = st.columns(5)
    draw(m, second)
    if said := prompt_cache_text(p):
        st.caption(said)
    if notice := worker.notice(run_id):
        st.warning(md(notice), icon=":material/speed:")
    if p.stopped_after:
        st.info(
            f"Stopped early (fail fast): case {md(p.stopped_after)} was judged regressed, so no new case "
            "started. Untick **Fail fast** and press **Start run** to run the rest.",
            icon=":material/skip_next:",
        )
    if p.active and label == RUNNING:
        m[4].button("Cancel run", key="cancel", on_click=_cancel, args=(run_id, db_path()), help=CANCEL_HELP)
        if p.runner_done + p.judge_done == 0:
            st.caption(
                "Starting: the first call of a fresh desk loads the model library and the model (about 10 s)."
            )
    elif p.active:
        st.caption(f"Cancelling: {CANCEL_HELP}")
    elif err := worker.error(run_id):
        st.error(md(f"The run stopped: {err}"))
    elif p.status in (FINISHED, STOPPED_EARLY):
        st.page_link(
            links.REVIEW_PAGE,
            label="Read the verdicts on Review",
            icon=":material/rate_review:",
            query_params=links.review_params(review_name, run_id),
        )
    else:
        st.caption(
            f"{p.done} of {p.total} cases finished and are kept; **Resume run {run_id}** below continues "
            "it with its own settings, making only the calls it has not made."
        )


def open_runs_panel(review_id: int, run_key: str, who: str | None = None) -> None:
    """Every unfinished run of the review, to cancel or resume (a fragment, fresh while one runs)."""
    open_runs = runs.unfinished(session.open_store(), review_id)
    if not open_runs:
        return
    st.subheader("Runs not finished")
    st.caption(
        "Every run of this review that is running or stopped before its end, in this desk or in another "
        "process (`abeq run`). **Resume run N** uses the run's own settings, shown here; nothing it "
        "finished is asked again."
    )
    for r in open_runs:
        with st.container(border=True):
            c1, c2 = st.columns([5, 1], vertical_alignment="center")
            c1.markdown(open_run_line(r))
            c1.caption(md(r["settings_text"]))
            if r["status"] in (RUNNING, CANCELLING):
                c2.button(
                    "Cancel",
                    key=f"cancel_{r['id']}",
                    on_click=_cancel,
                    args=(r["id"], db_path()),
                    disabled=r["label"] != RUNNING,
                    help=CANCEL_HELP,
                )
            elif r["resume_problem"]:
                c1.caption(md(f"Cannot resume: {r['resume_problem']}."))
            else:
                confirmed = True
                if r["command"]:  # a database may carry any command: it runs only once confirmed here
                    c1.code(r["command"], language="bash")
                    confirmed = c1.checkbox(
                        "I read this command: run it on this machine",
                        key=f"trust_cmd_{r['id']}",
                        help="The command stored with the run runs as you, in a copy of each case's "
                        "workspace. A database from someone else can carry any command.",
                    )
                if c2.button(f"Resume run {r['id']}", key=f"resume_{r['id']}", disabled=not confirmed):
                    _resume(r["id"], run_key, trust_stored_command=bool(r["command"]) and confirmed, who=who)


def _resume(run_id: int, run_key: str, *, trust_stored_command: bool, who: str | None) -> None:
    try:
        st.session_state[run_key] = worker.resume(
            db_path(), run_id, trust_stored_command=trust_stored_command, who=who
        )
        st.rerun()  # the whole page: its progress panel follows the resumed run
    except AbeqError as e:
        st.error(md(e.render()), icon=":material/block:")
