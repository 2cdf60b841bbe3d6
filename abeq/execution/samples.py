"""Many samples of each arm (`--runner-samples N`): how often each behaviour appears on each side,
and whether the candidate keeps one less often than the teacher beyond chance.

A behaviour is something each sample either shows or does not: each check of the case (run on every
sample pair), and the judge's "keeps the teacher's behaviour" (a candidate sample judged against the
teacher sample of the same seed, a teacher sample judged against the next teacher sample: the
teacher's own variation). For each, the counts (teacher k_t of N, candidate k_c of N) go to a
one-sided Fisher exact test, and the case's behaviours are tested together with Holm's step-down
correction, so the chance of calling any loss in a case where there is none stays at most ALPHA.
Tarone's refinement leaves out of the correction's m the behaviours whose counts could not reach
the level whatever their split (a check both sides always pass): they can never be called lost, so
they cost the others nothing.

"Equivalent" is decided the same way, on the judge's verdicts: the candidate's pairs judged
equivalent against the teacher's own pairs judged equivalent (how often the original agrees with
itself), one-sided at ALPHA. A candidate is diverged only when its pairs agree less often beyond
chance; a noisy judge is noisy on both sides and cancels out. `undecided` marks a case where more
samples could change the decision: a lower rate not called lost whose counts cannot yet rule out a
material loss (the teacher's rate halved, at 95%). The decision is a function of the counts alone:
the same counts always give the same verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import comb, sqrt

from ..vocab import DIVERGED, EQUIVALENT, REGRESSED, Verdict

ALPHA = 0.05  # the level of the one-sided test: a loss is called when p <= ALPHA
JUDGE_BEHAVIOUR = "keeps the teacher's behaviour (judge)"
SAME_BEHAVIOUR = "judged equivalent (judge)"
MATERIAL = 0.5  # a loss worth more samples: the candidate keeps a behaviour half as often as the teacher
Z95 = 1.6449  # one-sided 95%


def fisher_less(kt: int, nt: int, kc: int, nc: int) -> float:
    """One-sided Fisher exact p-value that the candidate's rate (kc of nc) is below the teacher's
    (kt of nt): the chance, with the margins fixed, of a candidate count this low or lower."""
    if not (0 <= kt <= nt and 0 <= kc <= nc) or nt + nc == 0:
        raise ValueError("counts out of range")
    shown = kt + kc
    total = comb(nt + nc, shown)
    lo = max(0, shown - nt)
    return sum(comb(nc, x) * comb(nt, shown - x) for x in range(lo, kc + 1)) / total


def least_p(kt: int, kc: int, n: int) -> float:
    """The smallest p the one-sided test can give with these margins (kt + kc samples show the
    behaviour in all): every one of them on the teacher's side. Above the level, no split of the same
    total could be called lost (Tarone)."""
    shown = kt + kc
    top = min(shown, n)
    return fisher_less(top, n, shown - top, n)


def tarone_m(least: list[float], alpha: float = ALPHA) -> int:
    """Tarone's m for a family whose tests' smallest attainable p are `least`: the smallest k with at
    most k of them able to reach alpha / k. Behaviours that cannot reach it are left out of m."""
    k = 1
    while sum(lp <= alpha / k for lp in least) > k:
        k += 1
    return k


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of k of n (one-sided 95% bounds at the default z)."""
    if n == 0:
        return 0.0, 1.0
    p, z2 = k / n, z * z
    mid = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, mid - half), min(1.0, mid + half)


def deficit_upper(kt: int, kc: int, n: int) -> float:
    """The upper 95% bound of the teacher's rate minus the candidate's (Newcombe's hybrid score
    interval): how large a loss these counts cannot yet rule out."""
    pt, pc = kt / n, kc / n
    ut, lc = wilson(kt, n)[1], wilson(kc, n)[0]
    return pt - pc + sqrt((ut - pt) ** 2 + (pc - lc) ** 2)


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
    def testable(self) -> bool:
        """Some split of these counts could be called lost at the level (else it is out of m)."""
        return least_p(self.teacher, self.candidate, self.n) <= ALPHA

    @property
    def undecided(self) -> bool:
        """The candidate shows it less often, not beyond chance at this N, and the counts cannot yet
        rule out a material loss (the teacher's rate halved): more samples could call it lost."""
        if self.lost or self.candidate >= self.teacher:
            return False
        return deficit_upper(self.teacher, self.candidate, self.n) >= MATERIAL * self.teacher / self.n

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
            "testable": self.testable,
        }


def rate(behaviour: str, teacher: int, candidate: int, n: int) -> Rate:
    return Rate(behaviour, teacher, candidate, n, fisher_less(teacher, n, candidate, n))


def holm(rates: list[Rate], alpha: float = ALPHA) -> list[Rate]:
    """The rates with `lost` set by Holm's step-down procedure over the case's behaviours, with
    Tarone's m: the smallest p is held to alpha/m, where m counts only the behaviours whose counts
    could still reach that level, then again over those left, stopping at the first that fails; only a
    lower candidate rate can be lost (the test is one-sided). A behaviour no split could call lost (a
    check both sides always pass) changes nothing."""
    left, lost = list(range(len(rates))), set()
    while left:
        m = tarone_m([least_p(rates[j].teacher, rates[j].candidate, rates[j].n) for j in left], alpha)
        r = min(left, key=lambda j: rates[j].p)
        if rates[r].candidate >= rates[r].teacher or rates[r].p > alpha / m:
            break
        lost.add(r)
        left.remove(r)
    return [replace(r, lost=j in lost) for j, r in enumerate(rates)]


def same_rate(teacher_pairs: list[Verdict], candidate_pairs: list[Verdict]) -> Rate:
    """How often the judge called a pair equivalent: the teacher's own pairs (its variation) against
    the candidate's; `lost` when the candidate's is lower beyond chance (one-sided, at ALPHA)."""
    n = len(candidate_pairs)
    kt = sum(v == EQUIVALENT for v in teacher_pairs)
    kc = sum(v == EQUIVALENT for v in candidate_pairs)
    r = rate(SAME_BEHAVIOUR, kt, kc, n)
    return replace(r, lost=kc < kt and r.p <= ALPHA)


def decide(rates: list[Rate], same: Rate) -> tuple[Verdict, bool]:
    """(verdict, undecided) for a case from its behaviours' rates (`holm` applied) and its judged-
    equivalent rate (`same_rate`): regressed when a behaviour is lost beyond chance; diverged when the
    candidate's pairs are judged equivalent less often than the teacher's own, beyond chance; else
    equivalent. `undecided`: not regressed, and some lower rate could still be a material loss, so
    more samples could change the verdict."""
    if any(r.lost for r in rates):
        return REGRESSED, False
    undecided = any(r.undecided for r in rates)
    return (DIVERGED if same.lost else EQUIVALENT), undecided


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
