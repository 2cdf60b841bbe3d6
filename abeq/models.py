"""The one call path to every model: litellm (imported lazily) plus our retry and accounting.

Built-in providers (`local/…` embedded llama.cpp, `scripted/…` test double) are litellm custom
providers, so they travel exactly the path a hosted model does.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import os
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .errors import ModelCallError

DEFAULT_MODEL = "local/smollm2"
BUILTIN_PROVIDERS = ("local", "scripted")  # in-process: no network, no price


def is_builtin(model: str) -> bool:
    """One of abeq's in-process models (the embedded one, the scripted test double)."""
    return model.split("/", 1)[0] in BUILTIN_PROVIDERS
RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_litellm = None
_lock = threading.Lock()


def offline_env() -> None:
    """litellm reaches for the network at import unless told not to."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


def litellm():
    """Import litellm once, offline, quiet, with abeq's providers registered."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _lock:
        if _litellm is None:
            offline_env()
            import litellm as ll

            ll.suppress_debug_info = True
            ll.telemetry = False
            if not os.environ.get("LITELLM_LOG"):
                # litellm warns each time a new event loop (a new run in the same process) takes
                # over its logging worker; harmless, and noise in a CLI or the desk's log.
                import logging

                logging.getLogger("LiteLLM").setLevel(logging.ERROR)
            from .providers import register_all

            register_all(ll)
            _litellm = ll
    return _litellm


def litellm_file(*parts: str) -> Optional[Path]:
    """A path inside the installed litellm package, found without importing it (seconds); None
    when litellm is not installed."""
    found = importlib.util.find_spec("litellm")  # locates the package without running it
    return Path(found.origin).parent.joinpath(*parts) if found and found.origin else None


_cost_map: Optional[dict] = None


def cost_map() -> dict:
    """litellm's price list. Until litellm is imported for a call, read its offline copy directly
    (~30 ms, against seconds for the import); it is the file litellm itself loads offline."""
    global _cost_map
    if _litellm is not None:
        return _litellm.model_cost  # includes anything a user registered
    if _cost_map is None:
        try:
            _cost_map = json.loads(litellm_file("model_prices_and_context_window_backup.json")
                                   .read_text(encoding="utf-8"))
        except (AttributeError, OSError, ValueError):
            return litellm().model_cost
    return _cost_map


def price(model: str, prompt_tokens: int, completion_tokens: int) -> Optional[float]:
    """Dollars from litellm's price list; 0 for the built-in models, None when the model is unpriced."""
    if is_builtin(model):
        return 0.0
    table = cost_map()
    info = table.get(model) or table.get(model.split("/", 1)[-1])
    if not isinstance(info, dict) or "input_cost_per_token" not in info:
        return None
    return (prompt_tokens * (info.get("input_cost_per_token") or 0)
            + completion_tokens * (info.get("output_cost_per_token") or 0))


def model_problem(name: str, api_base: Optional[str] = None) -> str:
    """Why no provider can serve this model string ("" when one can), checked before anything runs.

    The built-in providers and OpenAI-compatible endpoints are checked here; any other string is
    put to litellm (imported only then: it takes seconds), which knows every provider it serves.
    """
    provider, slash, rest = name.partition("/")
    if not name.strip() or (slash and not (provider and rest.strip())):
        return "write it as provider/model"
    if api_base and not api_base.startswith(("http://", "https://")) and not is_builtin(name):
        return f"its API base {api_base!r} is not an http:// or https:// URL"
    if provider in FAST_PREFIXES and not slash:
        return f"name the model after the provider ({provider}/MODEL)"
    if provider == "scripted":
        return "" if rest else "name a scripted model, e.g. scripted/rules"
    if provider == "local":
        from .providers.local import resolve_path

        try:
            resolve_path(rest)
        except ModelCallError as e:
            return e.message.removeprefix(name + ": ")
        if importlib.util.find_spec("llama_cpp") is None:
            return "llama-cpp-python is not installed (pip install 'abeq[local]')"
        return ""
    if uses_fast_path(ModelSpec(name=name, api_base=api_base)):
        return ""  # an OpenAI-compatible server: abeq posts to it itself
    ll = litellm()
    try:
        ll.get_llm_provider(name, api_base=api_base)
    except Exception:  # noqa: BLE001 — litellm raises several kinds for "no such provider"
        return "no provider serves this model string"
    if not api_base:
        # a hosted API without its key fails every call; say so before the run. Only plain API-key
        # variables count: cloud credentials (AWS profiles, instance roles) and local servers
        # (Ollama's default address) work without any variable.
        try:
            missing = ll.validate_environment(model=name).get("missing_keys") or []
        except Exception:  # noqa: BLE001
            missing = []
        if missing and all(k.endswith("_API_KEY") for k in missing):
            return f"it needs {' or '.join(missing)} in the environment (keys are read from there, never stored)"
    return ""


