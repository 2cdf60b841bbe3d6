"""One model call: retries with backoff on rate limits, server errors and timeouts, then accounting.

The call goes over abeq's HTTP transport for OpenAI-compatible servers (see http.py) and through
litellm for everything else, the in-process providers included.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelCallError
from .bootstrap import imported, litellm
from .caching import for_provider
from .http import redact, send_fast, uses_fast_path
from .ratelimit import MAX_RETRY_AFTER, call_slot, endpoint_of, exhausted_reset, headers_of, retry_after
from .schema import response_format
from .spec import ModelSpec
from .usage import Usage, from_litellm, saved

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_RETRYABLE_NAMES = {
    "Timeout",
    "APITimeoutError",
    "APIConnectionError",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "TimeoutError",
    "ClientConnectorError",
    "ServerDisconnectedError",
    "ClientOSError",
    "ClientPayloadError",
    "ServerTimeoutError",
}


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None  # None: the model has no known price
    latency: float = 0.0
    attempts: int = 1
    tool_calls: list[dict] = field(default_factory=list)  # OpenAI-shaped, when tools were offered
    cache_read_tokens: int = 0  # of prompt_tokens: read from the provider's prompt cache
    cache_write_tokens: int = 0  # of prompt_tokens: written to it
    cache_saved: float | None = 0.0  # dollars the cache saved (None: unpriced)


class Cancelled(Exception):
    """The run was cancelled before this call (or its next attempt) started."""


@dataclass
class CallPolicy:
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_cap: float = 8.0
    semaphore: Any = None  # an asyncio.Semaphore, or a ratelimit.Limiter (priority, AIMD, Retry-After)
    sleep: Any = field(default=asyncio.sleep)
    cancel: Any = None  # anything with is_set() (a threading.Event): once set, no attempt starts

    def check(self) -> None:
        """Raise Cancelled when the run was cancelled: called right before a request goes out."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()


def _status_of(exc: BaseException) -> int | None:
    for attr in ("status_code", "code"):
        v = getattr(exc, attr, None)
        if isinstance(v, int):
            return v
    return None


def is_retryable(exc: BaseException) -> bool:
    if type(exc).__name__ in _RETRYABLE_NAMES or isinstance(exc, (asyncio.TimeoutError, ConnectionError)):
        return True
    return _status_of(exc) in RETRYABLE_STATUS


async def _send_litellm(spec: ModelSpec, kwargs: dict) -> tuple[str, Usage, Any, list[dict]]:
    # The first call imports litellm: seconds, half a minute on a loaded machine. On a thread of
    # its own, so the event loop goes on (the run's heartbeat and cancel watch with it); on the loop,
    # a reader saw the live run's heartbeat go stale and called it interrupted.
    ll = imported() or await asyncio.to_thread(litellm)
    resp = await ll.acompletion(**kwargs)
    message = resp.choices[0].message
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.function.name, "arguments": c.function.arguments},
        }
        for c in (getattr(message, "tool_calls", None) or [])
    ]
    pt, ct, read, write = from_litellm(getattr(resp, "usage", None))
    cost = _cost(ll, resp, spec)  # litellm prices cache reads and writes at their own rates
    headers = (getattr(resp, "_hidden_params", None) or {}).get("additional_headers")
    usage = Usage(pt, ct, read, write, cost, 0.0 if spec.is_local else saved(spec.name, pt, ct, cost))
    return message.content or "", usage, headers, calls


def call_kwargs(
    spec: ModelSpec, messages: list[dict], response_model=None, *, fast: bool, tools: dict | None = None
) -> dict:
    """The keyword arguments of one call, as litellm takes them (the HTTP transport reads the same)."""
    kwargs: dict = dict(
        model=spec.name,
        messages=for_provider(spec, messages),
        temperature=spec.temperature,
        max_tokens=spec.max_tokens,
        timeout=spec.timeout,
        num_retries=0,
    )
    if spec.seed is not None:
        kwargs["seed"] = spec.seed
    if not fast:
        # a parameter the provider lacks (Anthropic and Bedrock have no `seed`) is left out, not fatal
        kwargs["drop_params"] = True
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
        if spec.provider.placeholder_key and not os.environ.get(spec.provider.key_env):
            kwargs["api_key"] = "not-needed"  # the OpenAI client insists on some key
    if response_model is not None:
        kwargs["response_format"] = response_format(response_model, portable=not spec.is_local)
    if tools:  # {"tools": [...], "tool_choice": ...}: function calling (the tools runner mode)
        kwargs.update(tools)
    return kwargs


