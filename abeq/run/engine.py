"""The run engine: for each case, teacher and candidate runs in parallel, then the judge.

Every result is written to sqlite as it lands, keyed by everything that changes it, so a run that
is interrupted resumes by running it again, and round 2 re-runs only the candidate.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ..documents import Document
from ..errors import ModelCallError
from ..models.call import CallPolicy
from ..models.http import close_sessions, open_session
from ..models.spec import ModelSpec
from ..results.report import build_report
from ..results.store import Store, dumps
from ..schemas import Case, TransferSet
from ..sets.confirm import set_hash
from ..sets.coverage import require_runnable
from ..timestamps import now
from .calls import CachedCalls, Cancelled
from .judge import judge_prompt, majority
from .keys import cache_key
from .preflight import confirmation_refusal, review_refusal
from .runner import gate_state, runner_prompt

AA_SAMPLE = 1  # the teacher replay of an A/A check is sample 1 of the original (sample 0 is cached)


@dataclass
class RunConfig:
    runner: ModelSpec = field(default_factory=ModelSpec)
    judge: ModelSpec = field(default_factory=ModelSpec)
    variant: str = "skill"
    concurrency: int = 8
    fresh: bool = False
    judge_samples: int = 1
    aa: bool = False
    allow_thin: bool = False
    review: str | None = None
    max_retries: int = 4
    backoff_base: float = 0.5  # seconds before the first retry; doubled per retry, with jitter

    def key_parts(self) -> dict:
        return {
            "runner": self.runner.sampling(),
            "judge": self.judge.sampling(),
            "variant": self.variant,
            "judge_samples": self.judge_samples,
            "aa": self.aa,
            "prompts": [runner_prompt(self.variant).ref, judge_prompt().ref],
        }


@dataclass
class Progress:
    total: int
    done: int = 0
    errors: int = 0
    cached: int = 0
    calls: int = 0
    started: float = field(default_factory=time.time)

    def as_dict(self) -> dict:
        return {**asdict(self), "elapsed": round(time.time() - self.started, 2)}


class Engine(CachedCalls):
    def __init__(
        self,
        store: Store,
        original: Document,
        candidate: Document,
        ts: TransferSet,
        config: RunConfig,
        on_progress: Callable[[dict], None] | None = None,
        cancel: threading.Event | None = None,
    ):
        self.store, self.original, self.candidate, self.ts, self.cfg = store, original, candidate, ts, config
        self.ts_hash = set_hash(ts)
        self.on_progress = on_progress
        self.cancel = cancel or threading.Event()
        self.progress = Progress(total=len(ts.cases))
        self.run_id = 0

    # -------------------------------------------------------- setup
    def prepare(self) -> int:
        """Check the gates that come before any model call, store inputs, create or resume the run."""
        refused = confirmation_refusal(self.ts, self.original.hash) or review_refusal(
            self.store, self.cfg.review, original_hash=self.original.hash, ts_hash=self.ts_hash
        )
        if refused:
            raise refused
        cov = require_runnable(self.original.text, self.ts, self.cfg.allow_thin)
        s = self.store
        oh = s.put_document(self.original.name, self.original.text)
        ch = s.put_document(self.candidate.name, self.candidate.text)
        s.put_transfer_set(self.ts)
        review_id, rnd = None, None
        if self.cfg.review:
            review_id = s.upsert_review(self.cfg.review, oh, self.ts_hash, self.cfg.variant)
            prior = [r for r in s.runs(review_id) if r["candidate_hash"] != ch]
            same = [r for r in s.runs(review_id) if r["candidate_hash"] == ch]
            rnd = same[-1]["round"] if same else len({r["candidate_hash"] for r in prior}) + 1
        config_key = cache_key(
            "run",
            {
                "original": oh,
                "candidate": ch,
                "set": self.ts_hash,
                "review": self.cfg.review,
                **self.cfg.key_parts(),
            },
        )
        existing = s.unfinished_run(config_key)
        if existing:
            self.run_id = existing["id"]
            s.update_run(self.run_id, status="running")
        else:
            self.run_id = s.create_run(
                {
                    "review_id": review_id,
                    "round": rnd,
                    "config_key": config_key,
                    "original_hash": oh,
                    "candidate_hash": ch,
                    "transfer_set_hash": self.ts_hash,
                    "runner_model": self.cfg.runner.name,
                    "judge_model": self.cfg.judge.name,
                    "variant": self.cfg.variant,
                    "config": dumps(
                        {
                            **self.cfg.key_parts(),
                            "concurrency": self.cfg.concurrency,
                            "api_base": bool(self.cfg.runner.api_base or self.cfg.judge.api_base),
                        }
                    ),
                    # only a set that is thin can have been accepted as thin
                    "thin_accepted": int(cov.thin and (self.cfg.allow_thin or self.ts.thin_accepted)),
                }
            )
        s.add_pending_cases(self.run_id, [c.id for c in self.ts.cases])
        return self.run_id

    # -------------------------------------------------------- one case
    async def _case(self, i: int, case: Case, policy: CallPolicy) -> None:
        base = {"run_id": self.run_id, "case_id": case.id, "position": i}
        stage = "runner"
        try:
            (okey, o), (ckey, c) = await asyncio.gather(
                self._runner(self.original, case, "runner-teacher", policy),
                self._runner(self.candidate, case, "runner-candidate", policy),
            )
            truncated = gate_state(o)[0]
            stage = "judge"
            k = max(1, self.cfg.judge_samples)
            samples = await asyncio.gather(
                *[self._judge(case, okey, o, ckey, c, s, k, truncated, policy) for s in range(k)]
            )
            verdict, agreement = majority([r["verdict"] for _, r in samples])
            aa_verdict = None
            if self.cfg.aa:
                stage = "aa"
                rkey, replay = await self._runner(
                    self.original, case, "runner-teacher-replay", policy, AA_SAMPLE
                )
                _, aa = await self._judge(
                    case, okey, o, rkey, replay, 0, 1, truncated, policy, kind="judge-aa"
                )
                aa_verdict = aa["verdict"]
            self.store.put_run_case(
                {
                    **base,
                    "status": "judged",
                    "teacher_key": okey,
                    "candidate_key": ckey,
                    "judge_keys": dumps([key for key, _ in samples]),
                    "verdict": verdict,
                    "agreement": agreement,
                    "uncertain": int(len({r["verdict"] for _, r in samples}) > 1),
                    "gate_truncated": int(truncated),
                    "aa_verdict": aa_verdict,
                    "error_stage": None,
                    "error": None,
                }
            )
        except Cancelled:
            return
        except ModelCallError as e:
            self.progress.errors += 1
            self.store.put_run_case(
                {**base, "status": "error", "error_stage": stage, "error": e.message[:2000]}
            )
        self.progress.done += 1
        self._emit()

    # -------------------------------------------------------- whole run
    async def run_async(self) -> int:
        if not self.run_id:
            self.prepare()
        policy = CallPolicy(
            max_retries=self.cfg.max_retries,
            backoff_base=self.cfg.backoff_base,
            semaphore=asyncio.Semaphore(max(1, self.cfg.concurrency)),
        )
        self.store.update_run(self.run_id, status="running")
        await open_session()
        self._emit()
        try:
            if self.cfg.concurrency <= 1:
                for i, case in enumerate(self.ts.cases):
                    if self.cancel.is_set():
                        break
                    await self._case(i, case, policy)
            else:
                await asyncio.gather(*[self._case(i, c, policy) for i, c in enumerate(self.ts.cases)])
        finally:
            await close_sessions()
        status = "cancelled" if self.cancel.is_set() else "finished"
        rep = build_report(self.store, self.run_id)
        self.store.update_run(
            self.run_id,
            status=status,
            finished_at=now(),
            summary=dumps(rep.report["summary"]),
            stats=dumps(self.store.call_stats(self.run_id)),
        )
        return self.run_id

    def run(self) -> int:
        return asyncio.run(self.run_async())