@dataclass(frozen=True)
class ModelSpec:
    """A model and everything about calling it that changes its output."""

    name: str = DEFAULT_MODEL
    api_base: Optional[str] = None
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: Optional[int] = 0
    timeout: float = 120.0

    def __post_init__(self):
        if self.api_base is not None and (not self.api_base.strip() or is_builtin(self.name)):
            # the built-in models run in this process: a server address means nothing to them (and
            # must not split their cache from the same model without one)
            object.__setattr__(self, "api_base", None)

    def sampling(self) -> dict:
        """The parts that belong in a cache key: everything that can change what the model says."""
        out = {"model": self.name, "temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}
        if self.api_base:
            # `openai/llama` on two servers can be two different models
            out["api_base"] = self.api_base.rstrip("/")
        if self.name.startswith("local/"):
            from .providers.local import PROVIDER_VERSION, weights_identity

            out["provider"] = PROVIDER_VERSION  # its decoding settings change what it says
            out["weights"] = weights_identity(self.name.split("/", 1)[1])  # a replaced .gguf is another model
        return out

    @property
    def is_local(self) -> bool:
        return is_builtin(self.name)


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Optional[float] = None  # None: the model has no known price
    latency: float = 0.0
    attempts: int = 1


@dataclass
class CallPolicy:
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_cap: float = 8.0
    semaphore: Optional[asyncio.Semaphore] = None
    sleep: Any = field(default=asyncio.sleep)


def _status_of(exc: BaseException) -> Optional[int]:
    for attr in ("status_code", "code"):
        v = getattr(exc, attr, None)
        if isinstance(v, int):
            return v
    return None


def is_retryable(exc: BaseException) -> bool:
    name = type(exc).__name__
    if name in ("Timeout", "APITimeoutError", "APIConnectionError", "RateLimitError",
                "InternalServerError", "ServiceUnavailableError", "TimeoutError", "ClientConnectorError",
                "ServerDisconnectedError", "ClientOSError", "ClientPayloadError", "ServerTimeoutError"):
        return True
    if isinstance(exc, (asyncio.TimeoutError, ConnectionError)):
        return True
    status = _status_of(exc)
    return status in RETRYABLE_STATUS


_NOT_PORTABLE = ("minLength", "maxLength", "minItems", "maxItems", "default")


def _strip(schema, keys):
    if isinstance(schema, dict):
        return {k: _strip(v, keys) for k, v in schema.items() if k not in keys}
    if isinstance(schema, list):
        return [_strip(x, keys) for x in schema]
    return schema


def response_format(model_cls, *, portable: bool) -> dict:
    """The JSON schema a model is asked to follow, derived from the pydantic class.

    Hosted providers' strict modes reject some length keywords, so those are left out for them
    (pydantic still enforces every rule on the reply); local grammars get the full schema.
    """
    schema = json.loads(_schema_json(model_cls, portable))  # each call gets its own copy to change
    return {"type": "json_schema", "json_schema": {"name": model_cls.__name__, "schema": schema, "strict": True}}


@functools.lru_cache(maxsize=None)
def _schema_json(model_cls, portable: bool) -> str:
    # model_json_schema rebuilds the schema every time (~2 ms, half of abeq's CPU per call when it
    # ran per call); a class's schema does not change while the process runs, so derive it once.
    if not portable and hasattr(model_cls, "grammar_schema"):
        schema = model_cls.grammar_schema()  # tighter, for constrained decoding (see JudgeReply)
    else:
        schema = model_cls.model_json_schema()
    schema = _strip(schema, _NOT_PORTABLE) if portable else schema
    _close(schema)
    return json.dumps(schema)


def _close(schema) -> None:
    """Strict JSON-schema modes want additionalProperties false and every property required."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" and "properties" in schema:
            schema["additionalProperties"] = False
            schema["required"] = list(schema["properties"])
        for v in schema.values():
            _close(v)
    elif isinstance(schema, list):
        for x in schema:
            _close(x)


def redact(text: str) -> str:
    """Keep API keys out of anything we store or print."""
    for k, v in os.environ.items():
        if v and len(v) >= 8 and ("KEY" in k or "TOKEN" in k or "SECRET" in k) and v in text:
            text = text.replace(v, "[redacted]")
    return text


FAST_PREFIXES = ("openai", "hosted_vllm")


def uses_fast_path(spec: ModelSpec) -> bool:
    """OpenAI-compatible endpoints get a lean HTTP transport; everything else goes through litellm.

    litellm costs ~13 ms CPU per call here (its SDK stack, cost lookups and logging), which at
    high concurrency stretches a run to ~1.9x its critical path. For `openai/…` or `hosted_vllm/…`
    with an api_base the request and reply are plain OpenAI JSON, so abeq posts it itself, behind
    the same retry, validation and accounting. ABEQ_TRANSPORT=litellm turns this off.
    """
    return (bool(spec.api_base) and spec.name.split("/", 1)[0] in FAST_PREFIXES
            and os.environ.get("ABEQ_TRANSPORT", "fast").lower() != "litellm")


class HTTPStatusError(Exception):
    def __init__(self, status_code: int, body: str):
        self.status_code = status_code
        super().__init__(f"HTTP {status_code}: {redact(body)[:300]}")  # redact first: a cut key would not match


_sessions: dict = {}


async def open_session() -> None:
    """Keep one pooled HTTP session for this event loop until close_sessions (the engine does both)."""
    import aiohttp

    loop = asyncio.get_running_loop()
    if loop not in _sessions or _sessions[loop].closed:
        _sessions[loop] = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300))


async def close_sessions() -> None:
    """Close this event loop's HTTP session (the engine calls it when a run ends)."""
    sess = _sessions.pop(asyncio.get_running_loop(), None)
    if sess is not None:
        await sess.close()


async def _send_fast(spec: ModelSpec, kwargs: dict) -> tuple[str, int, int, Optional[float]]:
    provider, model = spec.name.split("/", 1)
    body = {"model": model, "messages": kwargs["messages"], "temperature": kwargs["temperature"],
            "max_tokens": kwargs["max_tokens"]}
    for k in ("seed", "response_format"):
        if k in kwargs:
            body[k] = kwargs[k]
    headers = {"Content-Type": "application/json"}
    key = os.environ.get("OPENAI_API_KEY") if provider == "openai" else os.environ.get("HOSTED_VLLM_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    import aiohttp

    pooled = _sessions.get(asyncio.get_running_loop())
    sess = pooled if pooled is not None and not pooled.closed else aiohttp.ClientSession()
    try:
        async with sess.post(spec.api_base.rstrip("/") + "/chat/completions", json=body, headers=headers,
                             timeout=aiohttp.ClientTimeout(total=spec.timeout)) as r:
            text = await r.text()
            if r.status >= 400:
                raise HTTPStatusError(r.status, text)
    finally:
        if sess is not pooled:  # a one-off call outside a run
            await sess.close()
    data = json.loads(text)
    usage = data.get("usage") or {}
    content = ((data.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
    pt, ct = usage.get("prompt_tokens", 0) or 0, usage.get("completion_tokens", 0) or 0
    return content, pt, ct, price(spec.name, pt, ct)  # a self-hosted model is not in the list: unpriced


async def _send_litellm(spec: ModelSpec, kwargs: dict) -> tuple[str, int, int, Optional[float]]:
    ll = litellm()
    resp = await ll.acompletion(**kwargs)
    usage = getattr(resp, "usage", None)
    return (resp.choices[0].message.content or "", getattr(usage, "prompt_tokens", 0) or 0,
            getattr(usage, "completion_tokens", 0) or 0, _cost(ll, resp, spec))


async def complete(spec: ModelSpec, messages: list[dict], response_model=None,
                   policy: Optional[CallPolicy] = None) -> Completion:
    """One model call with bounded retries on rate limits, server errors and timeouts."""
    policy = policy or CallPolicy()
    fast = uses_fast_path(spec)
    kwargs: dict = dict(model=spec.name, messages=messages, temperature=spec.temperature,
                        max_tokens=spec.max_tokens, timeout=spec.timeout, num_retries=0)
    if spec.seed is not None:
        kwargs["seed"] = spec.seed
    if not fast:
        # a parameter the provider lacks (Anthropic and Bedrock have no `seed`) is left out, not fatal
        kwargs["drop_params"] = True
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
        if spec.name.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            kwargs["api_key"] = "not-needed"  # the OpenAI client insists on some key
    if response_model is not None:
        kwargs["response_format"] = response_format(response_model, portable=not spec.is_local)
    send = _send_fast if fast else _send_litellm
    last: Optional[BaseException] = None
    for attempt in range(policy.max_retries + 1):
        t0 = time.perf_counter()
        try:
            # An in-process model is computation, not a network peer: cutting it off would leave its
            # thread generating (and holding the model) while the retry waits behind it.
            limit = None if spec.is_local else spec.timeout + 5
            if policy.semaphore is not None:
                async with policy.semaphore:
                    t0 = time.perf_counter()
                    text, pt, ct, cost = await asyncio.wait_for(send(spec, kwargs), limit)
            else:
                text, pt, ct, cost = await asyncio.wait_for(send(spec, kwargs), limit)
        except Exception as e:  # noqa: BLE001 — classified below
            last = e
            if not is_retryable(e) or attempt == policy.max_retries:
                break
            delay = min(policy.backoff_cap, policy.backoff_base * 2**attempt) * (0.5 + random.random() / 2)
            await policy.sleep(delay)
            continue
        return Completion(text=text, prompt_tokens=pt, completion_tokens=ct,
                          cost=0.0 if spec.is_local else cost, latency=time.perf_counter() - t0,
                          attempts=attempt + 1)
    kind = type(last).__name__
    msg = redact(str(last))[:500]
    raise ModelCallError(f"{spec.name}: {kind} after {attempt + 1} attempt(s): {msg}")


def _cost(ll, resp, spec: ModelSpec) -> Optional[float]:
    if spec.is_local:
        return 0.0
    try:
        return float(ll.completion_cost(completion_response=resp))
    except Exception:  # unknown price: say so rather than invent one
        return None
