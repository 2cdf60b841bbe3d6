"""The run engine: for each case, teacher and candidate runs in parallel, then the judge.

Every result is written to sqlite as it lands, keyed by everything that changes it, so a run that
is interrupted resumes by running it again, and round 2 re-runs only the candidate.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Optional

from .documents import Document
from .errors import InputError, ModelCallError, NotConfirmedError
from .judge import judge_pair, judge_prompt, majority
from .models import CallPolicy, ModelSpec, price
from .runner import Outcome, gate_state, run_document, runner_prompt
from .schemas import Case, JudgeReply, RunnerReply, TransferSet
from .store import Store, dumps
from .transferset import confirmation_problem, require_runnable, set_hash

KEY_VERSION = "abeq-key-v1"
AA_SAMPLE = 1  # the teacher replay of an A/A check is sample 1 of the original (sample 0 is cached)


def cache_key(kind: str, parts: dict) -> str:
    """Version prefix + canonical JSON of everything that changes the output, and nothing else."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{KEY_VERSION}|{kind}|{blob}".encode()).hexdigest()


def runner_key(doc_hash: str, case: Case, variant: str, spec: ModelSpec, ts_hash: str, sample: int = 0) -> str:
    return cache_key("runner", {
        "doc": doc_hash, "case": {"input": case.input, "gate_responses": [g.model_dump() for g in case.gate_responses]},
        "variant": variant, "prompt": runner_prompt(variant).ref, "sampling": spec.sampling(),
        "transfer_set": ts_hash, "sample": sample})


def judge_spec(base: ModelSpec, sample: int, samples: int) -> ModelSpec:
    """Independent judge samples: each its own seed, and some temperature when more than one is asked."""
    if samples <= 1:
        return base
    return replace(base, seed=(base.seed or 0) + sample, temperature=max(base.temperature, 0.7))


def judge_key(original_key: str, candidate_key: str, spec: ModelSpec, sample: int, truncated: bool) -> str:
    return cache_key("judge", {"original": original_key, "candidate": candidate_key, "prompt": judge_prompt().ref,
                               "sampling": spec.sampling(), "sample": sample, "truncated": truncated})


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
    review: Optional[str] = None
    max_retries: int = 4
    backoff_base: float = 0.5  # seconds before the first retry; doubled per retry, with jitter

    def key_parts(self) -> dict:
        return {"runner": self.runner.sampling(), "judge": self.judge.sampling(), "variant": self.variant,
                "judge_samples": self.judge_samples, "aa": self.aa,
                "prompts": [runner_prompt(self.variant).ref, judge_prompt().ref]}


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


class Cancelled(Exception):
    pass


