"""The tools runner mode: the runner model acts through function calls on a fresh copy of the case's
workspace, within a step and token budget; its tool trace is the transcript, and its final reply is
the six-field self-report (validated; an invalid one is shown back and re-asked, bounded).

Tools are offered on every call (tool_choice "none" once the budget is spent, so the model must
answer); no response_format is sent with them: some providers implement it as a forced tool call,
which would take the model's own tools away. The reply is validated here instead.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from ...documents import Document
from ...errors import ModelCallError, json_problem
from ...models.ask import MAX_ATTEMPTS, Outcome, strip_fences
from ...models.call import CallPolicy, complete
from ...models.spec import ModelSpec
from ...prompts import messages
from ...schemas import Case, ObservedRun, SelfReport
from .modes import RunnerMode, mode_prompt
from .tools import ToolBox, tool_specs
from .workspace import RunWorkspace

LIMIT_REACHED = "refused: the run's step or token budget is spent; reply now with your self-report"
TRANSCRIPT_RESULT_CHARS = 400  # a tool answer in the transcript (the stored trace keeps more)


def tools_messages(case: Case, variant: str, placed_at: str) -> list[dict]:
    gates = [g.model_dump() for g in case.gate_responses]
    return messages(
        mode_prompt("tools"),
        [
            ("document_path", placed_at),
            ("document_kind", "instruction_file" if variant == "instruction-file" else "skill"),
            ("case_input", case.input),
            ("gate_responses", json.dumps(gates, ensure_ascii=False, indent=1)),
        ],
    )


def parse_report(text: str) -> SelfReport:
    """The final reply as a self-report (a {"self_report": {...}} wrapper is accepted too)."""
    data = json.loads(strip_fences(text), strict=False)
    if isinstance(data, dict) and isinstance(data.get("self_report"), dict):
        data = data["self_report"]
    return SelfReport.model_validate(data)


def render(box: ToolBox, notes: list[tuple[int, str]]) -> str:
    """The tool trace as the run's transcript: each call, its arguments and (the start of) its answer,
    with what the model said between calls."""
    said = dict(notes)
    lines = []
    for step in box.trace:
        if step.step in said:
            lines.append(f"model: {said[step.step]}")
        args = json.dumps(step.arguments, ensure_ascii=False, sort_keys=True)
        result = (
            step.result
            if len(step.result) <= TRANSCRIPT_RESULT_CHARS
            else (step.result[:TRANSCRIPT_RESULT_CHARS] + f" [… {len(step.result):,} characters]")
        )
        lines.append(f"[{step.step}] {step.tool} {args}" + (" (REFUSED)" if step.refused else ""))
        lines.append("  → " + result.replace("\n", "\n    "))
    return "\n".join(lines) or "(the model called no tool)"


async def run_with_tools(
    document: Document,
    case: Case,
    variant: str,
    spec: ModelSpec,
    mode: RunnerMode,
    placed_at: str,
    policy: CallPolicy,
) -> Outcome:
    """One document version on one case through tools; the value is an ObservedRun."""
    convo = tools_messages(case, variant, placed_at)
    pt = ct = turns = reasks = 0
    cost: float | None = 0.0
    latency = 0.0
    notes: list[tuple[int, str]] = []
    with RunWorkspace(case, document, placed_at) as ws:
        box = ToolBox(ws.dir, case, read_only=variant == "instruction-file")
        while True:
            spent = len(box.trace) >= mode.max_steps or pt + ct >= mode.max_tokens
            offer = {"tools": tool_specs(), "tool_choice": "none" if spent else "auto"}
            try:
                c = await complete(spec, convo, policy=policy, tools=offer)
            except ModelCallError as e:
                raise e.spent(pt, ct, cost) from None
            turns += 1
            pt, ct, latency = pt + c.prompt_tokens, ct + c.completion_tokens, latency + c.latency
            cost = None if (cost is None or c.cost is None) else cost + c.cost
            if c.tool_calls:
                convo.append({"role": "assistant", "content": c.text or None, "tool_calls": c.tool_calls})
                if c.text.strip():
                    notes.append((len(box.trace) + 1, c.text.strip()[:1000]))
                for call in c.tool_calls:
                    fn = call.get("function") or {}
                    if len(box.trace) >= mode.max_steps or spent:
                        answer = box.refuse(fn.get("name", ""), {}, LIMIT_REACHED)
                    else:
                        answer = box.call(fn.get("name", ""), fn.get("arguments") or "{}")
                    convo.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": answer})
                if not spent:
                    continue
                problem = "tools are no longer available"
            else:
                try:
                    report = parse_report(c.text)
                    break
                except ValidationError as e:
                    problem = "; ".join(
                        f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors(include_url=False)[:6]
                    )
                except json.JSONDecodeError as e:
                    problem = f"not valid JSON ({json_problem(e)})"
                convo.append({"role": "assistant", "content": c.text[:4000]})
            reasks += 1
            if reasks >= MAX_ATTEMPTS:
                raise ModelCallError(
                    f"{spec.name}: no valid self-report in tools mode after {reasks} attempts: "
                    f"{problem[:300]}"
                ).spent(pt, ct, cost)
            convo.append(
                {
                    "role": "user",
                    "content": f"That was not a valid final reply: {problem}. Reply with the complete "
                    "self-report JSON object only, calling no tool.",
                }
            )
        changes = ws.changes()
    observed = ObservedRun(
        transcript=render(box, notes),
        self_report=report,
        workspace_changes=changes,
        tool_trace=box.trace,
    )
    return Outcome(observed, c.text, pt, ct, cost, latency, turns)
