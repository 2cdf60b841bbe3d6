"""--fail-fast: the compress gate fails on the first regressed case, so once one is judged regressed
(with K judge samples: once a majority of them is) no new case starts. Cases already started
finish; the rest are recorded "not run (stopped early)" — never as errors of their own, never as
verdicts — and the same command without --fail-fast runs them (finished cases come from the cache).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from contextlib import asynccontextmanager

from ..vocab import NOT_RUN_STAGE, NOT_RUN_STATUS, REGRESSED

__all__ = ["FailFast", "NOT_RUN_STAGE", "NOT_RUN_STATUS", "not_run_error"]


def not_run_error(after_case: str) -> str:
    return (
        f"--fail-fast stopped the run after case {after_case} was judged {REGRESSED}; run the same "
        "command without --fail-fast to run this case (finished cases come from the cache)"
    )


class FailFast:
    """Admission of cases in their order, and the stop once one is judged regressed.

    Cases are admitted at most `width` at a time (the run's concurrency: with the calls of earlier
    cases served first, that keeps every slot busy), so a stop leaves few cases half-done."""

    def __init__(self, on: bool, width: int):
        self.on = on
        self.after: str | None = None  # the case whose regression stopped the run
        self._gate = asyncio.Semaphore(max(1, width)) if on else None
        self._regressed: dict[str, int] = {}
        self._on_stop: Callable[[str], None] | None = None  # called once, with the case that stopped the run

    @property
    def stopped(self) -> bool:
        return self.after is not None

    @asynccontextmanager
    async def admit(self):
        """Enter one case (waiting its turn); `stopped` says whether it may still start."""
        if self._gate is None:
            yield
            return
        async with self._gate:
            yield

    def stop(self, case_id: str) -> None:
        if self.on and self.after is None:
            self.after = case_id
            if self._on_stop is not None:
                self._on_stop(case_id)

    def sample(self, case_id: str, verdict: str, samples: int) -> None:
        """One judge sample landed: stop as soon as regressed is this case's majority, before the
        other samples are in."""
        if verdict == REGRESSED:
            n = self._regressed[case_id] = self._regressed.get(case_id, 0) + 1
            if 2 * n > samples:
                self.stop(case_id)

    async def gather(self, cases: Mapping[str, Coroutine], cancel_in_flight: bool = False) -> None:
        """Run every case (case id -> its coroutine) at once. `cancel_in_flight`: a stop also cancels
        the cases already started (a mutation test: one kill is the answer, so at any concurrency the
        rest of a mutant's calls are not made); they end "not run" like the cases never started. A
        case's own error is raised."""
        tasks = {cid: asyncio.ensure_future(c) for cid, c in cases.items()}
        if cancel_in_flight:

            def cancel_others(case_id: str) -> None:
                for cid, t in tasks.items():
                    if cid != case_id and not t.done():
                        t.cancel()

            self._on_stop = cancel_others
        done = await asyncio.gather(*tasks.values(), return_exceptions=True)
        for x in done:
            if isinstance(x, BaseException) and not isinstance(x, asyncio.CancelledError):
                raise x

    async def watch(self, judge, case_id: str, samples: int):
        """Make and await one judge sample (key, row), and count it. `judge` makes the call's
        coroutine only once this task runs: one made beforehand and cancelled before its task started
        would never be awaited (Python warns)."""
        key, row = await judge()
        self.sample(case_id, row["verdict"], samples)
        return key, row