class Engine:
    def __init__(self, store: Store, original: Document, candidate: Document, ts: TransferSet, config: RunConfig,
                 on_progress: Optional[Callable[[dict], None]] = None, cancel: Optional[threading.Event] = None):
        self.store, self.original, self.candidate, self.ts, self.cfg = store, original, candidate, ts, config
        self.ts_hash = set_hash(ts)
        self.on_progress = on_progress
        self.cancel = cancel or threading.Event()
        self.progress = Progress(total=len(ts.cases))
        self.run_id = 0

    # -------------------------------------------------------- setup
    def prepare(self) -> int:
        """Check the gates that come before any model call, store inputs, create or resume the run."""
        problem = confirmation_problem(self.ts, self.original.hash)
        if problem:
            raise NotConfirmedError(f"{problem}; no runner call happens before a person accepts it",
                                    hint="Review it, then confirm it (--confirm, or Confirm in the desk).")
        cov = require_runnable(self.original.text, self.ts, self.cfg.allow_thin)
        s = self.store
        if self.cfg.review:
            # rounds compare only when they share the original and the cases (SPEC §9): what the
            # review's earlier runs used decides, not what the review points at now
            known = s.review(self.cfg.review)
            earlier = s.runs(known["id"]) if known else []
            if any(r["original_hash"] != self.original.hash for r in earlier):
                was = (s.document(earlier[0]["original_hash"]) or {}).get("name", "another document")
                raise InputError(f"review '{self.cfg.review}' already has runs against a different original ({was})",
                                 hint="Rounds of one review compare candidates of one original: use a new --review "
                                      "name for this original.")
            if any(r["transfer_set_hash"] != self.ts_hash for r in earlier):
                raise InputError(f"review '{self.cfg.review}' already has runs against a different transfer set",
                                 hint="Rounds of one review run the same cases, so that they compare: use a new "
                                      "--review name (in the desk, a new review) for these cases.")
        oh = s.put_document(self.original.name, self.original.text)
        ch = s.put_document(self.candidate.name, self.candidate.text)
        s.put_transfer_set(self.ts)
        review_id, rnd = None, None
        if self.cfg.review:
            review_id = s.upsert_review(self.cfg.review, oh, self.ts_hash, self.cfg.variant)
            prior = [r for r in s.runs(review_id) if r["candidate_hash"] != ch]
            same = [r for r in s.runs(review_id) if r["candidate_hash"] == ch]
            rnd = same[-1]["round"] if same else len({r["candidate_hash"] for r in prior}) + 1
        config_key = cache_key("run", {"original": oh, "candidate": ch, "set": self.ts_hash,
                                       "review": self.cfg.review, **self.cfg.key_parts()})
        existing = s.unfinished_run(config_key)
        if existing:
            self.run_id = existing["id"]
            s.update_run(self.run_id, status="running")
        else:
            self.run_id = s.create_run({
                "review_id": review_id, "round": rnd, "config_key": config_key, "original_hash": oh,
                "candidate_hash": ch, "transfer_set_hash": self.ts_hash, "runner_model": self.cfg.runner.name,
                "judge_model": self.cfg.judge.name, "variant": self.cfg.variant,
                "config": dumps({**self.cfg.key_parts(), "concurrency": self.cfg.concurrency,
                                 "api_base": bool(self.cfg.runner.api_base or self.cfg.judge.api_base)}),
                # only a set that is thin can have been accepted as thin
                "thin_accepted": int(cov.thin and (self.cfg.allow_thin or self.ts.thin_accepted))})
        for i, c in enumerate(self.ts.cases):
            if not s.one("select 1 from run_cases where run_id = ? and case_id = ?", [self.run_id, c.id]):
                s.put_run_case({"run_id": self.run_id, "case_id": c.id, "position": i, "status": "pending"})
        return self.run_id

    # -------------------------------------------------------- calls with cache
    def _emit(self) -> None:
        if self.on_progress:
            try:
                self.on_progress(self.progress.as_dict())
            except Exception:
                pass

    def _log(self, case_id: str, kind: str, model: str, key: str, cached: bool, out: Optional[Outcome] = None,
             row: Optional[dict] = None, error: str = "") -> None:
        src = out.__dict__ if out else (row or {})
        self.store.log_call({"run_id": self.run_id, "case_id": case_id, "kind": kind, "model": model, "key": key,
                             "cached": int(cached), "ok": int(not error), "error": error[:500],
                             "prompt_tokens": src.get("prompt_tokens", 0), "completion_tokens": src.get("completion_tokens", 0),
                             "cost": src.get("cost"), "latency": src.get("latency", 0.0), "attempts": src.get("attempts", 0)})
        if cached:
            self.progress.cached += 1
        else:
            self.progress.calls += 1

    async def _runner(self, doc: Document, case: Case, kind: str, policy: CallPolicy, sample: int = 0,
                      fresh: bool = False) -> tuple[str, RunnerReply]:
        spec = self.cfg.runner
        if sample:  # another sample of the same document (the A/A replay): its own seed
            spec = replace(spec, seed=(spec.seed or 0) + sample)
        key = runner_key(doc.hash, case, self.cfg.variant, spec, self.ts_hash, sample)
        row = None if (fresh or self.cfg.fresh) else self.store.runner_result(key)
        if row:
            self._log(case.id, kind, spec.name, key, True, row=row)
            return key, RunnerReply.model_validate({"transcript": row["transcript"],
                                                    "self_report": json.loads(row["self_report"])})
        if self.cancel.is_set():
            raise Cancelled()
        try:
            out = await run_document(doc.text, case, self.cfg.variant, spec, policy)
        except ModelCallError as e:
            self._log(case.id, kind, spec.name, key, False, row=e.usage, error=e.message)
            raise
        reply: RunnerReply = out.value
        truncated, section = gate_state(reply)
        self.store.put_runner_result({
            "key": key, "doc_hash": doc.hash, "case_id": case.id, "model": spec.name, "variant": self.cfg.variant,
            "prompt": runner_prompt(self.cfg.variant).ref, "sample": sample, "transcript": reply.transcript,
            "self_report": dumps(reply.self_report.model_dump()), "gate_truncated": int(truncated),
            "gate_section": section, "prompt_tokens": out.prompt_tokens, "completion_tokens": out.completion_tokens,
            "cost": out.cost, "latency": out.latency, "attempts": out.attempts})
        self._log(case.id, kind, spec.name, key, False, out=out)
        return key, reply

    async def _judge(self, case: Case, okey: str, o: RunnerReply, ckey: str, c: RunnerReply, sample: int,
                     samples: int, truncated: bool, policy: CallPolicy, kind: str = "judge") -> tuple[str, dict]:
        spec = judge_spec(self.cfg.judge, sample, samples)
        key = judge_key(okey, ckey, spec, sample, truncated)
        row = None if self.cfg.fresh else self.store.judgement(key)
        if row:
            self._log(case.id, kind, spec.name, key, True, row=row)
            return key, row
        if self.cancel.is_set():
            raise Cancelled()
        try:
            out = await judge_pair(case, o, c, spec, policy, truncated)
        except ModelCallError as e:
            self._log(case.id, kind, spec.name, key, False, row=e.usage, error=e.message)
            raise
        r: JudgeReply = out.value
        row = {"key": key, "model": spec.name, "prompt": judge_prompt().ref, "sample": sample, "verdict": r.verdict,
               "behaviour_delta": r.behaviour_delta, "original_directness": r.original_directness,
               "candidate_directness": r.candidate_directness, "interpretation_notes": r.interpretation_notes,
               "raw": out.raw[:20000], "prompt_tokens": out.prompt_tokens, "completion_tokens": out.completion_tokens,
               "cost": out.cost, "latency": out.latency, "attempts": out.attempts}
        self.store.put_judgement(row)
        self._log(case.id, kind, spec.name, key, False, out=out)
        return key, row

    # -------------------------------------------------------- one case
    async def _case(self, i: int, case: Case, policy: CallPolicy) -> None:
        base = {"run_id": self.run_id, "case_id": case.id, "position": i}
        stage = "runner"
        try:
            (okey, o), (ckey, c) = await asyncio.gather(
                self._runner(self.original, case, "runner-teacher", policy),
                self._runner(self.candidate, case, "runner-candidate", policy))
            truncated = gate_state(o)[0]
            stage = "judge"
            k = max(1, self.cfg.judge_samples)
            samples = await asyncio.gather(*[self._judge(case, okey, o, ckey, c, s, k, truncated, policy)
                                             for s in range(k)])
            verdict, agreement = majority([r["verdict"] for _, r in samples])
            aa_verdict = None
            if self.cfg.aa:
                stage = "aa"
                rkey, replay = await self._runner(self.original, case, "runner-teacher-replay", policy, AA_SAMPLE)
                _, aa = await self._judge(case, okey, o, rkey, replay, 0, 1, truncated, policy, kind="judge-aa")
                aa_verdict = aa["verdict"]
            self.store.put_run_case({**base, "status": "judged", "teacher_key": okey, "candidate_key": ckey,
                                     "judge_keys": dumps([key for key, _ in samples]), "verdict": verdict,
                                     "agreement": agreement, "uncertain": int(len({r["verdict"] for _, r in samples}) > 1),
                                     "gate_truncated": int(truncated), "aa_verdict": aa_verdict,
                                     "error_stage": None, "error": None})
        except Cancelled:
            return
        except ModelCallError as e:
            self.progress.errors += 1
            self.store.put_run_case({**base, "status": "error", "error_stage": stage, "error": e.message[:2000]})
        self.progress.done += 1
        self._emit()

    # -------------------------------------------------------- whole run
    async def run_async(self) -> int:
        if not self.run_id:
            self.prepare()
        policy = CallPolicy(max_retries=self.cfg.max_retries, backoff_base=self.cfg.backoff_base,
                            semaphore=asyncio.Semaphore(max(1, self.cfg.concurrency)))
        self.store.update_run(self.run_id, status="running")
        from .models import close_sessions, open_session

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
        from .report import build_report

        rep = build_report(self.store, self.run_id)
        self.store.update_run(self.run_id, status=status, finished_at=_now(),
                              summary=dumps(rep.report["summary"]), stats=dumps(self.store.call_stats(self.run_id)))
        return self.run_id

    def run(self) -> int:
        return asyncio.run(self.run_async())


