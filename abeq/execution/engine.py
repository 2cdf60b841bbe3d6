"""The run engine: for each case, teacher and candidate runs in parallel, then the judge.

Every result is written to sqlite as it lands, keyed by everything that changes it, so a run that
is interrupted resumes by running it again, and round 2 re-runs only the candidate.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, cast

from .. import vocab
from ..documents import Document, detect_variant
from ..errors import InputError, ModelCallError
from ..models.call import CallPolicy, Cancelled
from ..models.http import close_sessions, open_session, redact
from ..models.ratelimit import PRIORITY, Limiter
from ..results.reports.record import end_run
from ..results.store import backend, rows
from ..results.store.liveness import ACTIVE, HEARTBEAT_SECONDS, live_status, owner_id
from ..results.store.store import Store, dumps
from ..schemas import Case, TransferSet
from ..sets.confirmation import one_run, set_hash
from ..vocab import REGRESSED
from .calls import Calls
from .checks.checks import evaluate, model_checks, runs_scripts, stored_rows
from .config import SETTINGS, RunConfig
from .estimate import estimate_calls
from .failfast import NOT_RUN_STAGE, NOT_RUN_STATUS, FailFast, not_run_error
from .judge import majority
from .keys import cache_key
from .preflight import Preflight, preflight, review_refusal
from .progress import Progress, Stop, stop
from .runners.runner import gate_state
from .sampled import run_sampled
from .settings import RunSettings

AA_SAMPLE = 1  # the teacher replay of an A/A check is sample 1 of the original (sample 0 is cached)


class Engine:
    """One run of a transfer set on an original and a candidate, recorded in `store`, with its settings
    (a RunSettings, or the RunConfig resolved from one or from a stored run). Its model
    results are cached in `cache` (default: the store's own; the report reads results from the store,
    so another cache must write through to it); the calls go through a `Calls` the engine holds."""

    def __init__(
        self,
        store: Store,
        original: Document,
        candidate: Document,
        ts: TransferSet,
        config: RunConfig | RunSettings,
        on_progress: Callable[[dict], None] | None = None,
        cancel: threading.Event | None = None,
        cache: backend.ResultCache | None = None,
        order: Sequence[str] = (),  # a mutant's claiming cases first
        stop_in_flight: bool = False,  # a --fail-fast stop also cancels the cases already started
    ):
        if isinstance(config, RunSettings):  # resolved here: the variant the original's name suggests
            config = config.config(detect_variant(original.name))
        self.store, self.original, self.candidate, self.ts = store, original, candidate, ts
        self.cfg: RunConfig = config
        self.order, self.stop_in_flight = tuple(order), stop_in_flight  # case ids to start first
        self.sources: dict[str, str] = {}  # role -> git:COMMIT:PATH for inputs read at a revision
        self.started_by: str | None = None  # the person signed in to the desk who started it
        self.ts_hash = set_hash(ts)
        self.on_progress = on_progress
        self.cancel = cancel or Stop()
        self.progress = self._new_progress()
        self.run_id = 0
        self.limiter: Limiter | None = None
        self.fail_fast = FailFast(False, 1)
        self.cache: backend.ResultCache = cache if cache is not None else store.cache
        self.calls = self._new_calls()

    def _new_calls(self) -> Calls:
        return Calls(
            self.cache, self.store.log, self.run_id, self.cfg, self.original, self.ts_hash, self._counted
        )

    def _counted(self, kind: str, cached: bool, ok: bool, cost: float | None = None) -> None:
        self.progress.count(kind, cached, ok, cost)
        self._emit()  # progress counts calls, not only cases: a slow case still shows its calls landing

    def _new_progress(self) -> Progress:
        n, c = len(self.ts.cases), self.cfg
        need = estimate_calls(n, 1, max(1, c.judge_samples), c.aa, self.graded_cases(), c.runner_samples)
        return Progress(
            total=n,
            runner_needed=need["runner_calls"],
            judge_needed=need["judge_calls"] + need["grading_calls"],  # grading: a judge-model call
            command=c.mode.kind == "command",
        )

    def graded_cases(self) -> int:
        """Cases with natural-language checks: each costs one grading call."""
        return sum(1 for c in self.ts.cases if model_checks(c))

    def config_key(self) -> str:
        """What identifies this run: running it again resumes the run with this key, unless finished."""
        return cache_key(
            "run",
            {
                "original": self.original.hash,
                "candidate": self.candidate.hash,
                "set": self.ts_hash,
                "review": self.cfg.review,
                **self.cfg.key_parts(),
            },
        )

    # -------------------------------------------------------- setup
    def prepare(self, checked: Preflight | None = None) -> int:
        """Refuse what must not run, store the inputs, create or resume the run. `checked`: this run's
        preflight, when its caller ran it (prepare_run, a mutation test); otherwise it runs here."""
        if checked is None:
            checked = preflight(self.original, self.ts, self.cfg)
        checked.raise_first()
        refused = review_refusal(
            self.store, self.cfg.review, original_hash=self.original.hash, ts_hash=self.ts_hash
        )
        if refused:
            raise refused
        cov = checked.coverage
        s = self.store
        config_key = self.config_key()
        existing = s.log.unfinished_run(config_key)
        if existing and live_status(existing) in ACTIVE and existing.get("owner") != owner_id():
            # two processes making the same calls for one run would each pay for them
            raise InputError(
                f"run {existing['id']} (these documents, cases and settings) is running in another "
                f"process ({existing.get('owner') or 'unknown'})",
                hint="Cancel it there (Ctrl-C, or Cancel on the desk's Run page), or wait for it to end.",
            )
        oh = s.inputs.put_document(self.original.name, self.original.text, self.original.folder)
        ch = s.inputs.put_document(self.candidate.name, self.candidate.text, self.candidate.folder)
        s.inputs.put_transfer_set(self.ts)
        review_id, rnd = None, None
        if self.cfg.review:
            review_id = s.inputs.upsert_review(self.cfg.review, oh, self.ts_hash, self.cfg.variant)
            prior = [r for r in s.log.runs(review_id) if r["candidate_hash"] != ch]
            same = [r for r in s.log.runs(review_id) if r["candidate_hash"] == ch]
            rnd = same[-1]["round"] if same else len({r["candidate_hash"] for r in prior}) + 1
        if existing:
            self.run_id = existing["id"]
        else:
            self.run_id = s.log.create_run(
                {
                    "review_id": review_id,
                    "round": rnd,
                    "config_key": config_key,
                    "original_hash": oh,
                    "candidate_hash": ch,
                    "transfer_set_hash": self.ts_hash,
                    "runner_model": self.cfg.mode.label(self.cfg.runner),
                    "judge_model": self.cfg.judge.name,
                    "variant": cast(vocab.Variant, self.cfg.variant),  # a str in RunConfig, one of VARIANTS
                    # a key written into --runner-cmd itself is not stored either
                    "config": redact(
                        dumps(self.cfg.stored(self.graded_cases(), self.sources, self.started_by))
                    ),
                    # only a set that is thin can have been accepted as thin
                    "thin_accepted": int(cov.thin and (self.cfg.allow_thin or self.ts.thin_accepted)),
                    # `--confirm`: the set was accepted for this run only, by whom (never stored as the set's)
                    "set_confirmed_for_run": one_run(self.ts),
                }
            )
        if not (existing and live_status(existing) in ACTIVE):  # (already running here: leave it be)
            s.log.claim_run(self.run_id, owner_id())  # this process's from now on: it reads as running
        s.log.add_pending_cases(self.run_id, [c.id for c in self.ts.cases])
        return self.run_id

    def _emit(self) -> None:
        if self.limiter is not None:
            self.progress.throttle = self.limiter.notice()
        self.progress.stopped_after = self.fail_fast.after
        if self.on_progress:
            try:
                self.on_progress(self.progress.as_dict())
            except Exception:
                pass

    # -------------------------------------------------------- one case
    async def _case(self, i: int, case: Case, policy: CallPolicy, turn: int | None = None) -> None:
        """One case, in its turn: not started once --fail-fast has stopped the run."""
        async with self.fail_fast.admit():
            if self.fail_fast.stopped:
                return
            # A case's calls go ahead of later cases', its judge included: a case is judged as soon
            # as both of its runs are in, so verdicts land in case order from the start of the run
            # (a reviewer can read them, a Cancel keeps them, --fail-fast stops early).
            # `turn`: its place in the starting order, when `order` moves cases ahead
            token = PRIORITY.set(i if turn is None else turn)
            try:
                await self._run_case(i, case, policy)
            finally:
                PRIORITY.reset(token)

    async def _run_case(self, i: int, case: Case, policy: CallPolicy) -> None:
        base: rows.RunCaseKey = {"run_id": self.run_id, "case_id": case.id, "position": i}
        stage = "runner"
        try:
            if self.cfg.runner_samples > 1:  # N samples a side, decided on the counts (sampled.py)
                stage = "samples"
                checked, row = await run_sampled(
                    self.calls, self.cfg, self.original, self.candidate, case, policy
                )
                if row["verdict"] == REGRESSED:  # decided regressed: the gate has failed
                    self.fail_fast.stop(case.id)
                await self.calls.io(self._put_case, case.id, checked, {**base, **row})
                self.progress.done += 1
                self._emit()
                return
            (okey, o), (ckey, c) = await asyncio.gather(
                self.calls.runner(self.original, case, "runner-teacher", policy),
                self.calls.runner(self.candidate, case, "runner-candidate", policy),
            )
            truncated = gate_state(o)[0]
            stage = "judge"
            k = max(1, self.cfg.judge_samples)
            graded = model_checks(case)
            jobs = [
                self.fail_fast.watch(
                    partial(self.calls.judge, case, okey, o, ckey, c, s, k, truncated, policy), case.id, k
                )
                for s in range(k)
            ]
            if graded:
                jobs.append(self.calls.grade(case, okey, o, ckey, c, graded, policy))
            # together, and each finishes (and is cached) even when another fails
            done = await asyncio.gather(*jobs, return_exceptions=True)
            for n, x in enumerate(done):
                if isinstance(x, BaseException):
                    stage = "checks" if n == k else "judge"
                    raise x
            # no exception among them (raised above): k judgements, then the grading if any
            samples = cast("list[tuple[str, Mapping[str, Any]]]", done[:k])
            gkey, shown_as_a, grades = (
                cast("tuple[str, str, dict]", done[k]) if graded else (None, None, None)
            )
            # a promptfoo script check runs a subprocess, which must not hold up the other cases: in a
            # thread; the other checks take less than handing them to one
            args = (case, o, c, grades, shown_as_a, self.cfg.sandbox())
            checks = await asyncio.to_thread(evaluate, *args) if runs_scripts(case) else evaluate(*args)
            verdict, agreement = majority([r["verdict"] for _, r in samples])
            lost = [r for r in checks if r.lost]
            if verdict == REGRESSED or lost:  # the compress gate has failed: --fail-fast stops here
                self.fail_fast.stop(case.id)
            aa_verdict = None
            if self.cfg.aa:
                stage = "aa"
                rkey, replay = await self.calls.runner(
                    self.original, case, "runner-teacher-replay", policy, AA_SAMPLE
                )
                _, aa = await self.calls.judge(
                    case, okey, o, rkey, replay, 0, 1, truncated, policy, kind="judge-aa"
                )
                aa_verdict = aa["verdict"]
            await self.calls.io(
                self._put_case,
                case.id,
                stored_rows(checks, gkey),
                {
                    **base,
                    "status": vocab.JUDGED,
                    "teacher_key": okey,
                    "candidate_key": ckey,
                    "judge_keys": dumps([key for key, _ in samples]),
                    "verdict": verdict,
                    "agreement": agreement,
                    # judge samples that split, or checks that found a loss the judge did not call
                    "uncertain": int(
                        len({r["verdict"] for _, r in samples}) > 1 or bool(lost and verdict != REGRESSED)
                    ),
                    "gate_truncated": int(truncated),
                    "aa_verdict": aa_verdict,
                    "checks_lost": len(lost),
                    "error_stage": None,
                    "error": None,
                },
            )
        except Cancelled:
            return
        except ModelCallError as e:
            self.progress.errors += 1
            await self.calls.io(
                self.store.log.put_run_case,
                {**base, "status": vocab.CASE_ERROR, "error_stage": stage, "error": e.message[:2000]},
            )
        self.progress.done += 1
        self._emit()

    def _put_case(self, case_id: str, checks: list[rows.CheckResultRow], row: rows.RunCaseRow) -> None:
        """A case's checks and its verdict: they land together."""
        with self.store.log.batch():
            self.store.log.put_check_results(self.run_id, case_id, checks)
            self.store.log.put_run_case(row)

    # -------------------------------------------------------- whole run
    def ordered_cases(self) -> list[tuple[int, Case]]:
        """(position in the set, case) in the order they start: those named in `order` first."""
        first = {cid: n for n, cid in enumerate(self.order)}
        return sorted(enumerate(self.ts.cases), key=lambda ic: (first.get(ic[1].id, len(first)), ic[0]))

    async def _cases(self, policy: CallPolicy) -> None:
        if self.cfg.concurrency <= 1:
            for turn, (i, case) in enumerate(self.ordered_cases()):
                if self.cancel.is_set() or self.fail_fast.stopped:
                    break
                await self._case(i, case, policy, turn)
        else:
            jobs = {c.id: self._case(i, c, policy, t) for t, (i, c) in enumerate(self.ordered_cases())}
            await self.fail_fast.gather(jobs, self.stop_in_flight)

    async def _watch(self, work: asyncio.Future) -> None:
        """Cancel the calls in flight once the run is cancelled (here, or from another process via the
        store), and keep the run's heartbeat going so a reader can tell it from a run whose process died.

        The flag is a threading.Event set from another thread or a signal handler, so it is polled;
        complete() also checks it right before every request, so no call starts in between."""
        beat = poll = time.monotonic()
        while not work.done():
            await asyncio.sleep(0.05)
            t = time.monotonic()
            if t - poll >= 1.0 and not self.cancel.is_set():
                poll = t
                if self.store.log.cancel_requested(self.run_id):
                    stop(self.cancel, vocab.CANCELLED)
            if self.cancel.is_set():
                self.store.log.update_run(self.run_id, status=vocab.CANCELLING)
                # aiohttp and litellm requests are dropped mid-flight; a call on the embedded model
                # that is generating finishes on its thread (llama.cpp cannot be stopped), and its
                # reply is thrown away; the calls queued behind it never start
                work.cancel()
                return
            if t - beat >= HEARTBEAT_SECONDS:
                beat = t
                self.store.log.heartbeat(self.run_id)

    async def run_async(self) -> int:
        if not self.run_id:
            self.prepare()
        width = max(1, self.cfg.concurrency)
        self.limiter = Limiter(width, on_change=self._emit)  # priority, AIMD and Retry-After per provider
        self.fail_fast = FailFast(self.cfg.fail_fast, width)
        policy = CallPolicy(
            max_retries=self.cfg.max_retries,
            backoff_base=self.cfg.backoff_base,
            semaphore=self.limiter,
            cancel=self.cancel,
        )
        self.store.log.claim_run(self.run_id, owner_id())
        self.store.log.update_run(self.run_id, stopped_after=None)  # this attempt may run what was not run
        self.progress = self._new_progress()
        self.calls = self._new_calls()  # for this run, now that it has an id
        await open_session()
        self._emit()
        work = asyncio.ensure_future(self._cases(policy))
        watch = asyncio.ensure_future(self._watch(work))
        try:
            await work
        except asyncio.CancelledError:
            # the engine itself was cancelled, not by _watch (which is done once it cancels the work);
            # Task.cancelling() tells the two apart from Python 3.11 on, but abeq runs on 3.10 too
            task = asyncio.current_task()
            if not watch.done() or (sys.version_info >= (3, 11) and task is not None and task.cancelling()):
                self._end(vocab.INTERRUPTED)
                raise
        finally:
            watch.cancel()
            await close_sessions()
            self.limiter.on_change = None  # no engine <-> limiter cycle: the store closes with the engine
        after = self.fail_fast.after  # the case after which --fail-fast stopped the run, if it did
        if after is not None and not self.cancel.is_set():
            # not "finished": the same command (with or without --fail-fast) resumes this run
            self.store.log.mark_not_run(self.run_id, NOT_RUN_STATUS, NOT_RUN_STAGE, not_run_error(after))
            self.store.log.update_run(self.run_id, stopped_after=after)
            self.progress.ended = True
            self._end(vocab.STOPPED_EARLY)
            return self.run_id
        self._end(getattr(self.cancel, "reason", vocab.CANCELLED) if self.cancel.is_set() else vocab.FINISHED)
        return self.run_id

    def _end(self, status: vocab.RunStatus) -> None:
        """Record how the attempt ended; a run with every case done is finished whatever stopped it."""
        c = self.store.log.case_counts(self.run_id)
        if c["done"] == c["total"]:
            status = vocab.FINISHED
        self.cache.end_claims(self.run_id, owner_id())
        end_run(self.store, self.run_id, status)
        self._emit()

    def run(self) -> int:
        return asyncio.run(self.run_async())


__all__ = ["AA_SAMPLE", "SETTINGS", "Engine", "Progress", "RunConfig", "Stop", "stop"]
