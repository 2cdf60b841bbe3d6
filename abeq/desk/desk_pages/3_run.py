"""Run: pick the models and start a background run; live progress counted in calls; cancel; every
unfinished run of the review, with its settings, to cancel or resume. On a desk people sign in to,
only what its operator allowed is offered (abeq.desk.policy)."""

from __future__ import annotations

import streamlit as st

from abeq.desk import policy as desk_policy
from abeq.desk import run_vm, session, worker
from abeq.desk.queries import progress
from abeq.desk.render import md
from abeq.desk.run_panels import judge_warning, open_runs_panel, progress_panel, settings_form
from abeq.errors import AbeqError
from abeq.results.store.store import db_path
from abeq.vocab import CANCELLING, RUNNING

store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("Run")
original = store.inputs.document(review["original_hash"]) if review["original_hash"] else None
candidate = session.current_candidate(store, review, st.session_state)
ts = store.inputs.transfer_set(review["transfer_set_hash"]) if review["transfer_set_hash"] else None
if not (original and candidate and ts):
    st.warning("This review needs an original and a candidate (Documents) and a transfer set (Transfer set).")
    st.stop()
note = st.empty()  # a slot of its own: the note comes and goes without moving the elements below it
st.caption(md(f"Original {original['name']} → candidate {candidate['name']} · {len(ts.cases)} cases"))

who = st.session_state.get(session.SIGNED_IN_KEY)  # set by the router, from the sign-in itself
policy = desk_policy.current(who)
if said := run_vm.policy_text(policy):
    st.info(said, icon=":material/policy:")
run_vm.restore_settings(st.session_state, policy)
settings_form(original["name"], policy)
run_vm.keep_settings(st.session_state)
if session.tiny_model_chosen(st.session_state):  # once, and only while the tiny model is chosen
    note.info(session.EMBEDDED_NOTE, icon=":material/info:")
settings = run_vm.desk_settings(st.session_state, ts, review["name"])
# the same estimate the CLI prints: the cache is consulted for the teacher's transcripts
for line in run_vm.estimate_lines(store, original, candidate, ts, settings):
    st.caption(line)
# the box below is in `settings` (trust_code)
gate = run_vm.start_gate(run_vm.stored_document(store, original), ts, settings, store)
judge_warning(gate)
if gate.code:  # the set's own scripts: they run on this machine only when a person says so
    with st.container(border=True):
        st.markdown(f"**This set's checks run code on this machine** ({len(gate.code)} script(s))")
        for line in run_vm.code_lines(gate.code):
            st.caption(line)
        if gate.code_trusted and not st.session_state.get(run_vm.TRUST_KEY):
            st.caption("Trusted: you trusted exactly this code when you confirmed the set.")
        elif policy.allows_trust():
            st.checkbox(
                "Run the set's code in this run (with a reduced environment and limits)",
                key=run_vm.TRUST_KEY,
                help="Read each script first: a set from someone else can run anything you can.",
            )
for why in gate.errors(policy.allows_trust()):
    st.error(why, icon=":material/block:")
run_key = f"run:{review['id']}"
if st.button("Start run", type="primary", key="start", disabled=gate.refused):
    # every check before a model call (model strings included) is the library's: a refusal means no run exists
    try:
        st.session_state[run_key] = worker.start(
            db_path(), *run_vm.documents(store, original, candidate), ts, settings, who=who
        )
    except AbeqError as e:
        st.error(md(e.render()), icon=":material/block:")
    else:
        st.rerun()  # the whole page, the line at its top included, about the run just started

# the run this desk started, unless a newer one of the review began since (another desk, a terminal):
# a finished run of this session is not shown while a newer one runs
run_id = run_vm.shown_run(st.session_state.get(run_key), store.log.latest_run(review["id"]))
if run_id:
    st.subheader("Progress")
    # this desk's own run thread alive: running, even if its heartbeat is late (a loaded machine)
    ticking = progress(store, run_id).active or worker.alive(run_id)
    st.fragment(progress_panel, run_every=1.0 if ticking else None)(run_id, ticking, review["name"])

# runs of other processes change too: keep the list fresh while any of them runs
active = any(r["status"] in (RUNNING, CANCELLING) for r in store.log.runs(review["id"]))
st.fragment(open_runs_panel, run_every=2.0 if active else None)(review["id"], run_key, who)
