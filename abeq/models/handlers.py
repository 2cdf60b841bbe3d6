"""Shared by the in-process providers' litellm handlers: filling a response, reading the schema."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any


def fill_response(
    model_response,
    model: str,
    text: str,
    prompt_tokens: int,
    completion_tokens: int,
    tool_calls=None,
    cached_tokens: int = 0,
):
    """`cached_tokens`: of the prompt, those reused rather than evaluated (the embedded model's KV cache)."""
    import litellm

    model_response.choices[0].message.content = text
    if tool_calls:
        from litellm.types.utils import ChatCompletionMessageToolCall, Function

        model_response.choices[0].message.tool_calls = [
            ChatCompletionMessageToolCall(id=c["id"], type="function", function=Function(**c["function"]))
            for c in tool_calls
        ]
        model_response.choices[0].finish_reason = "tool_calls"
    model_response.model = model
    details: dict[str, Any] = (
        {"prompt_tokens_details": {"cached_tokens": cached_tokens}} if cached_tokens else {}
    )
    model_response.usage = litellm.Usage(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
        **details,
    )
    return model_response


def schema_from_optional_params(optional_params: dict):
    rf = (optional_params or {}).get("response_format")
    if isinstance(rf, dict):
        if rf.get("type") == "json_schema":
            return (rf.get("json_schema") or {}).get("schema")
        if "schema" in rf:
            return rf["schema"]
    return None


def in_process_handler(base: Any, reply: Callable[..., Any], areply: Callable[..., Any] | None = None) -> Any:
    """A litellm CustomLLM for an in-process provider. `reply(model, messages, model_response,
    optional_params)` fills the response; `areply` is its async form (by default `reply` itself,
    for a provider that never waits)."""

    class InProcessLLM(base):
        def completion(self, model, messages, api_base, custom_prompt_dict, model_response, *a, **kw):
            return reply(model, messages, model_response, _optional_params(a, kw))

        def acompletion(self, model, messages, api_base, custom_prompt_dict, model_response, *a, **kw):
            opts = _optional_params(a, kw)

            async def answer():
                if areply is None:
                    return reply(model, messages, model_response, opts)
                return await areply(model, messages, model_response, opts)

            return Deferred(answer)

    return InProcessLLM()


class Deferred(Coroutine):
    """A coroutine made only when it is awaited. litellm calls a provider's `acompletion` in a worker
    thread and awaits what it returns in the caller; a caller cancelled in between (a mutant's first
    kill stops its cases in flight) drops it, and a coroutine dropped before it started prints
    "coroutine … was never awaited". Dropped unstarted, this one leaves nothing to warn of (no reply
    was made either)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make, self._coro = make, None

    def _started(self):
        if self._coro is None:
            self._coro = self._make()
        return self._coro

    def send(self, value):
        return self._started().send(value)

    def throw(self, *exc):
        return self._started().throw(*exc)

    def close(self) -> None:
        if self._coro is not None:
            self._coro.close()

    def __await__(self):
        return self._started().__await__()


def _optional_params(a, kw):
    # litellm passes these after model_response: print_verbose, encoding, api_key, logging_obj,
    # optional_params (by position in the releases we pin, by name in others)
    if "optional_params" in kw:
        return kw["optional_params"] or {}
    return (a[4] if len(a) > 4 else None) or {}


def make_scripted_handler(base):
    """The litellm handler of `scripted/…`: replies come from abeq.models.scripted's instance of
    that name (its queued replies, a test's own handler, or its rules)."""
    from .scripted import respond_message
    from .scripted.samples import SEED

    def reply(model, messages, model_response, optional_params):
        opts = optional_params
        token = SEED.set(opts.get("seed") or 0)  # the runner's sample (scripted/samples.py)
        try:
            msg = respond_message(
                model, messages, schema_from_optional_params(opts), opts.get("tools"), opts.get("tool_choice")
            )
        finally:
            SEED.reset(token)
        text = msg.get("content") or ""
        pt = sum(len(str(m.get("content") or "")) for m in messages) // 4
        return fill_response(
            model_response, f"scripted/{model}", text, pt, max(1, len(text) // 4), msg.get("tool_calls")
        )

    async def areply(model, messages, model_response, optional_params):
        # ABEQ_SCRIPTED_LATENCY=0.05: each reply takes that long, as a real model's would (a test of
        # runs that overlap needs calls that take time); the replies themselves are unchanged
        latency = float(os.environ.get("ABEQ_SCRIPTED_LATENCY") or 0)
        if latency > 0:
            await asyncio.sleep(latency)
        return reply(model, messages, model_response, optional_params)

    return in_process_handler(base, reply, areply)
