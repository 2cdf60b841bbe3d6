"""Transfer set: edit the cases, import/export, read the coverage, and Confirm (the run gate)."""

from __future__ import annotations

import streamlit as st

from abeq import sets as transferset
from abeq.desk import editor, session
from abeq.desk.case_view import case_detail
from abeq.desk.render import error_md, md
from abeq.documents import sections as doc_sections
from abeq.errors import AbeqError
from abeq.execution import check_audit
from abeq.schemas import CASE_TYPES, TransferSet
from abeq.timestamps import local

store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("Transfer set")
original = store.document(review["original_hash"]) if review["original_hash"] else None
if original is None:
    st.warning("Load the original on Documents first: coverage is measured against it.")
    st.stop()
ts_hash = review["transfer_set_hash"]
ts = (store.transfer_set(ts_hash) if ts_hash else None) or TransferSet(cases=[])
unconfirmed_why = transferset.confirmation_problem(ts, original["hash"])
confirmed = not unconfirmed_why

with st.expander("Import / export a file", expanded=not ts.cases):
    # abeq's own sets, promptfoo configs and tests files, skill-creator evals: as `abeq import-set` reads them
    src = st.radio("From", ["Upload", "Path"], horizontal=True, key="set_source")
    fmt = st.selectbox(
        "Format", list(editor.IMPORT_FORMATS), format_func=editor.IMPORT_FORMATS.get, key="set_format"
    )
    c1, c2 = st.columns(2)
    default_type = c1.selectbox(
        "Type for cases without one",
        CASE_TYPES,
        index=None,
        placeholder="none: name the cases that lack one",
        key="set_default_type",
        help="promptfoo tests and skill-creator evals have no case type. The cases given this one are "
        "marked user-modified: check each in the table before confirming.",
    )
    trigger = c2.checkbox(
        "Trigger eval: import its should-trigger queries",
        key="set_trigger",
        help="A skill-creator trigger eval tests whether a skill is loaded, not what it makes a model do.",
    )
    chosen = None
    if src == "Upload":
        ups = st.file_uploader(
            "A set, with any files it names (select them together)",
            type=["json", "yaml", "yml", "csv", "jsonl", "txt"],
            accept_multiple_files=True,
            key="set_upload",
        )
        files = {u.name: u.getvalue() for u in ups or []}
        if files:  # the set first: a config or an evals file, before the files it names
            names = sorted(files, key=lambda n: not n.lower().startswith(("promptfooconfig", "evals")))
            chosen = st.selectbox("File to import", names, key="set_main") if len(names) > 1 else names[0]
    else:
        path = st.text_input("Path on this machine", key="set_path").strip()
        chosen = path or None
    if chosen and st.button("Import (replaces the table)", key="set_import"):
        kw = dict(default_type=default_type, trigger_queries=trigger)
        try:
            if src == "Upload":
                got = editor.import_uploads(files, chosen, fmt, original["hash"], **kw)
            else:
                got = editor.import_path(chosen, fmt, original["hash"], **kw)
            session.set_transfer_set(store, review, got.ts)
            st.session_state["set_import_notes"] = (chosen, got.read_as, len(got.ts.cases), got.warnings)
            st.rerun()
        except AbeqError as e:
            st.error(error_md(e))
    if notes := st.session_state.pop("set_import_notes", None):  # once, after the import
        name, read_as, n, warnings = notes
        st.success(md(f"Imported {n} cases from {name} (read as {read_as})."))
        for w in warnings:
            st.warning(md(w))
    if ts.cases:
        # with the coverage this page shows (the stored set keeps the cases; coverage is measured on the
        # original)
        exported = ts.model_copy(
            update={"coverage": transferset.coverage(original["content"], ts).as_coverage()}
        )
        st.download_button(
            "Export JSON", transferset.dump(exported), file_name="transfer-set.json", mime="application/json"
        )

has_runs = bool(ts_hash and store.runs(review["id"]))
if confirmed:
    st.success(
        md(f"Confirmed {local(ts.confirmation_timestamp)} · set {transferset.set_hash(ts)[:12]}"),
        icon=":material/lock:",
    )
    st.info(
        "This review has runs, so its cases are fixed (its rounds must run the same set); to run changed "
        "cases, "
        "create a new review."
        if has_runs
        else "Editing makes a new unconfirmed version: runs are refused until you confirm it again."
    )
elif ts.user_confirmed:
    st.warning(
        md(
            f"Not confirmed for this original: {unconfirmed_why.removeprefix('the transfer set ')}. "
            "Read the cases against it and press Confirm."
        )
    )
else:
    st.warning("Not confirmed: no runner call happens until you read these cases and press Confirm.")

edited = st.data_editor(
    editor.to_frame(ts),
    num_rows="dynamic",
    hide_index=True,
    width="stretch",
    key=f"ts_editor_{ts_hash}",
    column_order=[
        "id",
        "type",
        "status",
        "input",
        "exercises_sections",
        "gate_responses",
        "assertions",
        "expectations",
    ],
    column_config={
        "id": st.column_config.TextColumn("id", width=120),
        "type": st.column_config.SelectboxColumn("type", options=list(CASE_TYPES), width=105),
        "status": st.column_config.TextColumn("status", width=105, disabled=True),
        "input": st.column_config.TextColumn("input", width="large"),
        "exercises_sections": st.column_config.TextColumn(
            "exercises_sections", width="medium", help="Section titles, comma-separated"
        ),
        "gate_responses": st.column_config.TextColumn(
            "gate_responses",
            width="medium",
            help='JSON list: [{"gate_id": "", "gate_type": "", "pattern": "…", "response": "…"}]',
        ),
        "assertions": st.column_config.TextColumn(
            "assertions",
            width="medium",
            help="Checks run on both arms, JSON list in promptfoo's names: "
            '[{"type": "contains", "value": "(#482)"}, {"type": "not-regex", "value": "[A-Z]+-[0-9]+"}, '
            '{"type": "llm-rubric", "value": "…"}]. Passed by the original and failed by the candidate '
            "= regressed.",
        ),
        "expectations": st.column_config.TextColumn(
            "expectations", width="medium", help='Natural-language checks, JSON list: ["The notes …"]'
        ),
    },
)
cases, problem = None, None
titles = doc_sections(original["content"])
try:
    cases = editor.from_frame(edited, ts, sections=titles)
