"""The runner: one document version applied to one case input → transcript + six-field self-report."""

from __future__ import annotations

import json

from ..models.ask import Outcome, ask_validated
from ..models.call import CallPolicy
from ..models.spec import ModelSpec
from ..prompts import Prompt, load_prompt, messages
from ..schemas import Case, RunnerReply


def runner_prompt(variant: str) -> Prompt:
    return load_prompt("runner-instruction-file" if variant == "instruction-file" else "runner-skill")


def runner_messages(document: str, case: Case, variant: str) -> list[dict]:
    gates = [g.model_dump() for g in case.gate_responses]
    label = "instruction_file" if variant == "instruction-file" else "skill"
    return messages(
        runner_prompt(variant),
        [
            ("document", document),
            ("case_input", case.input),
            ("gate_responses", json.dumps(gates, ensure_ascii=False, indent=1)),
            ("document_kind", label),
        ],
    )


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
