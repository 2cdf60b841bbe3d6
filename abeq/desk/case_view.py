"""A whole transfer-set case, readably: input, sections, gate answers, checks and the rest.

The table editor squeezes a case into one row of cells (gate answers as JSON text); this panel
shows what the runner will be given and what will be checked, as a reviewer reads it before
pressing Confirm. Drawing only; `st` is the streamlit module.
"""

from __future__ import annotations

import json

from ..schemas import Case
from .render import md


def case_detail(st, case: Case, sections: list[str], unsaved: str | None = None) -> None:
    """Draw one case; `unsaved` names its fields edited in the table and not yet saved."""
    with st.container(horizontal=True):
        st.markdown(f"**{md(case.id)}**")
        st.badge(case.type, color="blue")
        st.badge(case.status, color="gray")
        if unsaved:
            st.badge(f"unsaved edits: {unsaved}", color="orange", icon=":material/edit:")
    st.markdown("**Input** (what the runner is given)")
    st.code(case.input, language=None, wrap_lines=True)

    known = set(sections)
    if case.exercises_sections:
        st.markdown(
            "**Exercises:** "
            + " · ".join(
                md(s) if s in known else f"{md(s)} *(not a section of the original)*"
                for s in case.exercises_sections
            )
        )
    else:
        st.markdown("**Exercises:** no section named: this case adds nothing to coverage.")

    st.markdown(f"**Gate answers** ({len(case.gate_responses)})")
    if case.gate_responses:
        st.dataframe(
            [
                {
                    "when the runner is asked": g.pattern,
                    "it answers": g.response,
                    "gate": g.gate_type or g.gate_id,
                }
                for g in case.gate_responses
            ],
            hide_index=True,
            width="stretch",
        )
    else:
        st.caption("None: if the document makes the runner ask something, the run stops at that gate.")

    st.markdown(f"**Checks** ({len(case.assertions)})")
    if case.assertions:
        st.dataframe(
            [
                {
                    "type": a.type,
                    "value": a.value if isinstance(a.value, str) else json.dumps(a.value, ensure_ascii=False),
                    "reads": a.target,
                    "description": a.description,
                    "metric": a.metric,
                }
                for a in case.assertions
            ],
            hide_index=True,
            width="stretch",
        )
    else:
        st.caption("None: only the judge compares the two runs.")

    extra = {
        "Expectations": "\n".join(f"- {md(e)}" for e in case.expectations),
        "Rationale": md(case.rationale),
        "Workspace": md(case.workspace or ""),
        "Files": "\n".join(f"- `{md(k)}` ({len(v):,} characters)" for k, v in case.files.items()),
        "Scripted command outputs": "\n".join(
            f"- `{md(c.pattern)}` → exit {c.exit_code}, {len(c.output):,} characters"
            for c in case.command_outputs
        ),
    }
    extra = {k: v for k, v in extra.items() if v}
    if extra or case.metadata:
        with st.expander("More about this case"):
            for k, v in extra.items():
                st.markdown(f"**{k}**\n\n{v}")
            if case.metadata:
                st.markdown("**Other fields from the source file**")
                st.json(case.metadata, expanded=False)
