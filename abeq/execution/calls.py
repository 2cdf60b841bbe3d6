"""The model calls of a run, each behind the cache: a hit is logged and returned, a miss is made,
stored (errors never are) and logged with what it cost. The engine holds one per run attempt."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from ..documents import Document
from ..errors import ModelCallError
from ..models.ask import Outcome
from ..models.call import CallPolicy
from ..results.store.backend import ResultCache, RunLog
from ..results.store.liveness import owner_id
from ..results.store.rows import CallRow, GradingRow, RunnerResultRow
from ..results.store.store import dumps
from ..schemas import Case, RunnerReply, grading_reply
from .checks.checks import Check
from .checks.grading import blind_order, checks_spec, grade_pair, grader_prompt, unblind
from .config import RunConfig
from .judge import judge_pair, judgement_row
from .keys import grading_key, judge_key, judge_spec, runner_keys, sample_spec
from .runners.observe import from_row, observe
from .runners.runner import gate_state, runner_prompt

CLAIM_POLL_SECONDS = 0.2  # how often a run waiting for another's call looks for its result
STORE_THREADS = 4  # a server store's calls in flight at once (its pool holds 8 connections)
T = TypeVar("T")
_threads: ThreadPoolExecutor | None = None
_threads_lock = threading.Lock()


def _store_threads() -> ThreadPoolExecutor:
    """The process's threads for a server store's calls (made once, idle between runs)."""
    global _threads
    with _threads_lock:
        if _threads is None:
            _threads = ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="abeq-store")
        return _threads


class Calls:
    """The cached runner, judge and grading calls of one run: results are read from and written to
    `cache`, every call (made or cached) goes to `log` under `run_id`, and `on_call(kind, cached, ok,
    cost)` hears of each one (the engine counts it and reports progress)."""

    def __init__(
        self,
        cache: ResultCache,
        log: RunLog,
        run_id: int,
        cfg: RunConfig,
        original: Document,
        ts_hash: str,
        on_call: Callable[[str, bool, bool, float | None], None],
    ):
        self.cache, self.log, self.run_id, self.cfg = cache, log, run_id, cfg
        self.original, self.ts_hash, self.on_call = original, ts_hash, on_call
        self._owner = owner_id()
        self._remote = log.remote

    async def io(self, fn: Callable[..., T], *a: Any) -> T:
        """A store call. One whose store is a server (`RunLog.remote`) is made in a thread, so the
        event loop serves the other calls in flight while it waits on its round trips (on a busy
        machine each waits for the server's process to be scheduled); an in-process sqlite file is
        called right here, where a thread's handoff would cost more than its statement."""
        if not self._remote:
            return fn(*a)
        return await asyncio.get_running_loop().run_in_executor(_store_threads(), partial(fn, *a))

    async def _log(
        self,
        case_id: str,
        kind: str,
        model: str,
        key: str,
        cached: bool,
        out: Outcome | None = None,
        row: Mapping[str, Any] | None = None,
        error: str = "",
        made: Callable[[], None] | None = None,
    ) -> None:
        """Log one call; `made` stores the result it made in the same transaction as its ledger row,
        so a result is never stored without the call that paid for it (and it is one commit, not two)."""
        src = out.__dict__ if out else (row or {})
        await self.io(self._write, made, self._call_row(case_id, kind, model, key, cached, src, error))
        self.on_call(kind, cached, not error, None if cached else src.get("cost"))

    def _write(self, made: Callable[[], None] | None, call: CallRow) -> None:
        with self.log.batch():
            if made is not None:
                made()
            self.log.log_call(call)

    def _call_row(
        self, case_id: str, kind: str, model: str, key: str, cached: bool, src: Mapping[str, Any], error: str
    ) -> CallRow:
        return {
            "run_id": self.run_id,
            "case_id": case_id,
            "kind": kind,
            "model": model,
            "key": key,
            "cached": int(cached),
            "ok": int(not error),
            "error": error[:500],
            "prompt_tokens": src.get("prompt_tokens", 0),
            "completion_tokens": src.get("completion_tokens", 0),
            "cost": src.get("cost"),
            "latency": src.get("latency", 0.0),
            "attempts": src.get("attempts", 0),
            "cache_read_tokens": src.get("cache_read_tokens") or 0,
            "cache_write_tokens": src.get("cache_write_tokens") or 0,
            "cache_saved": src.get("cache_saved", 0.0),
        }

    async def runner(
        self, doc: Document, case: Case, kind: str, policy: CallPolicy, sample: int = 0, fresh: bool = False
    ) -> tuple[str, RunnerReply]:
        # another sample of the same document (the A/A replay, --runner-samples): its own seed
        spec = sample_spec(self.cfg.runner, sample)
        mode = self.cfg.mode  # chat, tools or an agent command (modes.py)
        mode_parts = mode.key_parts(self.original, self.cfg.variant)
        model = mode.label(spec)
        keys = runner_keys(doc.hash, case, self.cfg.variant, spec, self.ts_hash, sample, mode_parts)
        key = keys[0]  # a new result is stored under the current key
        row = None if (fresh or self.cfg.fresh) else await self.io(self.cache.first_runner_result, keys)
        if row:
            # the key it was found under: a v1 hit keeps its judgements' keys, so they are reused too
            key = row["key"]
            await self._log(case.id, kind, model, key, True, row=row)
            return key, from_row(row)
        policy.check()  # complete() checks again once a concurrency slot is free
        if not (fresh or self.cfg.fresh):
            row = await self._claim(key, keys, policy)
            if row:  # another run made it while this one waited: paid once
                key = row["key"]
                await self._log(case.id, kind, model, key, True, row=row)
                return key, from_row(row)
        try:
            out = await observe(doc, self.original, case, self.cfg.variant, spec, mode, policy)
        except ModelCallError as e:
            await self.io(self.cache.release, key, self.run_id)
            await self._log(case.id, kind, model, key, False, row=e.usage, error=e.message)
            raise
        except BaseException:
            self.cache.release(key, self.run_id)
            raise
        reply = out.value
        truncated, section = gate_state(reply)
        made: RunnerResultRow = {
            "key": key,
            "doc_hash": doc.hash,
            "case_id": case.id,
            "model": model,
            "variant": self.cfg.variant,
            "prompt": mode_parts.get("prompt", runner_prompt(self.cfg.variant).ref),
            "sample": sample,
            "transcript": reply.transcript,
            "self_report": dumps(reply.self_report.model_dump()),
            "mode": mode.kind if mode.in_workspace else None,
            "observed": dumps(reply.extras()) if reply.extras() else None,
            "gate_truncated": int(truncated),
            "gate_section": section,
            **out.spend(),
        }

        def store() -> None:  # the result, its ledger row and the claim's end: one commit
            self.cache.put_runner_result(made)
            self.cache.release(key, self.run_id)

        await self._log(case.id, kind, model, key, False, out=out, made=store)
        return key, reply

    async def _claim(self, key: str, keys: Sequence[str], policy: CallPolicy) -> RunnerResultRow | None:
        """Claim the call under `key` for this run (None: make it), or wait while another live run
        makes it and return its result. Two runs of one original over the same cases at once (CI jobs,
        a desk and a CLI on a shared store) then pay for each teacher transcript once."""
        while not await self.io(self.cache.claim, key, self.run_id, self._owner):
            await asyncio.sleep(CLAIM_POLL_SECONDS)
            policy.check()  # a cancel or an interrupt is not held up by the wait
            row = await self.io(self.cache.first_runner_result, keys)
            if row:
                return row
        row = await self.io(
            self.cache.first_runner_result, keys
        )  # stored between this run's look and its claim
        if row:
            await self.io(self.cache.release, key, self.run_id)
        return row

    async def judge(
        self,
        case: Case,
        okey: str,
        o: RunnerReply,
        ckey: str,
        c: RunnerReply,
        sample: int,
        samples: int,
        truncated: bool,
        policy: CallPolicy,
        kind: str = "judge",
    ) -> tuple[str, Mapping[str, Any]]:
        spec = judge_spec(self.cfg.judge, sample, samples)
        key = judge_key(okey, ckey, spec, sample, truncated)
        row = None if self.cfg.fresh else await self.io(self.cache.judgement, key)
        if row:
            await self._log(case.id, kind, spec.name, key, True, row=row)
            return key, row
        policy.check()
        try:
            out = await judge_pair(case, o, c, spec, policy, truncated)
        except ModelCallError as e:
            await self._log(case.id, kind, spec.name, key, False, row=e.usage, error=e.message)
            raise
        made = judgement_row(key, spec, sample, out)
        await self._log(
            case.id, kind, spec.name, key, False, out=out, made=partial(self.cache.put_judgement, made)
        )
        return key, made

    async def grade(
        self,
        case: Case,
        okey: str,
        o: RunnerReply,
        ckey: str,
        c: RunnerReply,
        checks: list[Check],
        policy: CallPolicy,
    ) -> tuple[str, str, dict]:
        """The case's natural-language checks graded on both runs in one blind call (cached like a
        judgement): (key, which arm was run A, check id → teacher/candidate results)."""
        spec, shown_as_a = self.cfg.judge, blind_order(okey, ckey)
        ids = [c.id for c in checks]
        key = grading_key(okey, ckey, checks_spec(checks), spec, shown_as_a)
        row = None if self.cfg.fresh else await self.io(self.cache.grading, key)
        if row:
            await self._log(case.id, "judge-checks", spec.name, key, True, row=row)
            reply = grading_reply(tuple(ids)).model_validate_json(row["reply"])
            return key, shown_as_a, unblind(reply, ids, shown_as_a)
        policy.check()
        try:
            out = await grade_pair(case, checks, o, c, shown_as_a, spec, policy)
        except ModelCallError as e:
            await self._log(case.id, "judge-checks", spec.name, key, False, row=e.usage, error=e.message)
            raise
        r = out.value
        made: GradingRow = {
            "key": key,
            "model": spec.name,
            "prompt": grader_prompt().ref,
            "shown_as_a": shown_as_a,
            "reply": r.model_dump_json(),
            "raw": out.raw[:20000],
            **out.spend(cache=False),  # graded checks: the calls ledger has their cache tokens
        }
        await self._log(
            case.id,
            "judge-checks",
            spec.name,
            key,
            False,
            out=out,
            made=partial(self.cache.put_grading, made),
        )
        return key, shown_as_a, unblind(r, ids, shown_as_a)
