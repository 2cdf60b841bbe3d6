"""What a mutation test will cost, before it starts: at most mutants × cases, and the count expected
when each mutant stops at its first kill; every call the cache would answer is left out."""

from __future__ import annotations

from ..documents import estimate_tokens
from ..execution.checks import model_checks
from ..execution.grading import blind_order, checks_spec
from ..execution.judge import judge_prompt
from ..execution.keys import grading_key, judge_key, judge_spec, runner_keys
from ..execution.runner import runner_prompt
from ..models.pricing import price
from ..sets.confirm import set_hash


def mutation_estimate(prep) -> dict:
    cfg, store, ts, orig = prep.cfg, prep.store, prep.ts, prep.original
    ts_hash, k = set_hash(ts), max(1, cfg.judge_samples)
    mode_parts = cfg.mode.key_parts(orig, cfg.variant)

    def stored(doc_hash: str, case, sample: int = 0) -> dict | None:
        keys = runner_keys(doc_hash, case, cfg.variant, cfg.runner, ts_hash, sample, mode_parts)
        return None if cfg.fresh else store.first_runner_result(keys)

    teachers = {c.id: stored(orig.hash, c) for c in ts.cases}
    teacher_calls = sum(1 for t in teachers.values() if t is None)
    if cfg.aa:  # the teacher's replay and its A/A judgement, once for the whole test
        teacher_calls += sum(2 for c in ts.cases if stored(orig.hash, c, 1) is None)
    width = max(1, cfg.concurrency)
    runner_calls = judge_calls = most = expected = 0
    for m in prep.mutants:
        by_id = {c.id: c for c in ts.cases}
        first = prep.order(m)
        ordered = [by_id[i] for i in first] + [c for c in ts.cases if c.id not in first]
        # stop-at-first-kill: a mutant whose section some case claims is expected to fall within
        # the first `concurrency` cases it starts; one no case claims likely survives (every case)
        n_expected = len(ordered) if prep.all_cases or not first else min(len(ordered), width)
        for j, case in enumerate(ordered):
            t, c = teachers[case.id], stored(m.hash, case)
            calls = [int(c is None), 0]
            if t is None or c is None:
                calls[1] = k + (1 if model_checks(case) else 0)
            else:
                truncated = bool(t["gate_truncated"])
                calls[1] = sum(
                    store.judgement(judge_key(t["key"], c["key"], judge_spec(cfg.judge, s, k), s, truncated))
                    is None
                    for s in range(k)
                )
                graded = model_checks(case)
                if graded:
                    key = grading_key(
                        t["key"], c["key"], checks_spec(graded), cfg.judge, blind_order(t["key"], c["key"])
                    )
                    calls[1] += int(store.grading(key) is None)
            runner_calls, judge_calls = runner_calls + calls[0], judge_calls + calls[1]
            most += sum(calls)
            if j < n_expected:
                expected += sum(calls)
    sys_tokens = estimate_tokens(runner_prompt(cfg.variant).text)[0]
    per_runner = sys_tokens + estimate_tokens(orig.text)[0] + 200
    per_judge = estimate_tokens(judge_prompt().text)[0] + 1200
    runner_all, judge_all = runner_calls + teacher_calls, judge_calls
    done = prep.stored()  # an identical test finished: its report is read back, no call is made
    if done is not None:
        most = expected = teacher_calls = runner_all = judge_all = 0
    costs = (
        None
        if cfg.mode.kind == "command"
        else price(cfg.runner.name, runner_all * per_runner, runner_all * 400),
        price(cfg.judge.name, judge_all * per_judge, judge_all * 400),
    )
    return {
        "stored": done.report["id"] if done is not None else None,
        "mutants": len(prep.mutants),
        "cases": len(ts.cases),
        "teacher_calls": teacher_calls,
        "teacher_cached": len(ts.cases) - sum(1 for t in teachers.values() if t is None),
        "max_calls": most + teacher_calls,
        "expected_calls": (most if prep.all_cases else expected) + teacher_calls,
        "runner_calls": runner_all,
        "judge_calls": judge_all,
        "est_tokens": runner_all * (per_runner + 400) + judge_all * (per_judge + 400),
        "est_cost": None if costs[0] is None or costs[1] is None else round(costs[0] + costs[1], 6),
    }


def describe_mutation_estimate(est: dict, all_cases: bool) -> str:
    """The estimate in the sentence the CLI prints and the desk shows."""
    if est["stored"]:
        return (
            f"{est['mutants']} mutants × {est['cases']} cases: this test finished before (mutation test "
            f"{est['stored']}); its report is read back from the database, with no model call."
        )
    cost = "price unknown for this model" if est["est_cost"] is None else f"at most ~${est['est_cost']:.4f}"
    said = (
        f"{est['mutants']} mutants × {est['cases']} cases: at most {est['max_calls']} model calls "
        f"({est['teacher_calls']} for the original; {est['teacher_cached']} of its {est['cases']} "
        f"transcripts come from the cache)"
    )
    if not all_cases:
        said += f", about {est['expected_calls']} expected as each mutant stops at its first kill"
    return said + f"; ~{est['est_tokens']:,} tokens (est.), {cost}."
