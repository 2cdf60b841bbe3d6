"""What a run will cost at most, before it starts: calls (the cache consulted), tokens and price."""

from __future__ import annotations

from ..documents import estimate_tokens
from ..models.pricing import model_info, price
from .checks.checks import model_checks
from .checks.grading import blind_order, checks_spec, grader_prompt
from .judge import judge_prompt
from .keys import grading_key, runner_keys, sample_spec
from .runners.runner import runner_prompt


def estimate(engine, rounds_so_far: int = 0) -> dict:
    """What this run will cost at most: calls needed now (cache consulted), tokens and price."""
    cfg, n, s = engine.cfg, len(engine.ts.cases), max(1, engine.cfg.runner_samples)
    # each sample of the teacher is stored under its own key: a larger N pays only the new samples
    need_teacher = sum(
        1
        for c in engine.ts.cases
        for i in range(s)
        if cfg.fresh or not _stored_key(engine, engine.original, c, i)
    )
    base = estimate_calls(n, 1, cfg.judge_samples, cfg.aa, runner_samples=s)
    aa = cfg.aa and s == 1  # a sampled run's A/A is its teacher samples judged against each other
    runner_calls = need_teacher + n * s + (n if aa else 0)
    judge_calls = base["judge_calls"]
    need_grading = [
        c for c in engine.ts.cases if model_checks(c) and (cfg.fresh or not _grading_cached(engine, c))
    ]
    grading_calls = len(need_grading) * s
    sys_tokens = estimate_tokens(runner_prompt(cfg.variant).text)[0]
    per_runner = sys_tokens + estimate_tokens(engine.original.text)[0] + 200
    command = cfg.mode.kind == "command"  # an agent's own calls: unknown until it has run (below)
    runner_prompt_tokens = 0 if command else runner_calls * per_runner
    judge_prompt_tokens = judge_calls * (estimate_tokens(judge_prompt().text)[0] + 1200)
    # the grader reads both runs' output and transcript, plus ~40 tokens per check
    per_grading = estimate_tokens(grader_prompt().text)[0] + 1200
    grading_prompt_tokens = sum(per_grading + 40 * len(model_checks(c)) for c in need_grading)
    prompt_tokens = runner_prompt_tokens + judge_prompt_tokens + grading_prompt_tokens
    completion_tokens = ((0 if command else runner_calls) + judge_calls + grading_calls) * 400
    # each side at its own model's price; unknown for either means unknown in total
    costs = (
        # a runner command's spending is the agent's own: the figures are the judge's alone
        0.0 if command else price(cfg.runner.name, runner_prompt_tokens, runner_calls * 400),
        price(
            cfg.judge.name, judge_prompt_tokens + grading_prompt_tokens, (judge_calls + grading_calls) * 400
        ),
    )
    teacher_calls = need_teacher + (n if aa else 0)  # an A/A replay repeats the teacher's prefix
    prefixes = [
        (sys_tokens + estimate_tokens(d.text)[0], m)
        for d, m in ((engine.original, teacher_calls), (engine.candidate, n * s))
    ]
    # an agent command's own calls are out of sight (and its prompt is not abeq's to lay out)
    cache = prompt_cache(cfg.runner, prefixes if cfg.mode.kind != "command" else [])
    return {
        **cache,
        **tools_ceiling(cfg, runner_calls, costs[1]),
        "runner_calls": runner_calls,
        "judge_calls": judge_calls,
        "grading_calls": grading_calls,
        "teacher_cached": n * s - need_teacher,
        "runner_samples": s,
        # every round runs the candidate's samples; the first also the original's
        "review_budget_runner_calls": n * s * (1 + rounds_so_far + 1),
        "est_prompt_tokens": prompt_tokens,
        "est_completion_tokens": completion_tokens,
        "est_cost": None if costs[0] is None or costs[1] is None else round(costs[0] + costs[1], 6),
        "command": command,
    }