def _now() -> str:
    from .store import now

    return now()


def estimate(engine: "Engine", rounds_so_far: int = 0) -> dict:
    """What this run will cost at most: calls needed now (cache consulted), tokens and price."""
    from .documents import estimate_tokens

    cfg, n = engine.cfg, len(engine.ts.cases)
    need_teacher = sum(1 for c in engine.ts.cases if cfg.fresh or not engine.store.runner_result(
        runner_key(engine.original.hash, c, cfg.variant, cfg.runner, engine.ts_hash)))
    base = estimate_calls(n, 1, cfg.judge_samples, cfg.aa)
    runner_calls = need_teacher + n + (n if cfg.aa else 0)
    judge_calls = base["judge_calls"]
    sys_tokens = estimate_tokens(runner_prompt(cfg.variant).text)[0]
    per_runner = sys_tokens + estimate_tokens(engine.original.text)[0] + 200
    runner_prompt_tokens = runner_calls * per_runner
    judge_prompt_tokens = judge_calls * (estimate_tokens(judge_prompt().text)[0] + 1200)
    prompt_tokens = runner_prompt_tokens + judge_prompt_tokens
    completion_tokens = (runner_calls + judge_calls) * 400
    # each side at its own model's price; unknown for either means unknown in total
    costs = (price(cfg.runner.name, runner_prompt_tokens, runner_calls * 400),
             price(cfg.judge.name, judge_prompt_tokens, judge_calls * 400))
    return {"runner_calls": runner_calls, "judge_calls": judge_calls, "teacher_cached": n - need_teacher,
            "review_budget_runner_calls": n * (1 + rounds_so_far + 1),
            "est_prompt_tokens": prompt_tokens, "est_completion_tokens": completion_tokens,
            "est_cost": None if None in costs else round(sum(costs), 6)}


def estimate_calls(n_cases: int, rounds: int = 1, judge_samples: int = 1, aa: bool = False) -> dict:
    """Budget before a run: N × (1 + rounds) runner calls, plus judge calls (and A/A extras)."""
    runner = n_cases * (1 + rounds) + (n_cases if aa else 0)
    judge = n_cases * rounds * judge_samples + (n_cases if aa else 0)
    return {"runner_calls": runner, "judge_calls": judge, "total": runner + judge}
