"""The equivalence judge: two observed runs of one case → verdict, behaviour delta, directness."""

from __future__ import annotations

import json
from collections import Counter

from ..models.ask import Outcome, ask_validated
from ..models.call import CallPolicy
from ..models.spec import ModelSpec
from ..prompts import load_prompt, messages
from ..results.store.rows import JudgementRow
from ..schemas import NOT_REPORTED, Case, JudgeReply, ObservedRun, RunnerReply
from ..vocab import EQUIVALENT, VERDICT_ORDER, Verdict


def judge_prompt():
    return load_prompt("equivalence-judge")


def check_reply(r: JudgeReply) -> None:
    """What code can check, code checks: a delta exactly when the verdict is not equivalent."""
    if r.verdict == EQUIVALENT and r.behaviour_delta.strip():
        raise ValueError(f'verdict {EQUIVALENT!r} must come with an empty behaviour_delta ("")')
    if r.verdict != EQUIVALENT and not r.behaviour_delta.strip():
        raise ValueError(
            f"verdict '{r.verdict}' needs a behaviour_delta naming the behaviour lost or changed"
        )


def run_json(reply: RunnerReply) -> str:
    """A run as the judge reads it: transcript and self-report, the workspace changes when it made
    any, and "not reported" for each self-report field the runner did not give (gates included)."""
    run = reply.model_dump(include={"transcript", "self_report"})
    if isinstance(reply, ObservedRun):
        for name in reply.not_reported:
            run["self_report"][name] = NOT_REPORTED
        if reply.workspace_changes:
            run["workspace_changes"] = [c.model_dump(exclude_defaults=True) for c in reply.workspace_changes]
    return json.dumps(run, ensure_ascii=False, indent=1)


def judge_messages(
    case: Case,
    original: RunnerReply,
    candidate: RunnerReply,
    truncated: bool = False,
    candidate_first: bool = False,
) -> list[dict]:
    """`candidate_first`: the candidate's block before the original's (calibration's order-swap
    pairs measure whether the order alone changes a judge's verdict)."""
    runs = [("original_run", run_json(original)), ("candidate_run", run_json(candidate))]
    blocks = [("case_input", case.input), *(runs[::-1] if candidate_first else runs)]
    if truncated:
        blocks.append(
            (
                "run_notes",
                "The original run stopped at an interactive gate with no scripted answer. "
                "Compare behaviour only up to that gate.",
            )
        )
    return messages(judge_prompt(), blocks)


async def judge_pair(
    case: Case,
    original: RunnerReply,
    candidate: RunnerReply,
    spec: ModelSpec,
    policy: CallPolicy | None = None,
    truncated: bool = False,
    candidate_first: bool = False,
) -> Outcome:
    """One judge sample; the value is a JudgeReply that passed the code checks."""
    return await ask_validated(
        spec,
        judge_messages(case, original, candidate, truncated, candidate_first),
        JudgeReply,
        policy or CallPolicy(),
        check=check_reply,
    )


def judgement_row(key: str, spec: ModelSpec, sample: int, out: Outcome) -> JudgementRow:
    """A judge sample's reply as the store keeps it (the judgements table), its spend included:
    for a run's judge and the calibration's alike."""
    r: JudgeReply = out.value
    return {
        "key": key,
        "model": spec.name,
        "prompt": judge_prompt().ref,
        "sample": sample,
        "verdict": r.verdict,
        "behaviour_delta": r.behaviour_delta,
        "original_directness": r.original_directness,
        "candidate_directness": r.candidate_directness,
        "interpretation_notes": r.interpretation_notes,
        "raw": out.raw[:20000],
        **out.spend(),
    }


def majority(verdicts: list[Verdict]) -> tuple[Verdict, float]:
    """The majority verdict and the share of samples that gave it.

    A tie that involves a regressed verdict resolves to it (a false regression costs a round; a
    false equivalent ships a loss); otherwise the more cautious verdict wins the tie.
    """
    if not verdicts:
        raise ValueError("no verdicts to combine")
    counts = Counter(verdicts)
    top = max(counts.values())
    tied = [v for v in VERDICT_ORDER if counts.get(v) == top]
    return tied[0], round(top / len(verdicts), 4)
