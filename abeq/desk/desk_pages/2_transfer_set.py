"""Transfer set: edit the cases, import/export, read the coverage, and Confirm (the run gate)."""

from __future__ import annotations

import streamlit as st

from abeq import sets
from abeq.desk import mutation_panels, session
from abeq.desk import policy as desk_policy
from abeq.desk import transfer_set_panels as panels
from abeq.desk import transfer_set_vm as vm
from abeq.desk.render import error_md
from abeq.documents.sections import sections as doc_sections
from abeq.errors import AbeqError

store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("Transfer set")
original = store.inputs.document(review["original_hash"]) if review["original_hash"] else None
if original is None:
    st.warning("Load the original on Documents first: coverage is measured against it.")
    st.stop()
s, changed_elsewhere = vm.editing_state(store, review, original, st.session_state)

with st.expander("Import / export a file", expanded=not s.ts.cases):
    panels.import_export(store, review, original, s.ts)
for kind, said in vm.status(s):
    getattr(st, kind)(said, icon=":material/lock:" if kind == "success" else None)

titles = doc_sections(original["content"])
e = vm.edits(s, panels.case_table(s), titles)
if e.problem_shown:
    st.error(error_md(e.problem), icon=":material/block:")
    st.caption("Nothing in the table is saved until this is fixed.")
if said := e.unsaved_text():
    st.warning(said, icon=":material/edit_note:")
if e.shown.cases:
    panels.case_reader(e, titles)

allow_thin = st.checkbox(
    "Accept a thin set (fewer than 5 cases or a case type missing); the report records it",
    value=s.ts.thin_accepted,
    disabled=e.thin_box_disabled,
)
code = vm.code_said(e.shown)
# a signed-in reviewer is offered the set's code only when the desk's operator allowed it
offered = desk_policy.current(st.session_state.get(session.SIGNED_IN_KEY)).allows_trust()
trust_code = (
    bool(code)
    and offered
    and st.checkbox(
        f"Trust its code too: {code}",
        key="confirm_trust_code",
        help="Runs of exactly this code then need no further say-so (abeq check-set --confirm --trust-code). "
        "Read each script first (listed under Checks below): it runs on this machine.",
    )
)
over_theirs = False
if changed_elsewhere:
    st.warning(vm.CHANGED_ELSEWHERE, icon=":material/sync_problem:")
    if st.button("Reload the saved set (drops your edits)", key="ts_reload"):
        vm.follow_stored(review, st.session_state, review["transfer_set_hash"])
        st.rerun()
    over_theirs = st.checkbox("Save my edits over the other change", key="ts_over_theirs")
buttons = st.container(horizontal=True)
if buttons.button("Save edits", disabled=e.save_disabled or (changed_elsewhere and not over_theirs)):
    vm.follow_stored(review, st.session_state, session.set_transfer_set(store, review, e.to_save()))
    st.rerun()
if buttons.button(
    "Confirm",
    type="primary",
    disabled=e.confirm_disabled,
    key="confirm",
    help="Freeze and hash this set; runs use exactly this version.",
):
    try:
        if changed_elsewhere and not over_theirs:
            raise AbeqError(
                "the set was saved elsewhere since you loaded it", hint="Reload it, or tick the box above."
            )
        by = session.confirmer(st.session_state)  # the signed-in person, else git's user.name, else unknown
        signed_in = st.session_state.get(session.SIGNED_IN_KEY)  # the desk's policy is about them
        confirmed = e.to_confirm(original, allow_thin, trust_code, by, signed_in)
        saved = session.set_transfer_set(store, review, confirmed, by)
        vm.follow_stored(review, st.session_state, saved)
        st.rerun()
    except AbeqError as err:
        st.error(error_md(err))
if e.dirty and s.locked:
    st.warning(vm.LOCKED_EDITS)

cov = sets.coverage(original["content"], e.shown, allow_thin=allow_thin)
panels.coverage(cov)
if s.ts.cases and cov.sections_identified:
    panels.section_mapping(store, review, original, s, cov)

checks = vm.checks_said(e.shown)
if checks.caption:
    st.caption(checks.caption)
for w in checks.warnings:
    st.warning(w)
for p in checks.errors:
    st.error(p)

if s.ts.cases:  # would this (saved) set notice a loss? A mutation test with the Run page's models
    mutation_panels.mutation(store, original, s.ts, st.session_state)