def tools_ceiling(cfg, runner_runs: int, judge_cost: float | None) -> dict:
    """A tools-mode runner run is several model turns, not one call, and the estimate above counts
    one: its ceiling is what the mode's limits allow (each run up to max_steps + 1 turns and about
    max_tokens tokens, priced as prompt tokens: a tools run's tokens are mostly its conversation
    sent again each turn). Nothing for the other modes."""
    if cfg.mode.kind != "tools" or not runner_runs:
        return {}
    tokens = runner_runs * cfg.mode.max_tokens
    runner_cost = price(cfg.runner.name, tokens, 0)
    return {
        "tools_turns_per_run": cfg.mode.max_steps + 1,
        "tools_tokens_per_run": cfg.mode.max_tokens,
        "tools_max_turns": runner_runs * (cfg.mode.max_steps + 1),
        "tools_max_tokens": tokens,
        "tools_max_cost": (
            None if runner_cost is None or judge_cost is None else round(runner_cost + judge_cost, 6)
        ),
    }


def tools_ceiling_text(est: dict) -> str:
    """The tools-mode ceiling in a sentence (the CLI and the Run page say the same), or ''."""
    if "tools_max_turns" not in est:
        return ""
    cost = "price unknown" if est["tools_max_cost"] is None else f"at most ~${est['tools_max_cost']:.4f}"
    return (
        f"tools mode: each runner run above is a conversation of up to {est['tools_turns_per_run']} model "
        f"turns and about {est['tools_tokens_per_run']:,} tokens, so the runs could reach "
        f"{est['tools_max_turns']:,} turns and {est['tools_max_tokens']:,} tokens ({cost}); the figures "
        "above count one turn a run"
    )


def describe_estimate(est: dict, n_cases: int, aa: bool = False) -> list[str]:
    """What a run will cost at most, in the sentences the CLI prints and the Run page shows: the
    calls, tokens, price and what the provider's prompt cache could serve; then, in tools mode, the
    ceiling of its conversations."""
    if est.get("command"):
        return [command_estimate(est, n_cases, aa)]
    cost, calls = est["est_cost"], est["runner_calls"] + est["judge_calls"] + est["grading_calls"]
    # nothing to call (every result cached) is not "$0": a run of unpriced calls has no known price
    price = (
        "no call to make"
        if not calls
        else "price unknown for this model"
        if cost is None
        else f"~${cost:.4f}"
    )
    said = (
        f"This run: at most {est['runner_calls'] + est['judge_calls'] + est['grading_calls']} model calls "
        f"({est['runner_calls']} runner, {est['judge_calls']} judge{', A/A replays included' if aa else ''}"
        + (f", {est['grading_calls']} check grading" if est["grading_calls"] else "")
        + f"; {est['teacher_cached']} of the original's {n_cases * est.get('runner_samples', 1)} transcripts "
        "come from the cache), "
        f"~{est['est_prompt_tokens'] + est['est_completion_tokens']:,} tokens (est.), "
        + price
        + (
            f"; the provider's prompt cache could serve up to {est['est_cache_read_tokens']:,} of the "
            "prompt tokens"
            + (f" (saving up to ~${est['est_cache_saved']:.4f})" if est["est_cache_saved"] else "")
            if est["est_cache_read_tokens"]
            else ""
        )
        + "."
    )
    ceiling = tools_ceiling_text(est)
    return (
        [said]
        + ([samples_text(est)] if est.get("runner_samples", 1) > 1 else [])
        + ([ceiling[0].upper() + ceiling[1:] + "."] if ceiling else [])
    )


def samples_text(est: dict) -> str:
    """What --runner-samples multiplies, in a sentence."""
    s = est["runner_samples"]
    return (
        f"Runner samples: each arm runs {s} times per case ({s}x the runner calls of a single run), each "
        f"pair is judged and the teacher's samples are judged against each other ({s} more judge calls a "
        "case); each sample is cached under its own key, so the original's samples are paid once and a "
        "larger N later pays only the new ones."
    )


def command_estimate(est: dict, n_cases: int, aa: bool = False) -> str:
    """The estimate of a run whose runner is an agent command: its runs, and the judge's figures
    alone, since what the agent spends (hundreds of thousands of tokens a run is not rare) is
    known only once it has run; the progress line projects the rest from its runs so far."""
    cost = est["est_cost"]
    judge = (
        f"{est['judge_calls']} judge calls{', A/A replays included' if aa else ''}"
        + (f" and {est['grading_calls']} check gradings" if est["grading_calls"] else "")
        + f" (~{est['est_prompt_tokens'] + est['est_completion_tokens']:,} tokens (est.), "
        + ("price unknown for this model)" if cost is None else f"~${cost:.4f})")
    )
    return (
        f"This run: {est['runner_calls']} runs of the runner command ({est['teacher_cached']} of the "
        f"original's {n_cases * est.get('runner_samples', 1)} transcripts come from the cache) and {judge}. "
        "What the agent spends is "
        "known only once it has run: the progress line projects the rest from its runs so far."
    )


