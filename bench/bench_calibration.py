"""The judge calibration suite on the judges reachable here, beside the cheap learners it was built
against: the trivial baselines (baseline/always-regressed, baseline/length, baseline/self-report),
the line-diff rule served as an OpenAI-compatible judge on a loopback server (loopback/line-diff:
a rule that reads no behaviour, through the same HTTP path a hosted judge takes), the scripted test
double and, when asked, the embedded model (SmolLM2-135M). Each judge gets the figures `abeq
calibrate` reports (balanced accuracy with its 95% interval, regression recall with its Wilson
interval, false-regression rate, accuracy, per category, swapped-pair consistency, position bias),
the verdict line, an exact McNemar test against every member of the learner family, the wall time,
and the calls a second calibration makes (none: the cache). The learners' figures are the ones
stored with the suite (fitted leave-one-scenario-out; tests/test_calibration.py refits and compares).
A capable model is not reachable from this machine: the command for one is in
docs/guides/calibration.md.

Run: .venv/bin/python bench/bench_calibration.py [--judges scripted/rules,loopback/line-diff,...]
       [--samples 1] [--per-category N] [--db PATH]
--per-category N measures the first N pairs of each category only (no swapped pairs): the embedded
model takes minutes per judge call on a loaded 2-core machine. --db keeps the judgements, so an
interrupted measurement resumes from the cache. Writes bench/results/calibration[_N_per_category].json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


def subset(per_category: int | None):
    from abeq.calibration.suite import load_suite

    suite = load_suite()
    if not per_category:
        return suite
    seen: dict[str, int] = {}
    keep = []
    for p in suite.pairs:
        if seen.get(p.category, 0) < per_category:
            seen[p.category] = seen.get(p.category, 0) + 1
            keep.append(p)
    ids = {p.id for p in keep}  # an order swap needs the pair it shows the other way round
    keep += [p for p in suite.pairs if p.id not in ids and any(k.mirror_of == p.id for k in keep)]
    return suite.model_copy(update={"name": f"{suite.name} ({per_category} per category)", "pairs": keep})


def measure(judge: str, samples: int, per_category: int | None, db: str | None) -> dict:
    if judge == "loopback/line-diff":
        from abeq.models import scripted
        from abeq.models.spec import ModelSpec
        from abeq.testing.loopback import LoopbackServer, line_diff_judge

        scripted.model("linediff").handler = line_diff_judge
        with LoopbackServer() as srv:
            spec = ModelSpec(name="openai/linediff", api_base=srv.url)
            return {**_measure(spec, samples, per_category, db), "judge": judge}
    return _measure(judge, samples, per_category, db)


def _measure(judge, samples: int, per_category: int | None, db: str | None) -> dict:
    from abeq import calibrate
    from abeq.calibration.metrics import trust_verdict
    from abeq.results.store.store import Store

    suite, swap = subset(per_category), not per_category
    t0 = time.perf_counter()

    def progress(r: dict) -> None:
        ok = "ok" if r["verdict"] == r["label"] else (r.get("error") or "miss")[:80]
        print(f"  {time.perf_counter() - t0:7.0f} s  {r['id']}: {r['verdict']} ({ok})", flush=True)

    # the embedded model is one llama.cpp thread: more calls at once only queue
    conc = 1 if str(getattr(judge, "name", judge)).startswith("local/") else 4
    with tempfile.TemporaryDirectory() as d:
        store = Store(db or str(Path(d) / "abeq.db"))
        t = time.perf_counter()
        cal = calibrate(
            judge, samples=samples, suite=suite, store=store, concurrency=conc, swap=swap, on_pair=progress,
            baselines=False,
        )  # fmt: skip
        wall = time.perf_counter() - t
        t = time.perf_counter()
        again = calibrate(judge, samples=samples, suite=suite, store=store, swap=swap, baselines=False)
        cached_wall = time.perf_counter() - t
        store.close()
    s = cal.summary
    family = suite.learners.members if suite.learners else []
    versus = {}
    for m in family:
        v = trust_verdict(cal.pairs, s, m.model_dump())
        versus[m.name] = {k: v[k] for k in ("judge_only_right", "learner_only_right", "p", "trusted")}
    return {
        "judge": str(getattr(judge, "name", judge)),
        "judge_prompt": cal.judge_prompt,
        "suite": suite.name,
        "samples": samples,
        "pairs": s["pairs_total"],
        "errors": s["errors"],
        "balanced_accuracy": s["balanced_accuracy"],
        "balanced_accuracy_ci95": s["balanced_accuracy_ci95"],
        "accuracy": s["accuracy"],
        "regressions": s["regressions"],
        "regressions_caught": s["regressions_caught"],
        "regression_recall": s["regression_recall"],
        "regression_recall_ci95": s["regression_recall_ci95"],
        "false_regression_rate": s["false_regression_rate"],
        "non_regressions": s["non_regressions"],
        "position_bias": s["position_bias"],
        "per_category": {k: v["accuracy"] for k, v in s["per_category"].items()},
        "verdicts": {p["id"]: p["verdict"] for p in cal.pairs},
        "swapped_consistency": s["swapped"]["consistency"],
        "headline": cal.headline,
        "verdict": cal.verdict_line,
        "versus_learners": versus,
        "calls_made": cal.calls["made"],
        "second_run_calls_made": again.calls["made"],
        "wall_s": round(wall, 1),
        "second_run_wall_s": round(cached_wall, 2),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--judges",
        default="baseline/always-regressed,baseline/length,baseline/self-report,loopback/line-diff,scripted/rules",
        help="comma-separated; add local/smollm2 for the embedded model (minutes a call on 2 cores)",
    )
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("--per-category", type=int, default=None)
    ap.add_argument("--db", default=None)
    a = ap.parse_args(argv)
    from abeq.calibration.suite import load_suite

    results = []
    for judge in a.judges.split(","):
        print(f"{judge}:", flush=True)
        r = measure(judge, a.samples, a.per_category, a.db)
        print(f"{judge}: {r['headline']} · swapped consistency {r['swapped_consistency']} · {r['wall_s']} s")
        print(f"  {r['verdict']}")
        results.append(r)
    stored = load_suite().learners
    learners = [m.model_dump(exclude={"called_regressed"}) for m in stored.members] if stored else []
    print(f"{'':<30} {'balanced':>9} {'95% CI':>13} {'recall':>7} {'false reg.':>10}")
    rows = [(r["judge"], r) for r in results] + [(f"learner: {m['name']}", m) for m in learners]
    for name, f in rows:
        lo, hi = f["balanced_accuracy_ci95"]
        fr = f["false_regression_rate"]
        print(
            f"{name:<30} {f['balanced_accuracy']:>9.1%} {lo:>6.1%}-{hi:<6.1%} {f['regression_recall']:>7.1%} "
            f"{fr:>10.1%}"
        )
    name = f"calibration_{a.per_category}_per_category" if a.per_category else "calibration"
    out = ROOT / "bench" / "results" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "bench": name,
        "load_1min": round(os.getloadavg()[0], 2),
        "results": results,
        "learners": {
            "fitted": stored.fitted if stored else "",
            "pool": stored.pool if stored else 0,
            "members": learners,
        },
    }
    out.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
