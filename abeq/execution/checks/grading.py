"""Natural-language checks graded on both arms by the judge model: one structured call per case,
both runs in it, blind to which is the teacher (the A/B order is drawn from the runs' keys and
recorded), a short evidence quote per run and check. The reply has one property per check id."""

from __future__ import annotations

import hashlib
import json

from ...models.ask import Outcome, ask_validated
from ...models.call import CallPolicy
from ...models.spec import ModelSpec
from ...prompts import Prompt, load_prompt, messages
from ...schemas import Case, RunnerReply, grading_reply
from .checks import Check

TEACHER, CANDIDATE = "teacher", "candidate"


def grader_prompt() -> Prompt:
    return load_prompt("check-grader")


def blind_order(teacher_key: str, candidate_key: str) -> str:
    """Which arm is shown as run A: drawn from the two runs' cache keys, so it is random across
    cases yet the same on an identical re-run (and so the cache still hits)."""
    h = hashlib.sha256(f"order|{teacher_key}|{candidate_key}".encode()).digest()
    return TEACHER if h[0] % 2 == 0 else CANDIDATE


def checks_spec(checks: list[Check]) -> list[dict]:
    """What the grader is told about each check (and what its cache key holds)."""
    return [{"id": c.id, "check": c.rubric, "reads": c.target} for c in checks]


def _run(reply: RunnerReply) -> str:
    return json.dumps(
        {"output": reply.self_report.output_produced, "transcript": reply.transcript},
        ensure_ascii=False,
        indent=1,
    )


def grading_messages(
    case: Case, checks: list[Check], teacher: RunnerReply, candidate: RunnerReply, shown_as_a: str
) -> list[dict]:
    a, b = (teacher, candidate) if shown_as_a == TEACHER else (candidate, teacher)
    return messages(
        grader_prompt(),
        [
            ("case_input", case.input),
            ("run_a", _run(a)),
            ("run_b", _run(b)),
            ("checks", json.dumps(checks_spec(checks), ensure_ascii=False, indent=1)),
        ],
    )


def unblind(reply, ids: list[str], shown_as_a: str) -> dict[str, tuple[bool, str, bool, str]]:
    """check id → (teacher passed, evidence, candidate passed, evidence), from a reply in A/B terms."""
    out = {}
    for i in ids:
        g = getattr(reply, i)
        a, b = (g.a_pass, g.a_evidence), (g.b_pass, g.b_evidence)
        t, c = (a, b) if shown_as_a == TEACHER else (b, a)
        out[i] = (t[0], t[1], c[0], c[1])
    return out


async def grade_pair(
    case: Case,
    checks: list[Check],
    teacher: RunnerReply,
    candidate: RunnerReply,
    shown_as_a: str,
    spec: ModelSpec,
    policy: CallPolicy | None = None,
) -> Outcome:
    """One grading call; the value grades every check once, in A/B terms (still blind)."""
    return await ask_validated(
        spec,
        grading_messages(case, checks, teacher, candidate, shown_as_a),
        grading_reply(tuple(c.id for c in checks)),
        policy or CallPolicy(),
    )
