"""One llama.cpp context per reusable prompt prefix, all over one loaded model.

llama-cpp-python keeps the KV cache of the previous call and re-evaluates only what differs from
it. A run interleaves its calls on the one llama thread (teacher of case 1, candidate of case 1,
judge of case 1, teacher of case 2, …), so one context sees a new prefix every call and evaluates
every prompt from its start. With a context per prefix (the runner prompt + the original; the
runner prompt + the candidate; the judge prompt) each call evaluates only its case.

The extra contexts share the first one's model (weights are loaded, and mmapped, once): a view is
the first `Llama` with its own context, batch and token buffers. Each context costs its KV cache
(about 23 KB per token of `n_ctx` for SmolLM2-135M). ABEQ_LOCAL_CONTEXTS sets how many (default 3;
1 is the old single context), least recently used first to be reassigned.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from dataclasses import dataclass
from typing import Any

# what llama.cpp's own counters say the embedded model did since the process started (the bench
# reads them): prompt tokens given, prompt tokens actually evaluated, and the time that took
PERF = {
    "calls": 0,
    "prompt_tokens": 0,
    "prompt_tokens_evaluated": 0,
    "prompt_eval_ms": 0.0,
    "generated_tokens": 0,
    "generation_ms": 0.0,
    "contexts": 0,
}


def max_contexts() -> int:
    try:
        return max(1, int(os.environ.get("ABEQ_LOCAL_CONTEXTS", "3")))
    except ValueError:
        return 3


def context_view(primary):
    """A Llama that shares `primary`'s loaded model but has its own context (KV cache), batch and
    token buffers: what Llama.__init__ builds after loading the model, built again."""
    import numpy as np
    from llama_cpp import _internals as internals

    view = object.__new__(type(primary))
    view.__dict__.update(primary.__dict__)
    view._stack = contextlib.ExitStack()  # closes this context and batch only, never the shared model
    view._ctx = view._stack.enter_context(
        contextlib.closing(
            internals.LlamaContext(
                model=primary._model, params=primary.context_params, verbose=primary.verbose
            )
        )
    )
    view._batch = view._stack.enter_context(
        contextlib.closing(
            internals.LlamaBatch(
                n_tokens=primary.n_batch,
                embd=0,
                n_seq_max=primary.context_params.n_ctx,
                verbose=primary.verbose,
            )
        )
    )
    view._candidates = internals.LlamaTokenDataArray(n_vocab=primary._n_vocab)
    # _chat_handlers (the model's own chat template, built from its metadata) is shared: a handler
    # takes the Llama it runs on as an argument
    view.cache = None
    view.n_tokens = 0
    view._requires_eval = True
    view.input_ids = np.ndarray(primary.input_ids.shape, dtype=np.intc)
    view.scores = np.ndarray(primary.scores.shape, dtype=np.single)
    view._mirostat_mu = ctypes.c_float(primary._mirostat_mu.value)
    return view


@dataclass
class _Slot:
    llama: Any  # a llama_cpp.Llama (a view of the loaded model)
    prefix: str | None = None
    used: int = 0


class Contexts:
    """The contexts of one loaded model; `for_prefix` picks the one that last served this prefix."""

    def __init__(self, primary, size: int | None = None):
        self.primary = primary
        self.size = size or max_contexts()
        self.slots = [_Slot(primary)]
        self._tick = 0
        PERF["contexts"] += 1

    def for_prefix(self, prefix: str):
        self._tick += 1
        slot = next((s for s in self.slots if s.prefix == prefix), None)
        if slot is None:
            slot = next((s for s in self.slots if s.prefix is None), None)
        if slot is None and len(self.slots) < self.size:
            slot = _Slot(context_view(self.primary))
            self.slots.append(slot)
            PERF["contexts"] += 1
        if slot is None:  # all taken: the least recently used one (llama.cpp still reuses what matches)
            slot = min(self.slots, key=lambda s: s.used)
        slot.prefix, slot.used = prefix, self._tick
        return slot.llama

    def close(self) -> None:
        """Free the views' contexts, then the model (a view must not outlive the model it uses)."""
        for s in reversed(self.slots):
            try:
                s.llama.close()
            except Exception:  # noqa: BLE001 — freeing at exit must not raise
                pass
        self.slots = []


def measured(llm, fn):
    """fn() on context `llm`, with llama.cpp's own counters of what it evaluated: (fn's result,
    prompt tokens evaluated, milliseconds spent on them); the tokens generated and the time that
    took are added to PERF."""
    import llama_cpp

    llama_cpp.llama_perf_context_reset(llm._ctx.ctx)
    out = fn()
    perf = llama_cpp.llama_perf_context(llm._ctx.ctx)
    PERF["generated_tokens"] += int(perf.n_eval)
    PERF["generation_ms"] += float(perf.t_eval_ms)
    return out, int(perf.n_p_eval), float(perf.t_p_eval_ms)
