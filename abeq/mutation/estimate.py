"""What a mutation test will cost, before it starts: at most mutants × cases, and the count expected
when each mutant stops at its first kill (an expectation over the chance each case kills, not the
most it could be); every call the cache would answer is left out.

Tokens are estimated per call from what it will carry: a runner call the runner prompt, the document
and the case, and it writes a run as long as the original's cached run of that case (its provider's
own token counts) or, when none is cached, what the runner prompt asks for: the document's steps
narrated and listed again in the self-report (1.5 times the document's length had a real skill at
+29%: bench/bench_mutate_estimate.py); a judge or grader call carries both runs and writes a short
verdict. (Counting the judge's input as a fixed 1,200 tokens made the estimate 0.8 M for 1.38 M used.)"""

from __future__ import annotations

import re

from ..documents import estimate_tokens
from ..execution.checks.checks import model_checks
from ..execution.checks.grading import blind_order, checks_spec, grader_prompt
from ..execution.judge import judge_prompt
from ..execution.keys import grading_key, judge_key, judge_spec, runner_keys
from ..execution.runners.runner import runner_prompt
from ..models.pricing import price
from ..sets.confirmation import set_hash

# stop-at-first-kill's expectation: the chance a case kills a mutant, for a case that claims the
# mutant's section (it is tried first) and for one that does not. Fitted, not derived: chosen on the
# scripted model's runs of the bundled example and two real skills (bench/bench_mutate_estimate.py;
# 0.5 left the bundled example after a run at +36%, 0.7 mcp-builder at -31%); a real judge's kill
# rates may differ.
KILL_CLAIMED = 0.6
KILL_OTHER = 0.1
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)")


def steps_tokens(text: str) -> int:
    """Tokens of a document's instructions: its list items, outside code blocks."""
    items, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence and (m := _ITEM.match(line)):
            items.append(m.group(1))
    return estimate_tokens("\n".join(items))[0] if items else 0


def start_chances(kills: list[float], width: int) -> tuple[list[float], list[float]]:
    """For each case of a mutant, in order, the chance it starts (its runner call is made) and the
    chance it is judged, when the case at j kills with chance kills[j] and `width` cases run at once.
    Case j starts unless a case that finished before a slot freed for it (j - width or earlier)
    killed; once started, its judgement is stopped when a case running beside it (within `width`)
    killed first, which happens half the time that case kills."""
    started, alive = [], 1.0
    for j in range(len(kills)):
        if j >= width:
            alive *= 1 - kills[j - width]
        started.append(alive)
    judged = []
    for j in range(len(kills)):
        beside = 1.0
        for i in range(max(0, j - width + 1), min(len(kills), j + width)):
            if i != j:
                beside *= 1 - kills[i] / 2
        judged.append(started[j] * beside)
    return started, judged


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
    runner_calls = judge_calls = most = 0
    expected = 0.0
    tokens_most = tokens_expected = 0.0
    doc_tokens = estimate_tokens(orig.text)[0]
    runner_in = estimate_tokens(runner_prompt(cfg.variant).text)[0] + doc_tokens + 60
    judge_in = estimate_tokens(judge_prompt().text)[0] + 120
    grader_in = estimate_tokens(grader_prompt().text)[0] + 120
    cap = cfg.runner.max_tokens

    steps = steps_tokens(orig.text)

    def run_out(case) -> float:
        """A run of this case, in tokens: the original's when cached, else what the runner prompt asks
        for: a transcript that narrates the document's steps and a self-report that lists them again
        (about twice its instructions, plus the frame); a document with few steps, about its length."""
        t = teachers.get(case.id)
        if t and t.get("completion_tokens"):
            return float(t["completion_tokens"])
        guess = 2 * steps + 250 if steps >= doc_tokens / 5 else 1.5 * doc_tokens + 100
        return float(min(cap, guess))

    for m in prep.mutants:
        by_id = {c.id: c for c in ts.cases}
        first = prep.order(m)
        ordered = [by_id[i] for i in first] + [c for c in ts.cases if c.id not in first]
        started, judged = start_chances(
            [KILL_CLAIMED if c.id in first else KILL_OTHER for c in ordered], width
        )
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
            ran = calls[0] * (runner_in + case_in + out)
            # a judge or grader reads both runs (as JSON: ~15% more) and writes a short reply
            read = (calls[1] - graded_calls) * (judge_in + case_in + 2.3 * out + 250)
            read += graded_calls * (grader_in + 2.3 * out + 200)
            most += sum(calls)
            tokens_most += ran + read
            expected += started[j] * calls[0] + judged[j] * calls[1]
            tokens_expected += started[j] * ran + judged[j] * read
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
        "expected_calls": (most if prep.all_cases else round(expected)) + teacher_calls,
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
