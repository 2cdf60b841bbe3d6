"""One document version applied to one case in the run's runner mode: what was observed.

chat → one runner call (runner.py); tools → the model acting through tools (tools_runner.py);
command → an agent CLI (agent_cmd.py). Each gives an Outcome whose value is an ObservedRun; the
runner result row stores its extras (workspace changes, tool trace, fields not reported).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..documents import Document
from ..models.ask import Outcome
from ..models.call import CallPolicy
from ..models.spec import ModelSpec
from ..schemas import Case, ObservedRun
from .modes import RunnerMode
from .runner import run_document
from .workspace import placement


async def observe(
    document: Document,
    original: Document,
    case: Case,
    variant: str,
    spec: ModelSpec,
    mode: RunnerMode,
    policy: CallPolicy,
) -> Outcome:
    """Run `document` (the original or the candidate) on `case`; placed where the original lives."""
    if mode.kind == "chat":
        out = await run_document(document.text, case, variant, spec, policy)
        out.value = ObservedRun.model_validate(out.value.model_dump())
        return out
    placed = placement(original, variant)
    if mode.kind == "tools":
        from .tools_runner import run_with_tools

        return await run_with_tools(document, case, variant, spec, mode, placed, policy)
    from .agent_cmd import run_command

    return await run_command(document, case, variant, mode, placed, policy)


def from_row(row: Mapping[str, Any]) -> ObservedRun:
    """A stored runner result as the run observed it."""
    return ObservedRun.model_validate(
        {
            "transcript": row["transcript"],
            "self_report": json.loads(row["self_report"]),
            **json.loads(row.get("observed") or "{}"),
        }
    )
