"""How far to trust the judge: agreement with reviewers (Cohen's κ) and the A/A noise floor."""

from __future__ import annotations

from collections import Counter, defaultdict

from .schemas import VERDICTS
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
    """Per judge model: reviewed cases, raw agreement and κ, judge verdict vs the reviewer's verdict.

    A reviewed case is one with an override (a reviewer who agrees records the same verdict);
    the latest override per case counts.
    """
    rows = store.all("""select r.judge_model, o.run_id, o.case_id, o.judge_verdict, o.verdict
                        from overrides o join runs r on r.id = o.run_id order by o.id""")
    latest: dict[tuple, dict] = {}
    for r in rows:
        latest[(r["run_id"], r["case_id"])] = r
    by_model: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for r in latest.values():
        if r["judge_verdict"] in VERDICTS:
            by_model[r["judge_model"]].append((r["judge_verdict"], r["verdict"]))
    out = []
    for model, pairs in sorted(by_model.items()):
        n = len(pairs)
        out.append({"judge_model": model, "reviewed": n,
                    "raw_agreement": round(sum(a == b for a, b in pairs) / n, 4),
                    "kappa": cohen_kappa(pairs),
                    "note": f"only {n} reviewed case(s): too few to mean much" if n < SMALL_N else ""})
    return out


def aa_rates(store: Store, run_id: int | None = None) -> list[dict]:
    """A/A false-regression rate per runner/judge model pair: the share of cases where the judge
    called the teacher's own replay regressed."""
    where, params = ("and r.id = ?", [run_id]) if run_id else ("", [])
    # one measurement per teacher run and verdict: an identical re-run (all from the cache) repeats
    # the same A/A judgement and must not count it twice
    rows = store.all(f"""select runner_model, judge_model, count(*) n,
                                sum(case when aa_verdict = 'candidate-regressed' then 1 else 0 end) regressed,
                                sum(case when aa_verdict != 'equivalent' then 1 else 0 end) noisy
                         from (select distinct r.runner_model, r.judge_model, c.case_id, c.teacher_key, c.aa_verdict
                               from run_cases c join runs r on r.id = c.run_id
                               where c.aa_verdict is not null {where})
                         group by runner_model, judge_model""", params)
    return [{"runner_model": r["runner_model"], "judge_model": r["judge_model"], "cases": r["n"],
             "false_regression_rate": round(r["regressed"] / r["n"], 4), "noisy_cases": r["noisy"]} for r in rows]
