"""What a mutation test will cost, before it starts: at most mutants × cases, and the count expected
when each mutant stops at its first kill; every call the cache would answer is left out.

Tokens are estimated per call from what it will carry: a runner call the runner prompt, the document
and the case, and it writes a run as long as the original's cached run of that case (its provider's
own token counts) or, when none is cached, about 1.5 times the document's length; a judge or grader call
carries both runs and writes a short verdict. (Counting the judge's input as a fixed 1,200 tokens
made the estimate 0.8 M for 1.38 M used.)"""

from __future__ import annotations

from ..documents import estimate_tokens
from ..execution.checks.checks import model_checks
from ..execution.checks.grading import blind_order, checks_spec, grader_prompt
from ..execution.judge import judge_prompt
from ..execution.keys import grading_key, judge_key, judge_spec, runner_keys
from ..execution.runners.runner import runner_prompt
from ..models.pricing import price
from ..sets.confirmation import set_hash


def mutation_estimate(prep) -> dict:
    cfg, store, ts, orig = prep.cfg, prep.store, prep.ts, prep.original
    ts_hash, k = set_hash(ts), max(1, cfg.judge_samples)
    mode_parts = cfg.mode.key_parts(orig, cfg.variant)

    def stored(doc_hash: str, case, sample: int = 0) -> dict | None:
        keys = runner_keys(doc_hash, case, cfg.variant, cfg.runner, ts_hash, sample, mode_parts)
        return None if cfg.fresh else store.cache.first_runner_result(keys)

    teachers = {c.id: stored(orig.hash, c) for c in ts.cases}
    teacher_calls = sum(1 for t in teachers.values() if t is None)
    if cfg.aa:  # the teacher's replay and its A/A judgement, once for the whole test
        teacher_calls += sum(2 for c in ts.cases if stored(orig.hash, c, 1) is None)
    width = max(1, cfg.concurrency)
    runner_calls = judge_calls = most = expected = 0
    tokens_most = tokens_expected = 0.0
    doc_tokens = estimate_tokens(orig.text)[0]
    runner_in = estimate_tokens(runner_prompt(cfg.variant).text)[0] + doc_tokens + 60
    judge_in = estimate_tokens(judge_prompt().text)[0] + 120
    grader_in = estimate_tokens(grader_prompt().text)[0] + 120
    cap = cfg.runner.max_tokens

    def run_out(case) -> float:
        """A run of this case, in tokens: the original's when cached, else about the document's."""
        t = teachers.get(case.id)
        if t and t.get("completion_tokens"):
            return float(t["completion_tokens"])
        return float(min(cap, 1.5 * doc_tokens + 100))  # a run restates much of what it followed

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
                    store.cache.judgement(
                        judge_key(t["key"], c["key"], judge_spec(cfg.judge, s, k), s, truncated)
                    )
                    is None
                    for s in range(k)
                )
                graded = model_checks(case)
                if graded:
                    key = grading_key(
                        t["key"], c["key"], checks_spec(graded), cfg.judge, blind_order(t["key"], c["key"])
                    )
                    calls[1] += int(store.cache.grading(key) is None)
            runner_calls, judge_calls = runner_calls + calls[0], judge_calls + calls[1]
            out, case_in = run_out(case), estimate_tokens(case.input)[0]
            graded_calls = int(bool(model_checks(case))) if calls[1] else 0
            spent = calls[0] * (runner_in + case_in + out)
            # a judge or grader reads both runs (as JSON: ~15% more) and writes a short reply
            spent += (calls[1] - graded_calls) * (judge_in + case_in + 2.3 * out + 250)
            spent += graded_calls * (grader_in + 2.3 * out + 200)
            most += sum(calls)
            tokens_most += spent
            if j < n_expected:
                expected += sum(calls)
                tokens_expected += spent
    teacher_tokens = sum(
        runner_in + estimate_tokens(c.input)[0] + run_out(c) for c in ts.cases if not teachers[c.id]
    )
    if cfg.aa:
        teacher_tokens *= 2
    per_runner = runner_in + 200  # for the price: the average runner call
    per_judge = judge_in + 1200
    runner_all, judge_all = runner_calls + teacher_calls, judge_calls
    done = prep.stored()  # an identical test finished: its report is read back, no call is made
    if done is not None:
        most = expected = teacher_calls = runner_all = judge_all = 0
        tokens_most = tokens_expected = teacher_tokens = 0
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
        "est_tokens": round(tokens_most + teacher_tokens),
        "expected_tokens": round((tokens_most if prep.all_cases else tokens_expected) + teacher_tokens),
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
        said += (
            f", about {est['expected_calls']} expected as each mutant stops at its first kill "
            f"(~{est['expected_tokens']:,} tokens)"
        )
    return said + f"; ~{est['est_tokens']:,} tokens at most (est.), {cost}."