async def complete(
    spec: ModelSpec,
    messages: list[dict],
    response_model=None,
    policy: CallPolicy | None = None,
    tools: dict | None = None,
) -> Completion:
    """One model call with bounded retries on rate limits, server errors and timeouts.
    `tools`: {"tools": [...], "tool_choice": "auto" | "none"} offers function calling."""
    policy = policy or CallPolicy()
    fast = uses_fast_path(spec)
    kwargs = call_kwargs(spec, messages, response_model, fast=fast, tools=tools)
    send = send_fast if fast else _send_litellm
    last: BaseException | None = None
    limiter, endpoint = policy.semaphore, endpoint_of(spec)
    asked = ""
    for attempt in range(policy.max_retries + 1):
        t0 = time.perf_counter()
        try:
            # An in-process model is computation, not a network peer: cutting it off would leave its
            # thread generating (and holding the model) while the retry waits behind it.
            limit = None if spec.is_local else spec.timeout + 5
            async with call_slot(limiter, endpoint):
                # checked after the wait for a slot, not before it: a call queued behind the
                # concurrency limit when Cancel is pressed must not start once a slot frees
                policy.check()
                t0 = time.perf_counter()
                text, usage, headers, calls = await _within(send(spec, kwargs), limit)
        except Cancelled:
            raise
        except Exception as e:  # noqa: BLE001 — classified below
            last = e
            status = _status_of(e)
            # the wait the server asked for (Retry-After on a 429 or 503; litellm reports some 503s
            # as 500s, so on any retryable failure): never retried sooner, and the run's other
            # calls to this endpoint wait too
            wait = retry_after(headers_of(e)) if is_retryable(e) else None
            if hasattr(limiter, "failed"):
                limiter.failed(endpoint, status, wait)
            if not is_retryable(e) or attempt == policy.max_retries:
                break
            if wait is not None and wait > MAX_RETRY_AFTER:
                asked = f" (the server asked to wait {wait:.0f} s before retrying)"
                break
            delay = min(policy.backoff_cap, policy.backoff_base * 2**attempt) * (0.5 + random.random() / 2)
            if wait is not None:
                delay = wait + random.random() * min(1.0, 0.1 * wait)  # spread, never earlier
            await policy.sleep(delay)
            continue
        if hasattr(limiter, "succeeded"):
            limiter.succeeded(endpoint, exhausted_reset(headers))
        return Completion(
            text=text,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost=0.0 if spec.is_local else usage.cost,
            latency=time.perf_counter() - t0,
            attempts=attempt + 1,
            tool_calls=calls,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            cache_saved=0.0 if spec.is_local else usage.cache_saved,
        )
    kind = type(last).__name__
    msg = redact(str(last))[:500]
    raise ModelCallError(f"{spec.name}: {kind} after {attempt + 1} attempt(s){asked}: {msg}")


async def _within(aw, limit: float | None):
    """`aw`, cut off with TimeoutError after `limit` seconds (None: never). asyncio.timeout (3.11+)
    where there is one: wait_for wraps every call in a task of its own."""
    if limit is None:
        return await aw
    if _TIMEOUT is None:
        return await asyncio.wait_for(aw, limit)
    async with _TIMEOUT(limit):
        return await aw


_TIMEOUT = getattr(asyncio, "timeout", None)


def _cost(ll, resp, spec: ModelSpec) -> float | None:
    if spec.is_local:
        return 0.0
    try:
        return float(ll.completion_cost(completion_response=resp))
    except Exception:  # noqa: BLE001 — unknown price: say so rather than invent one
        return None
