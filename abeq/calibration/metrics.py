"""What a calibration measures, from (pair, verdict) results: balanced accuracy with its 95%
interval, regression recall with its 95% Wilson interval, the false-regression rate on every pair that
lost nothing, accuracy, per-category results, the confusion table, the consistency of swapped pairs
and the position bias of pairs shown in the other order. Pure arithmetic: no model, no store."""

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


def balanced_interval(k1: int, n1: int, k2: int, n2: int, z: float = Z95) -> tuple[float, float] | None:
    """A 95% interval of balanced accuracy, the mean of two independent shares k1/n1 and k2/n2: the
    adjusted Wald interval (one success and one failure added to each share, as Agresti and Caffo do
    for a difference), which keeps its coverage at 0/n and n/n where a plain Wald interval collapses."""
    if n1 <= 0 or n2 <= 0:
        return None
    p1, p2 = (k1 + 1) / (n1 + 2), (k2 + 1) / (n2 + 2)
    centre = (p1 + p2) / 2
    half = z * math.sqrt(p1 * (1 - p1) / (n1 + 2) + p2 * (1 - p2) / (n2 + 2)) / 2
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


def summarise(results: list[dict], swapped: list[dict] | None = None) -> dict:
    """The figures of one calibration. `results`: one dict per pair with `id`, `category`, `label`,
    `verdict` (None when the judge gave no valid reply: counted in `errors`, in no rate), and
    `mirror_of` for a pair that is another shown in the other order. `swapped`: the same for
    swapped pairs, each with the `id` of the pair it swaps.

    The figure that decides is balanced accuracy: the mean of recall (regressed pairs called
    regressed) and specificity (every other pair not called regressed), so a judge that always
    answers "regressed" scores 0.5, not the 1.0 recall alone would give it."""
    judged = [r for r in results if r["verdict"]]
    correct = sum(r["verdict"] == r["label"] for r in judged)
    regressions = [r for r in judged if r["label"] == REGRESSED]
    caught = sum(r["verdict"] == REGRESSED for r in regressions)
    rest = [r for r in judged if r["label"] != REGRESSED]
    false_reg = sum(r["verdict"] == REGRESSED for r in rest)
    equivalents = [r for r in judged if r["label"] == EQUIVALENT]
    interval = wilson(caught, len(regressions))
    recall, specificity = _share(caught, len(regressions)), _share(len(rest) - false_reg, len(rest))
    balanced = None if recall is None or specificity is None else round((recall + specificity) / 2, 4)
    ba_ci = balanced_interval(caught, len(regressions), len(rest) - false_reg, len(rest))
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
        "balanced_accuracy": balanced,
        "balanced_accuracy_ci95": list(ba_ci) if ba_ci else None,
        "regressions": len(regressions),
        "regressions_caught": caught,
        "regression_recall": recall,
        "regression_recall_ci95": list(interval) if interval else None,
        "non_regressions": len(rest),
        "specificity": specificity,
        "false_regressions": false_reg,
        "false_regression_rate": _share(false_reg, len(rest)),
        "equivalent_pairs": len(equivalents),
        "equivalent_called_regressed": sum(r["verdict"] == REGRESSED for r in equivalents),
        "per_category": per_category,
        "confusion": confusion,
    }
    out["swapped"] = swap_consistency(results, swapped or [])
    out["position_bias"] = position_bias(results)
    return out


def position_bias(results: list[dict]) -> dict:
    """Presentation order: each pair with `mirror_of` is another pair with the candidate's block shown
    first. The same runs, the same label: a judge without position bias gives both one verdict."""
    by_id = {r["id"]: r for r in results}
    both = [(by_id[r["mirror_of"]], r) for r in results if r.get("mirror_of") in by_id]
    both = [(a, b) for a, b in both if a["verdict"] and b["verdict"]]
    flipped = sum(a["verdict"] != b["verdict"] for a, b in both)
    return {
        "pairs": sum(1 for r in results if r.get("mirror_of")),
        "judged": len(both),
        "flipped": flipped,
        "flip_rate": _share(flipped, len(both)),
    }


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
    """One line a person reads beside A/A and κ: balanced accuracy, then the two errors it averages."""
    n, k = summary.get("regressions") or 0, summary.get("regressions_caught") or 0
    if not n:
        return "no labelled regressions to measure recall on"
    parts = []
    ba, ba_ci = summary.get("balanced_accuracy"), summary.get("balanced_accuracy_ci95")
    if ba is not None:
        parts.append(
            f"balanced accuracy {ba:.0%}" + (f" (95% CI {ba_ci[0]:.0%}–{ba_ci[1]:.0%})" if ba_ci else "")
        )
    ci = summary.get("regression_recall_ci95")
    parts.append(f"caught {k}/{n} regressions" + (f" (recall 95% CI {ci[0]:.0%}–{ci[1]:.0%})" if ci else ""))
    fr, m = summary.get("false_regression_rate"), summary.get("non_regressions")
    if fr is not None:
        parts.append(f"false regressions {fr:.0%} of {m} pairs that lost nothing")
    return "; ".join(parts)
