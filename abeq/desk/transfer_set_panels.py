"""The Transfer set page's parts that draw: the import/export expander, the case table, the case
detail, the coverage and the section mapping. What they show is computed in `transfer_set_vm`."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ..errors import AbeqError
from ..schemas import CASE_TYPES
from ..sets.coverage_report import CoverageReport
from . import editor, policy, session
from . import transfer_set_vm as vm
from .case_view import case_detail
from .metric import draw
from .render import error_md, md

CASE_COLUMNS = {
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
}


def import_export(store, review: dict, original: dict, ts) -> None:
    """Import a set (abeq's own, promptfoo configs and tests files, skill-creator evals, other tools'
    datasets: as `abeq import-set` reads them), replacing the table; export the set as JSON."""
    src = st.radio("From", ["Upload", "Path"], horizontal=True, key="set_source")
    fmt = st.selectbox(
        "Format",
        list(editor.IMPORT_FORMATS),
        format_func=lambda f: editor.IMPORT_FORMATS[f],
        key="set_format",
    ) or next(iter(editor.IMPORT_FORMATS))  # the first, as the widget starts
    c1, c2 = st.columns(2)
    default_type = c1.selectbox(
        "Type for cases without one",
        CASE_TYPES,
        index=None,
        placeholder="none: name the cases that lack one",
        key="set_default_type",
        help="promptfoo tests, skill-creator evals and other tools' datasets have no case type. The cases "
        "given this one are marked user-modified: check each in the table before confirming.",
    )
    trigger = c2.checkbox(
        "Trigger eval: import its should-trigger queries",
        key="set_trigger",
        help="A skill-creator trigger eval tests whether a skill is loaded, not what it makes a model do.",
    )
    chosen: str | None = None
    files: dict[str, bytes] = {}
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
        chosen = (
            st.text_input(
                "Path on this machine",
                key="set_path",
                help="A file here, or git:REV:PATH for one at a revision of the repository the desk runs in "
                "(PATH from its root; what travels with it is read at that revision too).",
            ).strip()
            or None
        )
    if chosen and st.button("Import (replaces the table)", key="set_import"):
        try:
            if src == "Upload":
                got = editor.import_uploads(
                    files, chosen, fmt, original["hash"], default_type=default_type, trigger_queries=trigger
                )
            else:  # a signed-in reviewer reads only under the project the desk was started in
                policy.current(st.session_state.get(session.SIGNED_IN_KEY)).check_path(chosen)
                got = editor.import_path(
                    chosen, fmt, original["hash"], default_type=default_type, trigger_queries=trigger
                )
            vm.follow_stored(review, st.session_state, session.set_transfer_set(store, review, got.ts))
            st.session_state["set_import_notes"] = (chosen, got.read_as, len(got.ts.cases), got.warnings)
            st.rerun()
        except AbeqError as e:
            st.error(error_md(e))
    if notes := st.session_state.pop("set_import_notes", None):  # once, after the import
        done, warnings = vm.import_notes(*notes)
        st.success(done)
        for w in warnings:
            st.warning(w)
    if ts.cases:
        st.download_button(
            "Export JSON",
            vm.export_json(ts, original["content"]),
            file_name="transfer-set.json",
            mime="application/json",
        )


def case_table(s: vm.SetState) -> pd.DataFrame:
    """The cases as an editable table; returns the table as edited."""
    return st.data_editor(
        editor.to_frame(s.ts),
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        key=f"ts_editor_{s.ts_hash}",
        column_order=list(CASE_COLUMNS),
        column_config=CASE_COLUMNS,
    )


def case_reader(e: vm.Edits, sections: list[str]) -> None:
    shown, edited = e.shown, e.edited_fields()
    with st.expander("Case detail: read a whole case", expanded=False):
        pick = st.selectbox("Case", [c.id for c in shown.cases], key="ts_detail_case")
        assert pick is not None  # the page shows this only for a set with cases
        case_detail(st, next(c for c in shown.cases if c.id == pick), sections, edited.get(pick))


def coverage(cov: CoverageReport) -> None:
    st.subheader("Coverage")
    draw(st.columns(1 + len(CASE_TYPES)), vm.coverage_metrics(cov))
    st.caption(md("How sections were found: " + cov.how))
    for w in cov.warnings:
        st.warning(md(w))
    if said := vm.uncovered_text(cov):
        st.markdown(said)
    if not cov.runnable:
        st.error(vm.THIN)


def section_mapping(store, review: dict, original: dict, s: vm.SetState, cov: CoverageReport) -> None:
    """Pick, for each case, the sections it exercises (a suggestion beside each, never applied)."""
    with st.expander("Map cases to sections", expanded=not cov.sections_named):
        st.caption(
            "Pick, for each case, the sections of the original it exercises. “suggested” lists the "
            "sections whose words the input shares most: a hint, never applied by itself."
        )
        mapped = st.data_editor(
            editor.mapping_frame(s.ts, original["content"]),
            hide_index=True,
            width="stretch",
            key=f"map_editor_{s.ts_hash}",
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
        if st.button("Save the mapping", key="save_mapping", disabled=s.locked):
            saved = session.set_transfer_set(store, review, editor.apply_mapping(s.ts, mapped))
            vm.follow_stored(review, st.session_state, saved)
            st.rerun()
        if s.locked:
            st.caption("This review has runs, so its cases are fixed: map them in a new review.")
