"""One document version applied to one case in the run's runner mode: what was observed.

chat → one runner call (runner.py); tools → the model acting through tools (tools_runner.py);
command → an agent CLI (agent_cmd.py). Each gives an Outcome whose value is an ObservedRun; the
runner result row stores its extras (workspace changes, tool trace, fields not reported).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..documents import Document
from ..models.ask import Outcome
from ..models.call import CallPolicy
from ..models.http import redactor
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
    """Run `document` (the original or the candidate) on `case`; placed where the original lives.
    What was observed is redacted before anyone stores, judges or exports it."""
    out = await _observe(document, original, case, variant, spec, mode, policy)
    out.value = ObservedRun.model_validate(_redacted(out.value.model_dump(), redactor()))
    return out


async def _observe(
    document: Document,
    original: Document,
    case: Case,
    variant: str,
    spec: ModelSpec,
    mode: RunnerMode,
    policy: CallPolicy,
) -> Outcome:
    if mode.kind == "chat":
        return await run_document(document.text, case, variant, spec, policy)
    placed = placement(original, variant)
    if mode.kind == "tools":
        from .tools_runner import run_with_tools

        return await run_with_tools(document, case, variant, spec, mode, placed, policy)
    from .agent_cmd import run_command

    return await run_command(document, case, variant, mode, placed, policy)


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """Every text in a reply redacted: a model may repeat a key it saw (in a case's files, in the
    environment a tool read), in its transcript or anywhere in its self-report."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, redact) for v in value]
    return value


def from_row(row: Mapping[str, Any]) -> ObservedRun:
    """A stored runner result as the run observed it."""
    return ObservedRun.model_validate(
        {
            "transcript": row["transcript"],
            "self_report": json.loads(row["self_report"]),
            **json.loads(row.get("observed") or "{}"),
        }
    )