def _stored_key(engine, doc, case, sample: int = 0) -> str | None:
    """The key a stored runner result of this document on this case (this sample) is under (the
    current key, or the v1 key of this set), or None when there is none."""
    cfg = engine.cfg
    parts = cfg.mode.key_parts(engine.original, cfg.variant)
    spec = sample_spec(cfg.runner, sample)
    row = engine.store.cache.first_runner_result(
        runner_keys(doc.hash, case, cfg.variant, spec, engine.ts_hash, sample, mode_parts=parts)
    )
    return row["key"] if row else None


def _grading_cached(engine, case) -> bool:
    """Whether this case's grading would come from the cache (only when both runs' keys match one)."""
    okey, ckey = _stored_key(engine, engine.original, case), _stored_key(engine, engine.candidate, case)
    if not (okey and ckey):
        return False
    cfg = engine.cfg
    key = grading_key(okey, ckey, checks_spec(model_checks(case)), cfg.judge, blind_order(okey, ckey))
    return engine.store.cache.grading(key) is not None


def estimate_calls(
    n_cases: int,
    rounds: int = 1,
    judge_samples: int = 1,
    aa: bool = False,
    graded_cases: int = 0,
    runner_samples: int = 1,
) -> dict:
    """Budget before a run: N × (1 + rounds) runner calls, plus judge calls (and A/A extras), plus
    one grading call per round for each case with natural-language checks. With S runner samples,
    each of those runs is S runs, each pair judged, and the teacher's S samples judged against each
    other (the A/A of a sampled run, instead of a replay)."""
    s = max(1, runner_samples)
    if s > 1:
        runner = n_cases * (1 + rounds) * s
        judge = n_cases * rounds * s * (judge_samples + 1)
        grading = graded_cases * rounds * s
        return {
            "runner_calls": runner,
            "judge_calls": judge,
            "grading_calls": grading,
            "total": runner + judge + grading,
        }
    runner = n_cases * (1 + rounds) + (n_cases if aa else 0)
    judge = n_cases * rounds * judge_samples + (n_cases if aa else 0)
    grading = graded_cases * rounds
    return {
        "runner_calls": runner,
        "judge_calls": judge,
        "grading_calls": grading,
        "total": runner + judge + grading,
    }


def time_left(done: int, needed: int, made: int, elapsed: float) -> float | None:
    """Seconds until the remaining calls are resolved at the pace of this attempt so far (the calls
    made per second, cached ones aside), or None before the first call was made or once all are.
    Cached calls still to come resolve at once, so the estimate errs long, never short."""
    if made <= 0 or elapsed <= 0 or done >= needed:
        return None
    return round((needed - done) * elapsed / made, 1)


def prompt_cache(spec, prefixes: list[tuple[int, int]]) -> dict:
    """What the provider's prompt cache could save on the runner calls: for each document, (prefix
    tokens, calls) — the runner prompt and the document are the same bytes in every call, so after
    the first call of a document the rest read that prefix from the cache. Counted only where the
    price list gives the model a cache-read price (or it runs here) and the prefix reaches the
    provider's minimum (`prompt_cache_min_tokens`, else 1024); "up to": calls that start before the
    first of their document has been cached miss."""
    info = model_info(spec.name) or {}
    cached_here = spec.is_local  # the embedded model keeps a llama.cpp context per prefix
    if not cached_here and "cache_read_input_token_cost" not in info:
        return {"est_cache_read_tokens": 0, "est_cache_saved": 0.0}
    minimum = 0 if cached_here else int(info.get("prompt_cache_min_tokens") or 1024)
    reads = sum(p * (m - 1) for p, m in prefixes if m > 1 and p >= minimum)
    # a provider that caches only where told bills the first write above the input price
    writes = sum(p for p, m in prefixes if m > 1 and p >= minimum) if spec.provider.cache_marks else 0
    total = sum(p * m for p, m in prefixes)
    full, cached = (
        price(spec.name, total, 0),
        price(spec.name, total, 0, cache_read=reads, cache_write=writes),
    )
    saved = None if full is None or cached is None else round(full - cached, 6)
    return {"est_cache_read_tokens": reads, "est_cache_saved": saved}
