"""What a mutation test of the bundled example costs, against a full run of it.

The bundled release-notes example (7 cases, 7 sections: 7 mutants) on the scripted model
(`scripted/rules`, in-process; it reports token counts as a provider would), at concurrency 1:

  full run                   the original and its faithful candidate, fresh database
  mutate after a run         `abeq mutate` on the database the run left (the teacher is cached)
  mutate, fresh database     the same from nothing (the original's transcripts are captured once)
  mutate --all-cases         every case on every mutant (the full map), after the run
  mutate again               the identical test repeated: read back, no model call

Figures are counts (calls, tokens), not times: the same on any machine.
Run: .venv/bin/python bench/bench_mutate.py      Writes bench/results/mutate.json.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODEL = "scripted/rules"


def main() -> int:
    from abeq import sets
    from abeq.api import run
    from abeq.documents import load_document
    from abeq.models import scripted
    from abeq.mutation.run import prepare_mutation
    from abeq.results.store.store import Store

    ex = ROOT / "abeq" / "examples" / "release-notes"
    original = load_document(ex / "SKILL.md")
    faithful = load_document(ex / "candidate-faithful.md")
    ts = sets.confirm(sets.load(ex / "transfer-set.json"), original.hash)
    work = Path(tempfile.mkdtemp(prefix="abeq-bench-mutate-"))
    rows: dict[str, dict] = {}

    def mutate(label: str, db: Path, concurrency: int = 1, **kw) -> None:
        store = Store(str(db))
        before = len(scripted.model("rules").history)
        prep = prepare_mutation(original, ts, runner_model=MODEL, store=store, concurrency=concurrency, **kw)
        est = prep.estimate()
        rep = prep.run().report
        # a test read back reports the calls it made when it ran; this one made none
        none = {"made": 0, "teacher_made": 0, "tokens": 0}
        calls = rep["calls"] if len(scripted.model("rules").history) > before else none
        rows[label] = {
            "model_calls": len(scripted.model("rules").history) - before,
            "calls": calls["made"],
            "teacher_calls": calls["teacher_made"],
            "tokens": calls["tokens"],
            "estimated_max_calls": est["max_calls"],
            "estimated_expected_calls": est["expected_calls"],
            # the estimate made before the first call: at most (every case), and as expected
            "estimated_max_tokens": est["est_tokens"],
            "estimated_expected_tokens": est["expected_tokens"],
            "mutants": rep["count"],
            "score": rep["score"],
        }
        store.close()

    db = work / "after-run.db"
    store = Store(str(db))
    before = len(scripted.model("rules").history)
    rr = run(original, faithful, ts, runner_model=MODEL, store=store, concurrency=1)
    st = store.log.call_stats(rr.run["id"])
    rows["full run"] = {
        "model_calls": len(scripted.model("rules").history) - before,
        "calls": st["made"],
        "teacher_calls": st["teacher_made"],
        "tokens": st["prompt_tokens"] + st["completion_tokens"],
    }
    store.close()
    mutate("mutate after a run", db)
    mutate("mutate again", db)
    mutate("mutate --all-cases, after a run", db, all_cases=True)
    mutate("mutate, fresh database", work / "fresh.db")
    # a kill cancels the mutant's cases in flight: concurrency 8 starts all 7 cases at once
    mutate("mutate, fresh database, concurrency 8", work / "fresh8.db", concurrency=8)
    mutate("mutate --all-cases, fresh database", work / "fresh-all.db", all_cases=True)

    full = rows["full run"]
    print(f"{'':<40}{'calls':>7}{'teacher':>9}{'tokens':>10}{'x run':>7}{'est. max':>10}{'est. exp.':>10}")
    for label, r in rows.items():
        est = f"{r.get('estimated_max_tokens', 0):>10,}{r.get('estimated_expected_tokens', 0):>10,}"
        print(
            f"{label:<40}{r['calls']:>7}{r['teacher_calls']:>9}{r['tokens']:>10,}"
            f"{r['tokens'] / max(1, full['tokens']):>7.2f}" + (est if "estimated_max_tokens" in r else "")
        )
    out = {
        "bench": "mutate",
        "model": MODEL,
        "cases": len(ts.cases),
        "concurrency": "1 (one row: 8)",
        "rows": rows,
        "checks": {
            "after_a_run_no_teacher_call": rows["mutate after a run"]["teacher_calls"] == 0,
            "repeat_no_model_call": rows["mutate again"]["model_calls"] == 0,
            # every case on every mutant: the estimate within 25% of the tokens used
            "all_cases_estimate_within_25pct": abs(
                rows["mutate --all-cases, fresh database"]["estimated_max_tokens"]
                / rows["mutate --all-cases, fresh database"]["tokens"]
                - 1
            )
            <= 0.25,
        },
    }
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "mutate.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0 if all(out["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
