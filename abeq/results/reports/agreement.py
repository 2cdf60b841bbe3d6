"""How far to trust the judge: agreement with reviewers (Cohen's κ), the A/A noise floor, and
agreement with the cases' checks (a second witness)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...models.baseline import BASELINE_JUDGES
from ...vocab import AGREE, JUDGED, VERDICTS
from ..store.store import Store

if TYPE_CHECKING:
    from .report import CaseRow

SMALL_N = 20
# κ from fewer actions than this swings by ±0.3 or more with one action: shown as "too few", not a number
MIN_KAPPA_N = 10


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


def judge_agreement(store: Store, run_id: int | None = None) -> list[dict]:
    """Per judge model: reviewed cases (agreed with or overridden), raw agreement and κ between the
    judge's verdict and the reviewer's; of one run's cases when `run_id` is given (a run's figures
    are that run's), else over every run.

    A reviewed case is one a reviewer acted on: **Agree** (the reviewer's verdict is the judge's) or
    an override (which may also keep the judge's verdict); the latest action per case counts.
    """
    latest: dict[tuple, dict] = {}
    for r in store.ledger.reviewed_pairs():
        if run_id is not None and r["run_id"] != run_id:
            continue
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
        judge, reviewer = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
        out.append(
            {
                "judge_model": model,
                "reviewed": n,
                "agreed": agreed[model],
                "overridden": n - agreed[model],
                "raw_agreement": round(sum(a == b for a, b in pairs) / n, 4),
                "kappa": cohen_kappa(pairs),
                "judge_verdicts": dict(judge),
                "reviewer_verdicts": dict(reviewer),
                "kappa_note": kappa_note(judge, reviewer),
                "note": f"only {n} reviewed case(s): too few to mean much" if n < SMALL_N else "",
            }
        )
    return out


def per_reviewer(rows: Sequence[CaseRow], assigned: Mapping[str, str]) -> list[dict]:
    """Per reviewer of one run (named in an assignment or in an action in effect), from the run's
    case rows and its assignments (case id -> reviewer): their cases assigned, reviewed by them,
    done by someone else, left (judged and nobody acted yet), waiting (no verdict yet: still
    running, or errored), and how their own actions in effect on their own cases agree with the
    judge (raw agreement, Cohen's κ as judge_agreement computes it, and why κ says nothing when one
    verdict fills a side). A reviewer's cases are those assigned to them and those assigned to
    nobody; an action on a teammate's case is counted apart (`elsewhere`), never in their figures."""
    by_case = {r.case_id: r for r in rows}
    acted: dict[str, list[tuple[str, str]]] = defaultdict(list)
    elsewhere: Counter = Counter()
    for r in rows:
        judged = r.review.get("judge_verdict") if r.review else None
        if not (r.review and judged in VERDICTS):
            continue
        who, owner = r.review["reviewer"], assigned.get(r.case_id)
        if owner is None or owner == who:
            acted[who].append((str(judged), r.review["verdict"]))
        else:
            elsewhere[who] += 1
    out = []
    for name in sorted(set(assigned.values()) | set(acted) | set(elsewhere)):
        mine = [by_case[c] for c, who in assigned.items() if who == name and c in by_case]
        by_me = sum(1 for r in mine if r.reviewed and r.review and r.review["reviewer"] == name)
        by_others = sum(1 for r in mine if r.reviewed) - by_me
        left = sum(1 for r in mine if r.status == JUDGED and not r.reviewed)
        pairs = acted.get(name, [])
        judge, reviewer = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
        out.append(
            {
                "reviewer": name,
                "assigned": len(mine),
                "reviewed": by_me,
                "by_others": by_others,
                "left": left,
                "waiting": len(mine) - by_me - by_others - left,
                "acted": len(pairs),
                "elsewhere": elsewhere[name],
                "raw_agreement": round(sum(a == b for a, b in pairs) / len(pairs), 4) if pairs else None,
                "kappa": cohen_kappa(pairs),
                "kappa_note": kappa_note(judge, reviewer) if pairs else "",
            }
        )
    return out


def kappa_text(kappa: float | None, note: str, n: int | None = None) -> str:
    """κ as the desk shows it: "too few (n)" from fewer than MIN_KAPPA_N actions (given `n`),
    'undefined' when it is, '(unstable)' when one verdict fills a side, '—' from nothing."""
    if n is not None and 0 < n < MIN_KAPPA_N:
        return f"too few ({n})"
    if kappa is None:
        return "undefined" if note else "—"
    return f"{kappa:.2f}" + (" (unstable)" if note else "")


def _tally(c: Counter) -> str:
    return ", ".join(f"{n} {v}" for v, n in c.most_common())


def kappa_note(judge: Counter, reviewer: Counter) -> str:
    """Why κ says nothing here ("" when it can): when the judge or the reviewers gave one verdict to
    every reviewed case, chance agreement is that verdict's share, so κ is undefined or sits at 0
    whatever the raw agreement; the counts say what happened instead."""
    if len(judge) > 1 and len(reviewer) > 1:
        return ""
    who = "the judge" if len(judge) == 1 else "the reviewers"
    return (
        f"κ is undefined or unstable: {who} gave every reviewed case one verdict, so chance alone "
        f"explains the agreement (judge: {_tally(judge)}; reviewers: {_tally(reviewer)})"
    )


def aa_rates(store: Store, run_id: int | None = None) -> list[dict]:
    """A/A false-regression rate per runner/judge model pair: the share of cases where the judge
    called the teacher's own replay regressed."""
    rows = store.ledger.aa_counts(run_id)
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
    for r in store.ledger.check_witness_counts():
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


def baseline_figures(store: Store, suite: str, prompt: str | None = None) -> list[dict]:
    """The trivial judges' latest calibration on a suite (abeq calibrate measures them beside every
    judge): the floor a judge's figures are read against."""
    out = []
    for name in BASELINE_JUDGES:
        row = store.calibrations.latest(name, prompt, suite) if prompt else None
        row = row or store.calibrations.latest(name, None, suite)
        if row is None:
            continue
        summary = json.loads(row["summary"] or "{}")
        out.append(
            {
                "judge_model": name,
                "balanced_accuracy": summary.get("balanced_accuracy"),
                "regression_recall": row["regression_recall"],
                "false_regression_rate": row["false_regression_rate"],
            }
        )
    return out


def baselines_text(baselines: list[dict]) -> str:
    """ "baselines: always-regressed 50%, length 55%, self-report 58% balanced accuracy" ("" for none)."""
    shown = [
        f"{b['judge_model'].split('/', 1)[1]} {b['balanced_accuracy']:.0%}"
        for b in baselines
        if b.get("balanced_accuracy") is not None
    ]
    return f"baselines on the same suite: {', '.join(shown)} balanced accuracy" if shown else ""


def judge_calibration(store: Store, judge_model: str) -> dict:
    """The latest calibration of a judge model (abeq calibrate) with the judge prompt in use now,
    else its latest with another prompt version (`current_prompt` False), else none: `calibrated`
    False, and `line` says so and how to measure it."""
    from ...prompts import load_prompt

    prompt = load_prompt("equivalence-judge").ref
    row = store.calibrations.latest(judge_model, prompt) or store.calibrations.latest(judge_model)
    if row is None:
        return {
            "judge_model": judge_model,
            "calibrated": False,
            "line": f"judge {judge_model} was never calibrated (abeq calibrate --judge-model {judge_model})",
        }
    n, k = row["regressions"], row["regressions_caught"]
    summary = json.loads(row["summary"] or "{}")
    ci = summary.get("regression_recall_ci95")  # Wilson 95%, None when n is 0
    ba, ba_ci = summary.get("balanced_accuracy"), summary.get("balanced_accuracy_ci95")
    older = "" if row["prompt"] == prompt else f", with an older judge prompt ({row['prompt']})"
    acc = "" if row["accuracy"] is None else f", accuracy {row['accuracy']:.0%}"
    recall = row["regression_recall"]
    ci_text = f", 95% CI {ci[0]:.0%}-{ci[1]:.0%}" if ci else ""
    interval = "" if recall is None else f" (recall {recall:.0%}{ci_text})"
    fr = row["false_regression_rate"]
    false_reg = "" if fr is None else f", false-regression rate {fr:.0%}"
    balanced = (
        ""
        if ba is None
        else f": balanced accuracy {ba:.0%}" + (f" (95% CI {ba_ci[0]:.0%}-{ba_ci[1]:.0%})" if ba_ci else "")
    )
    baselines = [
        b for b in baseline_figures(store, row["suite"], row["prompt"]) if b["judge_model"] != judge_model
    ]
    floor = baselines_text(baselines)
    pb = summary.get("position_bias") or {}
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
        "balanced_accuracy": ba,
        "balanced_accuracy_ci95": ba_ci,
        "specificity": summary.get("specificity"),
        "position_flip_rate": pb.get("flip_rate"),
        "baselines": baselines,
        "measured_at": row["created_at"],
        "line": f"judge {judge_model} on the calibration suite {row['suite']}{balanced}; caught {k}/{n} "
        f"regressions{interval}{acc}{false_reg}{older}" + (f" ({floor})" if floor else ""),
    }


