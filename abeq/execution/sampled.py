"""One case run N > 1 times on each arm (`--runner-samples N`): the runs, the judge per pair, the
checks per pair, and the decision on the counts (abeq.execution.samples).

Sample i of an arm has its own seed and cache key (sample 0 included), so a teacher's N samples are
paid once across rounds and a larger N later pays only the new ones. The judge compares teacher
sample i with candidate sample i (the pairing measured against listing behaviours in
docs/guides/samples.md), and teacher sample i with teacher sample i+1: how often the teacher
differs from itself is the rate the candidate's is held against. The case's checks run on every
pair, each a named behaviour with its own rate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, cast

from ..models.call import CallPolicy
from ..results.store.rows import CaseResult, CheckResultRow
from ..results.store.store import dumps
from ..schemas import Case, CheckResult, RunnerReply
from ..vocab import DIVERGED, EQUIVALENT, JUDGED, REGRESSED, Verdict
from .calls import Calls
from .checks.checks import evaluate, model_checks
from .config import RunConfig
from .judge import majority
from .runners.runner import gate_state
from .samples import ALPHA, Rate, decide, holm, judge_rate, rate, same_rate, summary_text

TEST_NAME = (
    "one-sided Fisher exact test per behaviour, Holm-corrected over the case's behaviours that can reach "
    "significance (Tarone); equivalence: pairs judged equivalent, the candidate's against the teacher's own"
)


async def _pair(
    calls: Calls,
    cfg: RunConfig,
    case: Case,
    t: tuple[str, RunnerReply],
    c: tuple[str, RunnerReply],
    policy: CallPolicy,
    kind: str = "judge",
) -> tuple[Verdict, list[tuple[str, Mapping[str, Any]]]]:
    """The judge's majority verdict on one pair, and its samples (key, row)."""
    (okey, o), (ckey, cand) = t, c
    truncated = gate_state(o)[0]
    k = 1 if kind != "judge" else max(1, cfg.judge_samples)
    done = await asyncio.gather(
        *[calls.judge(case, okey, o, ckey, cand, s, k, truncated, policy, kind=kind) for s in range(k)]
    )
    return majority([r["verdict"] for _, r in done])[0], list(done)


async def _checks(
    calls: Calls, cfg: RunConfig, case: Case, t: tuple[str, RunnerReply], c: tuple[str, RunnerReply], policy
) -> tuple[list[CheckResult], str | None]:
    """The case's checks on one pair (graded in one blind call when some are natural-language)."""
    graded = model_checks(case)
    gkey, shown_as_a, grades = (None, None, None)
    if graded:
        gkey, shown_as_a, grades = await calls.grade(case, t[0], t[1], c[0], c[1], graded, policy)
    args = (case, t[1], c[1], grades, shown_as_a, cfg.sandbox())
    return await asyncio.to_thread(evaluate, *args), gkey


def check_rates(per_pair: list[list[CheckResult]], n: int) -> list[Rate]:
    """Each gating check's passes on each side over the pairs (skipped and weight-0 checks aside),
    counted by its place in the case: two checks with one label stay two behaviours."""
    out: dict[int, tuple[str, list[int]]] = {}
    for checks in per_pair:
        for j, r in enumerate(checks):
            if not r.gates or r.teacher is None or r.candidate is None:
                continue
            counts = out.setdefault(j, (f"check {r.label}", [0, 0]))[1]
            counts[0] += int(r.teacher)
            counts[1] += int(r.candidate)
    return [rate(name, t, c, n) for name, (t, c) in out.values()]


async def run_sampled(
    calls: Calls, cfg: RunConfig, original, candidate, case: Case, policy: CallPolicy
) -> tuple[list[CheckResultRow], CaseResult]:
    """Every sample of one case, judged and decided: what the engine stores for it (the first pair's
    check results, shown as a single run's are, and the case's row with its samples)."""
    n = cfg.runner_samples
    runs = await asyncio.gather(
        *[calls.runner(original, case, "runner-teacher", policy, s) for s in range(n)],
        *[calls.runner(candidate, case, "runner-candidate", policy, s) for s in range(n)],
    )
    teacher, cand = list(runs[:n]), list(runs[n:])
    cand_judged, teacher_judged, checked = await asyncio.gather(
        asyncio.gather(*[_pair(calls, cfg, case, teacher[i], cand[i], policy) for i in range(n)]),
        asyncio.gather(
            *[_pair(calls, cfg, case, teacher[i], teacher[(i + 1) % n], policy, "judge-aa") for i in range(n)]
        ),
        asyncio.gather(*[_checks(calls, cfg, case, teacher[i], cand[i], policy) for i in range(n)]),
    )
    cand_pairs = [v for v, _ in cand_judged]
    teacher_pairs = [v for v, _ in teacher_judged]
    checks = [r for r, _ in checked]
    rates = holm([*check_rates(checks, n), judge_rate(teacher_pairs, cand_pairs)])
    same = same_rate(teacher_pairs, cand_pairs)
    verdict, undecided = decide(rates, same)
    judged = [j for _, js in cand_judged for j in js]  # every pair's judge samples, pair by pair
    # the judge's own words from a pair that shows the verdict's side: a loss, else a difference
    named = next((r for _, r in judged if r["verdict"] == REGRESSED), None) or next(
        (r for _, r in judged if r["verdict"] != EQUIVALENT), None
    )
    rows = [r.as_dict() for r in rates]
    delta = ""
    if verdict != EQUIVALENT or undecided:
        why = {
            REGRESSED: "lost beyond chance",
            DIVERGED: "judged equivalent less often than the original's own samples, beyond chance",
        }.get(verdict, "no loss beyond chance yet; more samples could tell")
        lost = [r.as_dict() for r in rates if r.lost] if verdict == REGRESSED else rows
        if verdict == DIVERGED:
            lost = [same.as_dict(), *rows]
        delta = f"{why} ({n} samples): {summary_text(lost)}"
        if named is not None:
            delta += f" · judge: {named['behaviour_delta']}"
    record = {
        "n": n,
        "temperature": cfg.runner.temperature,
        "test": TEST_NAME,
        "alpha": ALPHA,
        "teacher_keys": [k for k, _ in teacher],
        "candidate_keys": [k for k, _ in cand],
        "pair_verdicts": cand_pairs,
        "teacher_pair_verdicts": teacher_pairs,
        "rates": rows,
        "judged_equivalent": same.as_dict(),
        "undecided": undecided,
        "behaviour_delta": delta,
    }
    gkey = checked[0][1]
    first = [
        cast(CheckResultRow, {**r.model_dump(), "grading_key": gkey if r.kind == "model" else None})
        for r in checks[0]
    ]
    row: CaseResult = {
        "status": JUDGED,
        "teacher_key": teacher[0][0],
        "candidate_key": cand[0][0],
        "judge_keys": dumps([k for k, _ in judged]),
        "verdict": verdict,
        "agreement": round(sum(v == verdict for v in cand_pairs) / n, 4),
        "uncertain": int(undecided),
        "gate_truncated": int(gate_state(teacher[0][1])[0]),
        "aa_verdict": None,  # the teacher's pairs are this case's A/A
        "checks_lost": sum(1 for r in rates if r.lost and r.behaviour.startswith("check ")),
        "samples": dumps(record),
        "error_stage": None,
        "error": None,
    }
    return first, row
