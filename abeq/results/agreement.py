"""How far to trust the judge: agreement with reviewers (Cohen's κ), the A/A noise floor, and
agreement with the cases' checks (a second witness)."""

from __future__ import annotations

from collections import Counter, defaultdict

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
