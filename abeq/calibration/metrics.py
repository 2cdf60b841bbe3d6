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


def mcnemar_exact(b: int, c: int) -> float:
    """The two-sided exact McNemar p of a paired comparison: `b` pairs only the first got right, `c`
    only the second, tested against a fair coin (the pairs both or neither got right say nothing)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def trust_verdict(results: list[dict], summary: dict, best: dict | None) -> dict:
    """Trusted for gating or not: the judge against the best cheap learner on the same pairs.

    `best`: the learner's name, balanced_accuracy and called_regressed (pair ids); None when the
    suite has no learner figures. Each pair is right or wrong as regressed-or-not; trusted needs the
    judge's balanced accuracy above the learner's, more pairs only the judge got right than only the
    learner, and an exact McNemar p below 0.05. `gate_up_to`: the highest --min-judge-recall the
    judge passes (recall at least R and false regressions at most 1 - R)."""
    recall, fr = summary.get("regression_recall"), summary.get("false_regression_rate")
    up_to = None if recall is None or fr is None else round(max(0.0, min(recall, 1 - fr)), 4)
    out: dict = {"trusted": None, "gate_up_to": up_to, "learner": None, "p": None}
    if best is None:
        return out
    called = set(best["called_regressed"])
    judged = [r for r in results if r["verdict"]]
    judge_right = [(r["verdict"] == REGRESSED) == (r["label"] == REGRESSED) for r in judged]
    learner_right = [(r["id"] in called) == (r["label"] == REGRESSED) for r in judged]
    b = sum(j and not le for j, le in zip(judge_right, learner_right, strict=True))
    c = sum(le and not j for j, le in zip(judge_right, learner_right, strict=True))
    p = mcnemar_exact(b, c)
    ba = summary.get("balanced_accuracy")
    trusted = ba is not None and ba > best["balanced_accuracy"] and b > c and p < 0.05
    return {
        **out,
        "trusted": trusted,
        "learner": best["name"],
        "learner_balanced_accuracy": best["balanced_accuracy"],
        "judge_only_right": b,
        "learner_only_right": c,
        "p": round(p, 4),
    }


def verdict_line(v: dict, summary: dict) -> str:
    """The one line `abeq calibrate` ends with."""
    ba = summary.get("balanced_accuracy")
    up_to = v.get("gate_up_to")
    if up_to is None:
        gate = "--min-judge-recall cannot place it (no recall measured)"
    elif up_to <= 0:
        gate = "--min-judge-recall refuses it at any minimum"
    else:
        gate = f"--min-judge-recall accepts it at any minimum up to {up_to:.2f}"
    if v.get("trusted") is None:
        return f"verdict: no cheap-learner figures stored with this suite, so no verdict on trust; {gate}"
    p = v["p"]
    shown = "p<0.001" if p < 0.001 else f"p={p:.3f}"
    head = "trusted for gating" if v["trusted"] else "NOT trusted for gating"
    judge = "n/a" if ba is None else f"{ba:.0%}"
    if not v["trusted"] and up_to and up_to > 0:
        gate += ", though a rule that reads no behaviour does as well"
    return (
        f"verdict: {head}: balanced accuracy {judge} against the best cheap learner's "
        f"{v['learner_balanced_accuracy']:.0%} ({v['learner']}), exact McNemar {shown} (only the judge right "
        f"on {v['judge_only_right']} pairs, only the learner on {v['learner_only_right']}); {gate}"
    )
