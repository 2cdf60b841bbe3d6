"""`calibrate`: the judge on every pair of a suite (and on the pairs labelled for swapping, swapped),
each sample cached in the store's judgements like any judge call, then the figures of metrics.py,
stored per judge model and judge-prompt version.

    from abeq import calibrate
    cal = calibrate("openai/gpt-4o-mini", samples=3)
    cal.summary["balanced_accuracy"], cal.summary["regression_recall"], cal.headline
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ModelCallError
from ..execution.judge import judge_pair, judge_prompt, judgement_row, majority
from ..execution.keys import cache_key, judge_key, judge_spec
from ..models.baseline import BASELINE_JUDGES
from ..models.call import CallPolicy
from ..models.spec import ModelSpec
from ..results.store.rows import JudgementRow
from ..results.store.store import Store, open_store
from ..schemas import Case, ObservedRun
from .metrics import headline, summarise, trust_verdict, verdict_line
from .suite import CalibrationRun, Pair, Suite, load_suite

SuiteLike = Suite | str | Path | None


def run_key(run: CalibrationRun) -> str:
    """A run's stand-in for a runner cache key: the hash of what the judge reads of it."""
    return cache_key("calibration-run", run.model_dump(mode="json", exclude_defaults=True))


def _observed(run: CalibrationRun) -> ObservedRun:
    return ObservedRun(
        transcript=run.transcript, self_report=run.self_report, workspace_changes=run.workspace_changes
    )


@dataclass
class Calibration:
    """One judge measured on one suite: per-pair results, the figures, and what it cost in calls."""

    judge_model: str
    judge_prompt: str
    suite: str
    samples: int
    pairs: list[dict]
    swapped: list[dict]
    summary: dict
    calls: dict = field(default_factory=lambda: {"made": 0, "cached": 0, "failed": 0})
    id: int | None = None  # its row in the store
    baselines: list[dict] = field(default_factory=list)  # the trivial judges on the same suite
    learners: list[dict] = field(default_factory=list)  # the suite's cheap learners (stored with it)
    verdict: dict = field(default_factory=dict)  # trusted for gating or not (metrics.trust_verdict)

    @property
    def verdict_line(self) -> str:
        return verdict_line(self.verdict, self.summary)

    @property
    def headline(self) -> str:
        return headline(self.summary)

    def to_json(self) -> dict:
        """What `abeq calibrate --out` writes."""
        return {
            "judge_model": self.judge_model,
            "judge_prompt": self.judge_prompt,
            "suite": self.suite,
            "judge_samples": self.samples,
            **self.summary,
            "headline": self.headline,
            "calls": self.calls,
            "baselines": self.baselines,
            "learners": self.learners,
            "verdict": {**self.verdict, "line": self.verdict_line},
            "pairs": self.pairs,
            "swapped_pairs": self.swapped,
        }


class _Judge:
    """The judge's samples on one pair of runs, each read from the cache or made and stored."""

    def __init__(self, store: Store, spec: ModelSpec, samples: int, policy: CallPolicy, fresh: bool):
        self.store, self.spec, self.samples, self.policy, self.fresh = store, spec, samples, policy, fresh
        self.calls = {"made": 0, "cached": 0, "failed": 0}

    async def sample(
        self,
        case: Case,
        okey: str,
        o: ObservedRun,
        ckey: str,
        c: ObservedRun,
        s: int,
        truncated: bool,
        candidate_first: bool = False,
    ) -> JudgementRow:
        spec = judge_spec(self.spec, s, self.samples)
        key = judge_key(okey, ckey, spec, s, truncated, candidate_first)
        cached = None if self.fresh else self.store.cache.judgement(key)
        if cached:
            self.calls["cached"] += 1
            return cached
        try:
            out = await judge_pair(case, o, c, spec, self.policy, truncated, candidate_first)
        except ModelCallError:
            self.calls["failed"] += 1
            raise
        row = judgement_row(key, spec, s, out)
        self.store.cache.put_judgement(row)
        self.calls["made"] += 1
        return row

    async def pair(self, p: Pair, swapped: bool = False) -> dict:
        t, c = (p.candidate, p.teacher) if swapped else (p.teacher, p.candidate)
        tk = p.teacher_key or run_key(p.teacher)
        ck = p.candidate_key or run_key(p.candidate)
        okey, ckey = (ck, tk) if swapped else (tk, ck)
        case = Case(id=p.id, type="happy", input=p.case_input)
        label = p.swap_label if swapped else p.label
        out: dict = {"id": p.id, "category": p.category, "label": label, "verdict": None, "source": p.source}
        if p.mirror_of and not swapped:
            out["mirror_of"] = p.mirror_of
        first = p.candidate_first and not swapped
        try:
            rows = await asyncio.gather(
                *(
                    self.sample(case, okey, _observed(t), ckey, _observed(c), s, p.truncated, first)
                    for s in range(self.samples)
                )
            )
        except ModelCallError as e:
            out["error"] = e.message[:300]
            return out
        verdict, agreement = majority([r["verdict"] for r in rows])
        out.update(
            verdict=verdict,
            agreement=agreement,
            samples=[r["verdict"] for r in rows],
            behaviour_delta=next((r["behaviour_delta"] for r in rows if r["verdict"] == verdict), ""),
        )
        return out


