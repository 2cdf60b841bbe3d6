"""The runner: one document version applied to one case input → transcript + six-field self-report."""

from __future__ import annotations

import json

from ...models.ask import Outcome, ask_validated
from ...models.caching import mark_prefix
from ...models.call import CallPolicy
from ...models.spec import ModelSpec
from ...prompts import Prompt, data_block, load_prompt, messages
from ...schemas import Case, RunnerReply
from ...sets.workspace import has_workspace, initial_files

MAX_WORKSPACE_CHARS = 30_000  # of a case's files shown to a chat runner (tools and commands read them)


def runner_prompt(variant: str) -> Prompt:
    return load_prompt("runner-instruction-file" if variant == "instruction-file" else "runner-skill")


def runner_messages(document: str, case: Case, variant: str) -> list[dict]:
    """The runner prompt, then the document, then the case: every call for one document starts with
    the same bytes (a prefix providers cache), and that prefix is marked for those that need telling."""
    gates = [g.model_dump() for g in case.gate_responses]
    label = "instruction_file" if variant == "instruction-file" else "skill"
    blocks = [
        ("document", document),
        ("case_input", case.input),
        ("gate_responses", json.dumps(gates, ensure_ascii=False, indent=1)),
        ("document_kind", label),
    ]
    if has_workspace(case):  # a chat runner acts on nothing: it is shown the case's files instead
        blocks.append(("workspace_files", workspace_text(initial_files(case))))
    msgs = messages(runner_prompt(variant), blocks)
    return mark_prefix(msgs, data_block("document", document) + "\n\n")


def workspace_text(files: dict[str, str]) -> str:
    """The case's files as one text, each under its path, cut at MAX_WORKSPACE_CHARS."""
    text = "".join(f"=== {path} ===\n{body}\n" for path, body in sorted(files.items())) or "(no files)"
    if len(text) > MAX_WORKSPACE_CHARS:
        text = text[:MAX_WORKSPACE_CHARS] + f"\n[… cut: {len(text) - MAX_WORKSPACE_CHARS:,} more characters]"
    return text


async def run_document(
    document: str, case: Case, variant: str, spec: ModelSpec, policy: CallPolicy | None = None
) -> Outcome:
    """Apply one document version to one case; the value is a validated RunnerReply."""
    return await ask_validated(
        spec, runner_messages(document, case, variant), RunnerReply, policy or CallPolicy()
    )


def gate_state(reply: RunnerReply) -> tuple[bool, str]:
    """(stopped at an unanswered gate, the section it was in)."""
    for g in reply.self_report.gates_hit:
        if g.response_used.strip().upper().startswith("STOPPED"):
            return True, g.section
    return False, ""
