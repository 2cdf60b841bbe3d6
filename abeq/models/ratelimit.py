"""Obeying a provider: how long it asked us to wait, and how many calls it can take at once.

`retry_after` reads the wait a 429 or 503 asks for (`Retry-After` in seconds or as an HTTP date,
`retry-after-ms`, or the reset time of a rate-limit header that is exhausted). `Limiter` is the
run's concurrency: at most `size` calls in flight, handed out in priority order, then in order of
arrival (the priority is the case's position, so the calls of earlier cases go first: a case is
judged as soon as both of its runs are in, and with --fail-fast a regression stops the run early),
and per endpoint an additive-increase / multiplicative-decrease window: each 429 halves it (at most
once per cool-down), `window` successes in a row raise it by one again, and while a Retry-After
runs no call to that endpoint starts at all.
"""

from __future__ import annotations

import asyncio
import email.utils
import heapq
import itertools
import re
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

# lower goes first; the engine sets it to the case's position for that case's calls
PRIORITY: ContextVar[int] = ContextVar("abeq_call_priority", default=0)
MAX_RETRY_AFTER = (
    300.0  # a provider asking for longer (a daily quota) fails the call rather than hang the run
)
_RESET_PAIRS = (  # (remaining, reset) header names: OpenAI-style, then Anthropic-style
    ("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
    ("anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset"),
    ("anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"),
    ("anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset"),
    ("anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset"),
)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def headers_of(exc: BaseException) -> Mapping[str, str] | None:
    """The HTTP headers an error came with, on either transport. litellm keeps a provider's headers
    in `litellm_response_headers` (for Anthropic only there); the OpenAI SDK on `response`."""
    for h in (
        getattr(exc, "headers", None),
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
    ):
        if h:
            return h
    return None


def _get(headers: Mapping[str, str], name: str) -> str | None:
    v = headers.get(name)
    if v is None and not hasattr(headers, "getall"):  # a plain dict: match the name case-insensitively
        v = next((x for k, x in headers.items() if k.lower() == name), None)
    return None if v is None else str(v).strip()


def _seconds(value: str, now: float) -> float | None:
    """A wait from a header value: seconds, a duration ("1m30s", "250ms"), an HTTP date or RFC 3339."""
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parts = _DURATION.findall(value)
    if parts and "".join(n + u for n, u in parts) == value.replace(" ", ""):
        scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
        return sum(float(n) * scale[u] for n, u in parts)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait before calling again, or None when it did not say."""
    if not headers:
        return None
    now = time.time() if now is None else now
    ms = _get(headers, "retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    ra = _get(headers, "retry-after")
    if ra:
        wait = _seconds(ra, now)
        if wait is not None:
            return wait
    return exhausted_reset(headers, now)


def exhausted_reset(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """When a rate-limit header says a budget is used up: seconds until its reset (the longest)."""
    if not headers:
        return None
    now = time.time() if now is None else now
    waits = []
    for remaining, reset in _RESET_PAIRS:
        left, at = _get(headers, remaining), _get(headers, reset)
        if left is not None and at and left.split(".")[0] == "0":
            wait = _seconds(at, now)
            if wait is not None:
                waits.append(wait)
    return max(waits) if waits else None


def endpoint_of(spec) -> str:
    """Which provider's limits a call counts against: its model prefix and its server."""
    return f"{spec.name.split('/', 1)[0]}@{(spec.api_base or '').rstrip('/')}"


@dataclass
class Endpoint:
    window: float  # the AIMD window: calls allowed in flight to this endpoint
    in_flight: int = 0
    not_before: float = 0.0  # loop time before which no call starts (a Retry-After)
    successes: int = 0
    cut_until: float = 0.0  # a 429 arriving before this (loop time) does not halve the window again
    rate_limited: int = 0  # 429s seen


class Limiter:
    """The run's concurrency: at most `size` calls in flight, in priority order, with an AIMD window
    and Retry-After pauses per endpoint. Use `async with limiter.slot(endpoint):`."""

    def __init__(self, size: int, on_change: Callable[[], None] | None = None):
        self.size = max(1, int(size))
        self.in_flight = 0
        self.on_change = on_change
        self._eps: dict[str, Endpoint] = {}
        self._waiting: list[tuple[int, int, str, asyncio.Future]] = []  # a heap: (priority, arrival, …)
        self._seq = itertools.count()
        self._timer: asyncio.TimerHandle | None = None

    def endpoint(self, key: str) -> Endpoint:
        ep = self._eps.get(key)
        if ep is None:
            ep = self._eps[key] = Endpoint(window=float(self.size))
        return ep

    def _free(self, ep: Endpoint, now: float) -> bool:
        return self.in_flight < self.size and ep.in_flight < int(ep.window) and now >= ep.not_before

    def _grant(self, ep: Endpoint) -> None:
        ep.in_flight += 1
        self.in_flight += 1

    async def acquire(self, key: str) -> None:
        loop = asyncio.get_running_loop()
        ep = self.endpoint(key)
        if self._free(ep, loop.time()):
            self._grant(ep)
            return
        fut = loop.create_future()
        heapq.heappush(self._waiting, (PRIORITY.get(), next(self._seq), key, fut))
        self._wake()
        try:
            await fut
        except asyncio.CancelledError:
            # a waiter cancelled before its turn stays in the heap, done, and is skipped there
            if fut.done() and not fut.cancelled():
                self.release(key)  # granted, then cancelled before it could use the slot
            raise

    def release(self, key: str) -> None:
        self.endpoint(key).in_flight -= 1
        self.in_flight -= 1
        self._wake()

    async def __aenter__(self) -> None:
        # `async with limiter:` as with a semaphore (an agent command's run): a slot of the run's
        # concurrency, in priority order, outside any provider's window
        await self.acquire("")

    async def __aexit__(self, *exc) -> None:
        self.release("")

    def slot(self, key: str) -> _Slot:
        return _Slot(self, key)

    def _wake(self) -> None:
        """Hand free slots to the waiters that may start, best priority first (usually the first one
        popped takes the one free slot: O(log n) a call); wake again when the earliest pause ends."""
        loop = asyncio.get_running_loop()
        now, held, pause_ends = loop.time(), [], None
        while self._waiting and self.in_flight < self.size:
            entry = heapq.heappop(self._waiting)
            _, _, key, fut = entry
            if fut.done():  # cancelled while waiting
                continue
            ep = self.endpoint(key)
            if self._free(ep, now):
                self._grant(ep)
                fut.set_result(None)
                continue
            held.append(entry)  # its provider's window is full, or it is paused
            if now < ep.not_before:
                pause_ends = ep.not_before if pause_ends is None else min(pause_ends, ep.not_before)
        for entry in held:
            heapq.heappush(self._waiting, entry)
        if pause_ends is not None and (self._timer is None or self._timer.when() > pause_ends):
            if self._timer is not None:
                self._timer.cancel()
            self._timer = loop.call_at(pause_ends, self._tick)

    def _tick(self) -> None:
        self._timer = None
        self._wake()

    # ---------------------------------------------------------------- what the calls report
    def succeeded(self, key: str, pause: float | None = None) -> None:
        """A call returned: additive increase (one more slot after `window` successes in a row);
        `pause`, when the reply said a rate-limit budget is used up, holds the next calls until it resets."""
        ep = self.endpoint(key)
        ep.successes += 1
        changed = False
        if ep.window < self.size and ep.successes >= int(ep.window):
            ep.window, ep.successes, changed = min(float(self.size), ep.window + 1), 0, True
        if pause:
            self._pause(ep, pause)
            changed = True
        if changed:
            self._wake()
            self._changed()

    def failed(self, key: str, status: int | None, wait: float | None) -> None:
        """A call failed. A 429 halves the window (once per cool-down: the calls already in flight
        when the limit hit say nothing new); a failure that says how long to wait (a 429 or 503
        with Retry-After) pauses every call to that endpoint for that long."""
        ep = self.endpoint(key)
        now = asyncio.get_running_loop().time()
        if status == 429:
            ep.rate_limited += 1
            ep.successes = 0
            if now >= ep.cut_until:
                ep.window = max(1.0, float(int(ep.window) // 2))
                ep.cut_until = now + max(1.0, wait or 0.0)
        if wait:
            self._pause(ep, wait)
        if wait or status == 429:
            self._wake()
            self._changed()

    def _pause(self, ep: Endpoint, seconds: float) -> None:
        ep.not_before = max(ep.not_before, asyncio.get_running_loop().time() + seconds)

    def _changed(self) -> None:
        if self.on_change:
            try:
                self.on_change()
            except Exception:  # noqa: BLE001 — a progress hook must not break a call
                pass

    def notice(self) -> str:
        """One line for a progress display while a provider holds us back ("" when none does)."""
        try:
            now = asyncio.get_running_loop().time()
        except RuntimeError:
            now = time.monotonic()
        out = []
        for key, ep in self._eps.items():
            if int(ep.window) >= self.size and now >= ep.not_before:
                continue
            part = (
                f"{key.split('@')[0]} rate-limited ({ep.rate_limited}x 429): "
                f"concurrency {int(ep.window)}/{self.size}"
            )
            if now < ep.not_before:
                part += f", waiting {ep.not_before - now:.0f} s as asked (Retry-After)"
            out.append(part)
        return "; ".join(out)


class _Slot:
    """`async with limiter.slot(key):` one slot, released on the way out. A plain class rather than
    an asynccontextmanager: it is entered once per model call (two generator objects a call saved)."""

    __slots__ = ("key", "limiter")

    def __init__(self, limiter: Limiter, key: str):
        self.limiter, self.key = limiter, key

    async def __aenter__(self) -> None:
        await self.limiter.acquire(self.key)

    async def __aexit__(self, *exc) -> None:
        self.limiter.release(self.key)


def call_slot(limit, key: str) -> AbstractAsyncContextManager:
    """A slot for one call: a Limiter's (by endpoint and priority), a plain semaphore's, or none."""
    if limit is None:
        return nullcontext()
    if isinstance(limit, Limiter):
        return limit.slot(key)
    return limit
