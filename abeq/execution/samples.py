"""Many samples of each arm (`--runner-samples N`): how often each behaviour appears on each side,
and whether the candidate keeps one less often than the teacher beyond chance.

A behaviour is something each sample either shows or does not: the judge's "keeps the teacher's
behaviour" (a candidate sample judged against the teacher sample of the same seed, a teacher sample
judged against the next teacher sample: the teacher's own variation) and each check of the case.
For each, the counts (teacher k_t of N, candidate k_c of N) go to a one-sided Fisher exact test; a
loss is called only when p <= ALPHA. The decision is a function of the counts alone, so the same
counts always give the same verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
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


def least_samples(alpha: float = ALPHA) -> int:
    """The fewest samples a side at which a behaviour the teacher always shows and the candidate never
    does is called lost: below it no count can be decided."""
    n = 1
    while fisher_less(n, n, 0, n) > alpha:
        n += 1
    return n


@dataclass(frozen=True)
class Rate:
    """One behaviour's counts on each side, and the test's result."""

    behaviour: str
    teacher: int
    candidate: int
    n: int
    p: float

    @property
    def lost(self) -> bool:
        return self.candidate < self.teacher and self.p <= ALPHA

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
