"""What a calibration measures, from (pair, verdict) results: accuracy, regression recall with its
95% Wilson interval, the false-regression rate on equivalent pairs, per-category results, the
confusion table and the consistency of swapped pairs. Pure arithmetic: no model, no store."""

from __future__ import annotations

import math
from collections import Counter

from ..vocab import EQUIVALENT, REGRESSED, VERDICTS

Z95 = 1.959964


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of k successes in n trials (None when n is 0): unlike k/n ± z·se it
    stays inside [0, 1] and is honest at 0/n and n/n, which a small suite often gives."""
    if n <= 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


def _share(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def summarise(results: list[dict], swapped: list[dict] | None = None) -> dict:
    """The figures of one calibration. `results`: one dict per pair with `id`, `category`, `label`,
    `verdict` (None when the judge gave no valid reply: counted in `errors`, in no rate). `swapped`:
    the same for swapped pairs, each with the `id` of the pair it swaps."""
    judged = [r for r in results if r["verdict"]]
    correct = sum(r["verdict"] == r["label"] for r in judged)
    regressions = [r for r in judged if r["label"] == REGRESSED]
    caught = sum(r["verdict"] == REGRESSED for r in regressions)
    equivalents = [r for r in judged if r["label"] == EQUIVALENT]
    false_reg = sum(r["verdict"] == REGRESSED for r in equivalents)
    interval = wilson(caught, len(regressions))
    per_category = {}
    for cat in dict.fromkeys(r["category"] for r in results):
        rows = [r for r in judged if r["category"] == cat]
        ok = sum(r["verdict"] == r["label"] for r in rows)
        per_category[cat] = {
            "pairs": sum(r["category"] == cat for r in results),
            "judged": len(rows),
            "correct": ok,
            "accuracy": _share(ok, len(rows)),
            "verdicts": dict(Counter(r["verdict"] for r in rows)),
        }
    confusion = {
        label: {v: sum(1 for r in judged if r["label"] == label and r["verdict"] == v) for v in VERDICTS}
        for label in VERDICTS
    }
    out = {
        "pairs_total": len(results),
        "judged": len(judged),
        "errors": len(results) - len(judged),
        "correct": correct,
        "accuracy": _share(correct, len(judged)),
        "regressions": len(regressions),
        "regressions_caught": caught,
        "regression_recall": _share(caught, len(regressions)),
        "regression_recall_ci95": list(interval) if interval else None,
        "equivalent_pairs": len(equivalents),
        "false_regressions": false_reg,
        "false_regression_rate": _share(false_reg, len(equivalents)),
        "per_category": per_category,
        "confusion": confusion,
    }
    out["swapped"] = swap_consistency(results, swapped or [])
    return out


def swap_consistency(results: list[dict], swapped: list[dict]) -> dict:
    """Position and direction: a pair whose candidate adds a behaviour is diverged, and the same two
    runs swapped lose it, regressed. A judge is consistent on a pair when it gets both right."""
    forward = {r["id"]: r for r in results}
    both = [(forward[s["id"]], s) for s in swapped if s["id"] in forward and s["verdict"]]
    both = [(f, s) for f, s in both if f["verdict"]]
    ok = sum(f["verdict"] == f["label"] and s["verdict"] == s["label"] for f, s in both)
    return {
        "pairs": len(swapped),
        "judged": len(both),
        "consistent": ok,
        "consistency": _share(ok, len(both)),
        "swapped_correct": sum(s["verdict"] == s["label"] for _, s in both),
    }


def headline(summary: dict) -> str:
    """One line a person reads beside A/A and κ: how many regressions the judge caught."""
    n, k = summary.get("regressions") or 0, summary.get("regressions_caught") or 0
    if not n:
        return "no labelled regressions to measure recall on"
    ci = summary.get("regression_recall_ci95")
    rng = f" (95% CI {ci[0]:.0%}–{ci[1]:.0%})" if ci else ""
    acc = summary.get("accuracy")
    fr = summary.get("false_regression_rate")
    tail = "" if acc is None else f"; accuracy {acc:.0%}"
    tail += "" if fr is None else f", false regressions {fr:.0%} of equivalent pairs"
    return f"caught {k}/{n} regressions{rng}{tail}"