async def measure(
    suite: Suite,
    spec: ModelSpec,
    store: Store,
    *,
    samples: int = 1,
    concurrency: int = 4,
    swap: bool = True,
    fresh: bool = False,
    max_retries: int = 4,
    on_pair: Callable[[dict], None] | None = None,
) -> Calibration:
    """Judge every pair (and each pair with a swap label, swapped); nothing is stored but the
    judgements, which the cache keeps (see `calibrate` for the stored calibration)."""
    policy = CallPolicy(max_retries=max_retries, semaphore=asyncio.Semaphore(max(1, concurrency)))
    judge = _Judge(store, spec, max(1, samples), policy, fresh)

    async def one(p: Pair, swapped: bool) -> dict:
        r = await judge.pair(p, swapped)
        if on_pair:
            on_pair({**r, "swapped": swapped})
        return r

    forward = [one(p, False) for p in suite.pairs]
    backward = [one(p, True) for p in suite.pairs if swap and p.swap_label]
    done = await asyncio.gather(*forward, *backward)
    pairs, swapped = done[: len(forward)], done[len(forward) :]
    return Calibration(
        judge_model=spec.name,
        judge_prompt=judge_prompt().ref,
        suite=suite.name,
        samples=max(1, samples),
        pairs=list(pairs),
        swapped=list(swapped),
        summary=summarise(list(pairs), list(swapped)),
        calls=judge.calls,
    )


def suite_hash(suite: Suite) -> str:
    return hashlib.sha256(suite.model_dump_json().encode()).hexdigest()[:16]


def calibrate(
    judge: ModelSpec | str | None = None,
    *,
    samples: int = 1,
    suite: SuiteLike = None,
    store: Store | str | None = None,
    api_base: str | None = None,
    concurrency: int = 4,
    swap: bool = True,
    fresh: bool = False,
    from_reviews: bool = False,
    review: str | None = None,
    on_pair: Callable[[dict], None] | None = None,
    baselines: bool = True,
) -> Calibration:
    """Measure a judge model on a labelled suite and store the result under the judge model and the
    judge prompt's version. Judge calls are cached like a run's: a second calibration of the same
    judge on the same suite makes no model call.

    `suite`: a Suite or a folder (default: the built-in suite). `from_reviews`: the suite is the
    store's reviewed cases (of one `review` when named), labelled with the reviewers' verdicts; the
    judge then defaults to the one those runs used. `baselines`: also measure (and store) the
    trivial judges of abeq.models.baseline on the same suite, the floor the judge's figures are read
    against (in process, no model; ~4 s of CPU for the three on the built-in suite, once per process:
    a later calibration on the same suite and judge prompt reuses them)."""
    from .reviews import current_judge, suite_from_reviews

    db = store if isinstance(store, Store) else open_store(store)
    s = (
        suite_from_reviews(db, review)
        if from_reviews
        else suite
        if isinstance(suite, Suite)
        else load_suite(suite)
    )
    if judge is None and from_reviews:
        judge = current_judge(db, review)
    spec = judge if isinstance(judge, ModelSpec) else ModelSpec.for_purpose(judge, "run", api_base=api_base)
    cal = asyncio.run(
        measure(
            s, spec, db, samples=samples, concurrency=concurrency, swap=swap, fresh=fresh, on_pair=on_pair
        )
    )
    if s.learners is not None:
        cal.learners = [m.model_dump(exclude={"called_regressed"}) for m in s.learners.members]
    best = s.learners.best().model_dump() if s.learners is not None else None
    cal.verdict = trust_verdict(cal.pairs, cal.summary, best)
    cal.id = _store(db, s, cal)
    if baselines:
        for name in BASELINE_JUDGES:
            if name == spec.name:
                continue
            base = _baseline(name, s, db, swap)
            _store(db, s, base)
            cal.baselines.append(
                {
                    "judge_model": name,
                    **{k: base.summary[k] for k in BASELINE_FIGURES},
                    "headline": base.headline,
                }
            )
    return cal


# A baseline's calibration on a suite, once per process: the trivial judges answer from the pair alone,
# so the same suite, judge prompt and swap give the same figures (a desk or a test process calibrates
# several judges; the three cost ~4.4 s of CPU through the judge path on the built-in suite, against
# ~1.5 s for calibrating the scripted judge itself, 2026-12-07)
_BASELINES: dict[tuple[str, str, str, bool], Calibration] = {}


def _baseline(name: str, s: Suite, db: Store, swap: bool) -> Calibration:
    key = (name, suite_hash(s), judge_prompt().ref, swap)
    if key not in _BASELINES:
        _BASELINES[key] = asyncio.run(
            measure(s, ModelSpec.for_purpose(name, "run"), db, concurrency=8, swap=swap)
        )
    return _BASELINES[key]


BASELINE_FIGURES = (
    "balanced_accuracy",
    "balanced_accuracy_ci95",
    "regression_recall",
    "false_regression_rate",
    "accuracy",
)


def _store(db: Store, s: Suite, cal: Calibration) -> int:
    return db.calibrations.put(
        {
            "judge_model": cal.judge_model,
            "prompt": cal.judge_prompt,
            "suite": s.name,
            "suite_hash": suite_hash(s),
            "samples": cal.samples,
            "pairs": cal.summary["pairs_total"],
            "accuracy": cal.summary["accuracy"],
            "regressions": cal.summary["regressions"],
            "regressions_caught": cal.summary["regressions_caught"],
            "regression_recall": cal.summary["regression_recall"],
            "false_regression_rate": cal.summary["false_regression_rate"],
            "summary": json.dumps({k: v for k, v in cal.to_json().items() if k != "swapped_pairs"}),
        }
    )
