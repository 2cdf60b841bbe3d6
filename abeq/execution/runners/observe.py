"""One document version applied to one case in the run's runner mode: what was observed.

chat → one runner call (runner.py); tools → the model acting through tools (tools_runner.py);
command → an agent CLI (agent_cmd.py). Each gives an Outcome whose value is an ObservedRun; the
runner result row stores its extras (workspace changes, tool trace, fields not reported).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...documents import Document
from ...models.ask import Outcome
from ...models.call import CallPolicy
from ...models.http import redactor
from ...models.spec import ModelSpec
from ...schemas import Case, ObservedRun
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
    reply, redact = out.value.model_dump(), redactor()
    # one look at all its texts at once (a secret in one of them is in their join: NUL, which no
    # secret holds, separates them), and each text redacted only when there is something to redact
    joined = "\x00".join(_texts(reply))
    if redact(joined) != joined:
        reply = _redacted(reply, redact)
    out.value = ObservedRun.model_validate(reply)
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


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v)


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
