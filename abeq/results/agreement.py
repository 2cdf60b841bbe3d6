"""How far to trust the judge: agreement with reviewers (Cohen's κ), the A/A noise floor, and
agreement with the cases' checks (a second witness)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from ..vocab import AGREE, VERDICTS
from .store import Store

SMALL_N = 20


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """κ between two raters' labels; None when undefined (no pairs, or chance agreement is total)."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    ca, cb = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(ca[k] * cb[k] for k in set(ca) | set(cb)) / (n * n)
    if expected >= 1.0:
        return None
    return round((observed - expected) / (1 - expected), 4)


def judge_agreement(store: Store) -> list[dict]:
    """Per judge model: reviewed cases (agreed with or overridden), raw agreement and κ between the
    judge's verdict and the reviewer's.

    A reviewed case is one a reviewer acted on: **Agree** (the reviewer's verdict is the judge's) or
    an override (which may also keep the judge's verdict); the latest action per case counts.
    """
    latest: dict[tuple, dict] = {}
    for r in store.reviewed_pairs():
        latest[(r["run_id"], r["case_id"])] = r
    by_model: dict[str, list[tuple[str, str]]] = defaultdict(list)
    agreed: Counter = Counter()
    for r in latest.values():
        if r["judge_verdict"] in VERDICTS:
            by_model[r["judge_model"]].append((r["judge_verdict"], r["verdict"]))
            agreed[r["judge_model"]] += r["action"] == AGREE
    out = []
    for model, pairs in sorted(by_model.items()):
        n = len(pairs)
        out.append(
            {
                "judge_model": model,
                "reviewed": n,
                "agreed": agreed[model],
                "overridden": n - agreed[model],
                "raw_agreement": round(sum(a == b for a, b in pairs) / n, 4),
                "kappa": cohen_kappa(pairs),
                "note": f"only {n} reviewed case(s): too few to mean much" if n < SMALL_N else "",
            }
        )
    return out


def aa_rates(store: Store, run_id: int | None = None) -> list[dict]:
    """A/A false-regression rate per runner/judge model pair: the share of cases where the judge
    called the teacher's own replay regressed."""
    rows = store.aa_counts(run_id)
    return [
        {
            "runner_model": r["runner_model"],
            "judge_model": r["judge_model"],
            "cases": r["n"],
            "false_regression_rate": round(r["regressed"] / r["n"], 4),
            "noisy_cases": r["noisy"],
        }
        for r in rows
    ]


def check_witness(store: Store) -> list[dict]:
    """The checks as a second, independent witness: per judge model, the judged cases where a
    check the teacher passed failed on the candidate, and how often the judge itself called those
    regressed. Each disagreement is a case the judge would have let through."""
    out = []
    for r in store.check_witness_counts():
        n, agreed = r["n"], r["agreed"] or 0
        out.append(
            {
                "judge_model": r["judge_model"],
                "cases_with_lost_checks": n,
                "judge_also_regressed": agreed,
                "disagreements": n - agreed,
                "agreement": round(agreed / n, 4),
            }
        )
    return out


def judge_calibration(store: Store, judge_model: str) -> dict:
    """The latest calibration of a judge model (abeq calibrate) with the judge prompt in use now,
    else its latest with another prompt version (`current_prompt` False), else none: `calibrated`
    False, and `line` says so and how to measure it."""
    from ..prompts import load_prompt

    prompt = load_prompt("equivalence-judge").ref
    row = store.latest_calibration(judge_model, prompt) or store.latest_calibration(judge_model)
    if row is None:
        return {
            "judge_model": judge_model,
            "calibrated": False,
            "line": f"judge {judge_model} was never calibrated (abeq calibrate --judge-model {judge_model})",
        }
    n, k = row["regressions"], row["regressions_caught"]
    ci = json.loads(row["summary"] or "{}").get("regression_recall_ci95")  # Wilson 95%, None when n is 0
    older = "" if row["prompt"] == prompt else f", with an older judge prompt ({row['prompt']})"
    acc = "" if row["accuracy"] is None else f", accuracy {row['accuracy']:.0%}"
    recall = row["regression_recall"]
    ci_text = f", 95% CI {ci[0]:.0%}-{ci[1]:.0%}" if ci else ""
    interval = "" if recall is None else f" (recall {recall:.0%}{ci_text})"
    fr = row["false_regression_rate"]
    false_reg = "" if fr is None else f", false-regression rate {fr:.0%}"
    return {
        "judge_model": judge_model,
        "calibrated": True,
        "current_prompt": row["prompt"] == prompt,
        "suite": row["suite"],
        "prompt": row["prompt"],
        "regressions": n,
        "regressions_caught": k,
        "regression_recall": row["regression_recall"],
        "regression_recall_ci95": ci,
        "accuracy": row["accuracy"],
        "false_regression_rate": row["false_regression_rate"],
        "measured_at": row["created_at"],
        "line": f"judge {judge_model} caught {k}/{n} regressions on the calibration suite {row['suite']}"
        f"{interval}{acc}{false_reg}{older}",
    }


def recall_warning(
    store: Store, judge_model: str, min_recall: float, asked: str = "--min-judge-recall"
) -> str | None:
    """What to say before a run whose judge is below the regression recall asked for (or unmeasured);
    `asked` names the setting as the user gave it (the CLI's flag, the desk's field)."""
    cal = judge_calibration(store, judge_model)
    if not cal["calibrated"]:
        return f"{cal['line']}: its regression recall is unknown ({asked} {min_recall:g})"
    recall = cal["regression_recall"]
    if recall is None or recall < min_recall:
        shown = "unknown" if recall is None else f"{recall:.0%}"
        return f"{cal['line']}: recall {shown} is below {asked} {min_recall:g}"
    return None


def trust_lines(store: Store, run: Mapping[str, Any]) -> list[str]:
    """A run's judge, in a few lines: its calibration, the run's A/A rate, agreement with reviewers."""
    out = [judge_calibration(store, run["judge_model"])["line"]]
    out += [
        f"A/A false-regression rate {a['false_regression_rate']:.0%} of {a['cases']} cases"
        for a in aa_rates(store, run["id"])
    ]
    for a in judge_agreement(store):
        if a["judge_model"] == run["judge_model"]:
            k = "n/a" if a["kappa"] is None else f"{a['kappa']:.2f}"
            out.append(
                f"{a['reviewed']} reviewed case(s), Cohen's kappa {k}"
                + (f" ({a['note']})" if a["note"] else "")
            )
    return out
