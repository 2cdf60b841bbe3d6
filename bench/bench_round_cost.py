"""What a round costs: model calls, tokens (prompt, completion, read from the provider's prompt
cache) and priced cost of the rounds a compression loop runs, on a priced fake model.

The model is `openai/priced-fake` on the loopback server (abeq's own HTTP transport), which answers
like the scripted model and reports cached prompt tokens as OpenAI does (automatic prefix caching
from 1024 tokens, in 128-token steps). Its price is registered for the bench: $1.00 per million
input tokens, $0.10 per million cached input tokens, $4.00 per million output tokens. A review of
60 cases (the example's seven, cycled) at concurrency 4:

  round 1             the original and a faithful candidate, fresh database
  round 2             another faithful candidate (the teacher's transcripts come from the cache)
  one added case      round 2's candidate on the set with a 61st case; and the same with the runner
                      key as it was before (it held the set's hash), for comparison
  failing round       a lossy candidate (every case regresses), without and with --fail-fast,
                      each from the database as round 2 left it

Figures are counts and prices, not times: the same on any machine.
Run: .venv/bin/python bench/bench_round_cost.py      Writes bench/results/round_cost.json.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODEL = "openai/priced-fake"
PRICE = {"input_cost_per_token": 1e-6, "cache_read_input_token_cost": 1e-7, "output_cost_per_token": 4e-6}
CASES, CONCURRENCY = 60, 4


def main() -> int:
    os.environ.setdefault("ABEQ_TRANSPORT", "fast")
    from abeq.documents import Document
    from abeq.execution import calls
    from abeq.execution.engine import Engine, RunConfig
    from abeq.execution.keys import legacy_runner_key
    from abeq.models import ModelSpec
    from abeq.models.pricing import register_price
    from abeq.results.reports.report import build_report, exit_code
    from abeq.results.store.store import Store
    from abeq.sets.confirmation import confirm
    from abeq.testing.loopback import LoopbackServer
    from abeq.testing.prompt_cache import PromptCache
    from abeq.testing.synthetic import documents, many_cases

    register_price(MODEL, PRICE)
    original, faithful, lossy = documents()
    faithful2 = Document("SKILL.round2.md", faithful.text.replace("\n## ", "\n\n## ", 1))
    ts60 = many_cases(CASES)
    extra = many_cases(CASES + 1).cases[-1]
    ts61 = confirm(ts60.model_copy(update={"cases": [*ts60.cases, extra]}), original.hash)
    work = Path(tempfile.mkdtemp(prefix="abeq-round-cost-"))
    rows: dict[str, dict] = {}

    with LoopbackServer(prompt_cache=PromptCache(min_tokens=1024, block=128)) as srv:
        spec = ModelSpec(MODEL, api_base=srv.url)

        def round_(label: str, db: Path, candidate, ts, fail_fast: bool = False) -> None:
            store = Store(str(db))
            cfg = RunConfig(runner=spec, judge=spec, concurrency=CONCURRENCY, fail_fast=fail_fast)
            before = srv.stats["requests"]
            run_id = Engine(store, original, candidate, ts, cfg).run()
            rr, st = build_report(store, run_id), store.log.call_stats(run_id)
            kinds = store.log.made_calls_by_kind(run_id)
            rows[label] = {
                "cases": len(ts.cases),
                "http_requests": srv.stats["requests"] - before,
                "calls": st["made"],
                "teacher_calls": kinds.get("runner-teacher", 0),
                "candidate_calls": kinds.get("runner-candidate", 0),
                "judge_calls": kinds.get("judge", 0),
                "from_abeq_cache": st["cached"],
                "prompt_tokens": st["prompt_tokens"],
                "cached_prompt_tokens": st["cache_read_tokens"],
                "completion_tokens": st["completion_tokens"],
                "cost_usd": round(st["cost"], 6),
                "cost_without_prompt_cache_usd": round(st["cost"] + st["cache_saved"], 6),
                "judged": len(rr.report["cases"]),
                "not_run": len(rr.not_run),
                "exit_code": exit_code(rr),
            }
            store.close()

        db = work / "review.db"
        round_("round 1", db, faithful, ts60)
        round_("round 2", db, faithful2, ts60)
        snapshot = work / "after-round-2.db"
        shutil.copy(db, snapshot)
        round_("one added case", db, faithful2, ts61)
        before = work / "before-v2.db"
        shutil.copy(snapshot, before)
        real = calls.runner_keys
        calls.runner_keys = lambda *a: (legacy_runner_key(*a),) * 2  # the key as it was: set hash in it
        try:
            # the previous rounds' rows as they were stored then, so only the added case changes the set
            old = work / "before-v2-rounds.db"
            round_("_v1 round 1", old, faithful, ts60)
            round_("_v1 round 2", old, faithful2, ts60)
            round_("one added case, set hash in the key (before)", old, faithful2, ts61)
        finally:
            calls.runner_keys = real
        for k in [k for k in rows if k.startswith("_v1")]:
            del rows[k]
        a, b = work / "fail.db", work / "fail-fast.db"
        shutil.copy(snapshot, a)
        shutil.copy(snapshot, b)
        round_("failing round", a, lossy, ts60)
        round_("failing round, --fail-fast", b, lossy, ts60, fail_fast=True)
    shutil.rmtree(work, ignore_errors=True)

    print(
        f"{'round':<46}{'calls':>6}{'T/C/J':>12}{'prompt':>9}{'cached':>9}{'compl.':>8}{'cost $':>10}"
        f"{'no-cache $':>11}"
    )
    for label, r in rows.items():
        tcj = f"{r['teacher_calls']}/{r['candidate_calls']}/{r['judge_calls']}"
        print(
            f"{label:<46}{r['calls']:>6}{tcj:>12}{r['prompt_tokens']:>9,}{r['cached_prompt_tokens']:>9,}"
            f"{r['completion_tokens']:>8,}{r['cost_usd']:>10.4f}{r['cost_without_prompt_cache_usd']:>11.4f}"
        )
    checks = {
        "one_added_case_one_teacher_call": rows["one added case"]["teacher_calls"] == 1,
        "round_2_no_teacher_calls": rows["round 2"]["teacher_calls"] == 0,
        "fail_fast_at_most_16_candidate_calls": rows["failing round, --fail-fast"]["candidate_calls"] <= 16,
        "fail_fast_exit_1": rows["failing round, --fail-fast"]["exit_code"] == 1,
    }
    out = {
        "bench": "round_cost",
        "model": MODEL,
        "price_per_million": {k: round(v * 1e6, 4) for k, v in PRICE.items()},
        "cases": CASES,
        "concurrency": CONCURRENCY,
        "rounds": rows,
        "checks": checks,
        "target_met": all(checks.values()),
    }
    path = ROOT / "bench" / "results" / "round_cost.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print("checks:", checks)
    return 0 if out["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