except AbeqError as e:
    problem = e
dirty = cases is not None and editor.changed(ts, cases)
shown = ts.model_copy(update={"cases": cases}) if cases is not None else ts
if problem and (ts.cases or problem.message != editor.NO_CASES):
    st.error(error_md(problem), icon=":material/block:")
    st.caption("Nothing in the table is saved until this is fixed.")
unsaved = editor.unsaved(ts, cases) if dirty else {}
if any(unsaved.values()):
    st.warning(
        md(
            "Unsaved edits: "
            + "; ".join(f"{k} {', '.join(v)}" for k, v in unsaved.items() if v)
            + ". Save keeps them unconfirmed; Confirm saves and freezes them."
        ),
        icon=":material/edit_note:",
    )
if shown.cases:
    edited_fields = {e.split(": ", 1)[0]: e.split(": ", 1)[1] for e in unsaved.get("edited", [])}
    edited_fields.update({cid: "new case" for cid in unsaved.get("added", [])})
    with st.expander("Case detail: read a whole case", expanded=False):
        pick = st.selectbox("Case", [c.id for c in shown.cases], key="ts_detail_case")
        case_detail(st, next(c for c in shown.cases if c.id == pick), titles, edited_fields.get(pick))

allow_thin = st.checkbox(
    "Accept a thin set (fewer than 5 cases or a case type missing); the report records it",
    value=ts.thin_accepted,
    disabled=confirmed and not dirty,
)
# Rounds of a review run the same cases (so that they compare): once it has runs, its set is fixed.
locked = has_runs
buttons = st.container(horizontal=True)
if buttons.button("Save edits", disabled=not dirty or locked):
    session.set_transfer_set(store, review, transferset.edit(ts, cases))
    st.rerun()
if buttons.button(
    "Confirm",
    type="primary",
    disabled=cases is None or (confirmed and not dirty) or (locked and dirty),
    key="confirm",
    help="Freeze and hash this set; runs use exactly this version.",
):
    base = transferset.edit(ts, cases) if dirty else ts
    try:
        session.set_transfer_set(
            store, review, transferset.confirm(base, original["hash"], thin_accepted=allow_thin)
        )
        st.rerun()
    except AbeqError as e:
        st.error(error_md(e))
if dirty and locked:
    st.warning(
        "This review already has runs on these cases, and its rounds must run the same set, so these "
        "edits cannot be saved here. To run changed cases, create a new review (sidebar)."
    )

st.subheader("Coverage")
cov = transferset.coverage(original["content"], shown, allow_thin=allow_thin)
m = st.columns(1 + len(CASE_TYPES))
m[0].metric(
    "Sections covered",
    f"{cov.coverage_pct:.0f}%",
    f"{len(cov.sections_covered)} of {len(cov.sections_identified)}",
    delta_color="off",
    delta_arrow="off",
)
for col, t in zip(m[1:], CASE_TYPES):
    col.metric(t, cov.per_type[t])
st.caption(md("How sections were found: " + cov.how))
for w in cov.warnings:
    st.warning(md(w))
uncovered = [s for s in cov.sections_identified if s not in cov.sections_covered]
if uncovered:
    st.markdown("**Sections no case exercises:** " + "; ".join(md(s) for s in uncovered))
if not cov.runnable:
    st.error(
        "A run will be refused: this set is thin. Add cases, or tick “Accept a thin set” before confirming."
    )

if ts.cases and cov.sections_identified:
    with st.expander("Map cases to sections", expanded=not cov.sections_named):
        st.caption(
            "Pick, for each case, the sections of the original it exercises. “suggested” lists the "
            "sections whose words the input shares most: a hint, never applied by itself."
        )
        mapped = st.data_editor(
            editor.mapping_frame(ts, original["content"]),
            hide_index=True,
            width="stretch",
            key=f"map_editor_{ts_hash}",
            disabled=["id", "input", "suggested"],
            column_config={
                "id": st.column_config.TextColumn("id", width=120),
                "input": st.column_config.TextColumn("input", width="medium"),
                "suggested": st.column_config.TextColumn("suggested", width="medium"),
                "exercises_sections": st.column_config.MultiselectColumn(
                    "exercises_sections", options=cov.sections_identified, width="large"
                ),
            },
        )
        if st.button("Save the mapping", key="save_mapping", disabled=locked):
            session.set_transfer_set(store, review, editor.apply_mapping(ts, mapped))
            st.rerun()
        if locked:
            st.caption("This review has runs, so its cases are fixed: map them in a new review.")

checks = check_audit.audit(shown)
if checks.checks:
    st.caption(
        f"Checks: {checks.cases} of {len(shown.cases)} cases carry {checks.checks} ({checks.code} run in "
        f"code, {checks.model} graded by the judge model, {len(checks.skipped)} skipped). A check the "
        "original passes and the candidate fails makes the case regressed."
    )
for w in checks.warnings():
    st.warning(md(w))
for p in checks.problems:
    st.error(md(f"{p}: a run would refuse this set."))
