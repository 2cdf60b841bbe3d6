"""Natural-language checks graded on both arms by the judge model: one structured call per case,
both runs in it, blind to which is the teacher (the A/B order is drawn from the runs' keys and
recorded), a short evidence quote per run and check."""

from __future__ import annotations

import hashlib
import json

from ..models.ask import Outcome, ask_validated
from ..models.call import CallPolicy
from ..models.spec import ModelSpec
from ..prompts import Prompt, load_prompt, messages
from ..schemas import Case, GradingReply, RunnerReply
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


def reply_check(ids: list[str]):
    """What code can check, code checks: every check graded exactly once, no other."""

    def check(r: GradingReply) -> None:
        got = [c.id for c in r.checks]
        missing = [i for i in ids if i not in got]
        extra = sorted({i for i in got if i not in ids} | {i for i in got if got.count(i) > 1})
        if missing or extra:
            raise ValueError(
                "grade every check exactly once, by its id"
                + (f"; missing: {', '.join(missing)}" if missing else "")
                + (f"; unknown or repeated: {', '.join(extra)}" if extra else "")
            )

    return check


def unblind(reply: GradingReply, shown_as_a: str) -> dict[str, tuple[bool, str, bool, str]]:
    """check id → (teacher passed, evidence, candidate passed, evidence)."""
    out = {}
    for g in reply.checks:
        a, b = (g.a_pass, g.a_evidence), (g.b_pass, g.b_evidence)
        t, c = (a, b) if shown_as_a == TEACHER else (b, a)
        out[g.id] = (t[0], t[1], c[0], c[1])
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
    """One grading call; the value is a GradingReply that graded every check once (still blind)."""
    return await ask_validated(
        spec,
        grading_messages(case, checks, teacher, candidate, shown_as_a),
        GradingReply,
        policy or CallPolicy(),
        check=reply_check([c.id for c in checks]),
    )