def judge_minimum_warning(
    store: Store, judge_model: str, min_recall: float, asked: str = "--min-judge-recall"
) -> str | None:
    """What to say before a run whose judge fails the minimum asked for (or is unmeasured); `asked`
    names the setting as the user gave it (the CLI's flag, the desk's field).

    The minimum R bounds both errors: the judge must catch at least R of the suite's regressions
    AND call at most 1 - R of the pairs that lost nothing regressed. A judge that always says
    "regressed" has recall 1 and a false-regression rate of 1, so it never passes."""
    cal = judge_calibration(store, judge_model)
    if not cal["calibrated"]:
        return f"{cal['line']}: its regression recall is unknown ({asked} {min_recall:g})"
    recall, fr = cal["regression_recall"], cal["false_regression_rate"]
    why = []
    if recall is None or recall < min_recall:
        shown = "unknown" if recall is None else f"{recall:.0%}"
        why.append(f"recall {shown} is below {asked} {min_recall:g}")
    bound = round(1 - min_recall, 4)
    if fr is None or fr > bound:
        shown = "unknown" if fr is None else f"{fr:.0%}"
        why.append(f"false-regression rate {shown} is above {bound:g} (1 - {asked})")
    if why:
        return f"{cal['line']}: the judge fails its minimum: " + "; ".join(why)
    return None


def trust_lines(store: Store, run: Mapping[str, Any]) -> list[str]:
    """A run's judge, in a few lines: its calibration, the run's A/A rate, the run's agreement with
    its reviewers."""
    out = [judge_calibration(store, run["judge_model"])["line"]]
    out += [
        f"A/A false-regression rate {a['false_regression_rate']:.0%} of {a['cases']} cases"
        for a in aa_rates(store, run["id"])
    ]
    for a in judge_agreement(store, run["id"]):
        if a["judge_model"] == run["judge_model"]:
            k = "n/a" if a["kappa"] is None or a["kappa_note"] else kappa_text(a["kappa"], "", a["reviewed"])
            out.append(
                f"{a['reviewed']} reviewed case(s) of this run, Cohen's kappa {k}"
                + "".join(f" ({x})" for x in (a["kappa_note"], a["note"]) if x)
            )
    return out
