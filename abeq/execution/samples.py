"""Many samples of each arm (`--runner-samples N`): how often each behaviour appears on each side,
and whether the candidate keeps one less often than the teacher beyond chance.

A behaviour is something each sample either shows or does not: each check of the case (run on every
sample pair), and the judge's "keeps the teacher's behaviour" (a candidate sample judged against the
teacher sample of the same seed, a teacher sample judged against the next teacher sample: the
teacher's own variation). For each, the counts (teacher
k_t of N, candidate k_c of N) go to a one-sided Fisher exact test, and the case's behaviours are
tested together with Holm's step-down correction, so the chance of calling any loss in a case where
there is none stays at most ALPHA. The decision is a function of the counts alone: the same counts
always give the same verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import comb

from ..vocab import DIVERGED, EQUIVALENT, REGRESSED, Verdict

ALPHA = 0.05  # the level of the one-sided test: a loss is called when p <= ALPHA
JUDGE_BEHAVIOUR = "keeps the teacher's behaviour (judge)"


def fisher_less(kt: int, nt: int, kc: int, nc: int) -> float:
    """One-sided Fisher exact p-value that the candidate's rate (kc of nc) is below the teacher's
    (kt of nt): the chance, with the margins fixed, of a candidate count this low or lower."""
    if not (0 <= kt <= nt and 0 <= kc <= nc) or nt + nc == 0:
        raise ValueError("counts out of range")
    shown = kt + kc
    total = comb(nt + nc, shown)
    lo = max(0, shown - nt)
    return sum(comb(nc, x) * comb(nt, shown - x) for x in range(lo, kc + 1)) / total


def least_samples(behaviours: int = 1, alpha: float = ALPHA) -> int:
    """The fewest samples a side at which a behaviour the teacher always shows and the candidate never
    does is called lost among `behaviours` tested together: below it no count can be decided."""
    n = 1
    while fisher_less(n, n, 0, n) > alpha / behaviours:
        n += 1
    return n


def behaviours_decidable(n: int, alpha: float = ALPHA) -> int:
    """How many behaviours a case may test together at N samples and still call one lost (the one the
    teacher always shows and the candidate never does)."""
    return int(alpha / fisher_less(n, n, 0, n))


@dataclass(frozen=True)
class Rate:
    """One behaviour's counts on each side, the test's p, and whether the case's family of tests
    (holm) calls it lost."""

    behaviour: str
    teacher: int
    candidate: int
    n: int
    p: float
    lost: bool = False

    @property
    def undecided(self) -> bool:
        """The candidate shows it less often, but not beyond chance at this N."""
        return self.candidate < self.teacher and not self.lost

    def text(self) -> str:
        return f"{self.behaviour}: teacher {self.teacher}/{self.n}, candidate {self.candidate}/{self.n}"

    def as_dict(self) -> dict:
        return {
            "behaviour": self.behaviour,
            "teacher": self.teacher,
            "candidate": self.candidate,
            "n": self.n,
            "p": round(self.p, 6),
            "lost": self.lost,
        }


def rate(behaviour: str, teacher: int, candidate: int, n: int) -> Rate:
    return Rate(behaviour, teacher, candidate, n, fisher_less(teacher, n, candidate, n))


def holm(rates: list[Rate], alpha: float = ALPHA) -> list[Rate]:
    """The rates with `lost` set by Holm's step-down procedure over the case's behaviours: the
    smallest p is held to alpha/m, the next to alpha/(m-1), …, stopping at the first that fails; only
    a lower candidate rate can be lost (the test is one-sided)."""
    m, lost = len(rates), set()
    for i, r in enumerate(sorted(range(m), key=lambda j: rates[j].p)):
        if rates[r].candidate >= rates[r].teacher or rates[r].p > alpha / (m - i):
            break
        lost.add(r)
    return [replace(r, lost=j in lost) for j, r in enumerate(rates)]


def decide(rates: list[Rate], pair_verdicts: list[Verdict]) -> tuple[Verdict, bool]:
    """(verdict, undecided) for a case from its behaviours' rates and the judge's verdict on each
    (teacher i, candidate i) pair: regressed only when a behaviour is lost beyond chance; otherwise
    equivalent when every pair was judged equivalent and no rate is lower, else diverged (the rates
    are shown either way). `undecided`: some rate is lower but N is too small to tell."""
    undecided = any(r.undecided for r in rates)
    if any(r.lost for r in rates):
        return REGRESSED, False
    if all(v == EQUIVALENT for v in pair_verdicts) and not undecided:
        return EQUIVALENT, False
    return DIVERGED, undecided


def judge_rate(teacher_pairs: list[Verdict], candidate_pairs: list[Verdict]) -> Rate:
    """The judge as a behaviour: samples not judged regressed, the teacher's against its next sample
    (its own variation) and the candidate's against the teacher's of the same seed."""
    n = len(candidate_pairs)
    kept_t = sum(v != REGRESSED for v in teacher_pairs)
    kept_c = sum(v != REGRESSED for v in candidate_pairs)
    return rate(JUDGE_BEHAVIOUR, kept_t, kept_c, n)


def summary_text(rates: list[dict], limit: int = 3) -> str:
    """The rates a reader needs beside the delta: the lost and lower ones first."""
    ordered = sorted(rates, key=lambda r: (not r["lost"], r["candidate"] - r["teacher"]))
    shown = [
        f"{r['behaviour']}: teacher {r['teacher']}/{r['n']}, candidate {r['candidate']}/{r['n']}"
        + (" (lost, p={:.3g})".format(r["p"]) if r["lost"] else "")
        for r in ordered[:limit]
    ]
    more = len(rates) - len(shown)
    return "; ".join(shown) + (f"; {more} more" if more > 0 else "")
