"""Every model provider abeq knows, described once: a model string's prefix is looked up here,
never tested by name elsewhere.

The in-process providers (`local/…` the embedded llama.cpp model, `scripted/…` the test double,
`baseline/…` the trivial reference judges of calibration)
are litellm custom providers, registered exactly as a third-party one would be, so they travel
the path a hosted model does. OpenAI-compatible servers (`openai/…`, `hosted_vllm/…` with an api
base) go over abeq's own HTTP transport; every other string is litellm's to serve.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

# reply-length limits per purpose (a run's runner and judge calls, a drafted set, a comparison)
HOSTED_LIMITS: Mapping[str, int] = {"run": 2048, "draft": 4096, "compare": 2048}
EMBEDDED_LIMITS: Mapping[str, int] = {"run": 700, "draft": 1200, "compare": 900}
MODEL_HINT = (
    "Write it as provider/model (e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, "
    "ollama/llama3), or local/smollm2."
)


@dataclass(frozen=True)
class Provider:
    """What abeq needs to know about one model-string prefix."""

    prefix: str  # "" for every provider litellm serves itself
    in_process: bool = False  # runs in this process: no network, no price, no api base
    max_tokens: Mapping[str, int] = field(default_factory=lambda: dict(HOSTED_LIMITS))
    fast_http: bool = False  # OpenAI-compatible JSON over abeq's own HTTP client when an api base is given
    key_env: str = ""  # the API key variable sent by that client
    placeholder_key: bool = False  # its litellm client insists on some key even for a keyless server
    check: Callable[[str], str] | None = (
        None  # why the name after the prefix cannot be served ("" when it can)
    )
    identity: Callable[[str], dict] | None = None  # what else identifies the model in a cache key
    handler: Callable[[type], object] | None = None  # builds the litellm CustomLLM for an in-process provider
    hint: str = MODEL_HINT  # what to write instead, when a model string is refused
    caution: str = ""  # what a user should know about its output
    samples_caution: str = ""  # what a user should know before running it many times (--runner-samples)
    tools: bool = True  # can call functions (the tools runner mode)
    # the request marks where its reusable prompt prefix ends (cache_control): Anthropic caches a
    # prefix only where marked; the embedded model keeps a llama.cpp context per marked prefix.
    # Every other provider is sent plain text (OpenAI-style servers cache prefixes by themselves).
    cache_marks: bool = False


def _local_check(rest: str) -> str:
    import importlib.util

    from ..errors import ModelCallError
    from .local import resolve_path

    try:
        resolve_path(rest)
    except ModelCallError as e:
        return e.message.removeprefix(f"local/{rest}: ")
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install 'abeq[local]')"
    return ""


def _local_identity(rest: str) -> dict:
    from .local import PROVIDER_VERSION, weights_identity

    # its decoding settings change what it says, and a replaced .gguf is another model
    return {"provider": PROVIDER_VERSION, "weights": weights_identity(rest)}


def _local_handler(base):
    from .local import make_local_handler

    return make_local_handler(base)


def _baseline_handler(base):
    from .baseline import make_baseline_handler

    return make_baseline_handler(base)


def _baseline_check(rest: str) -> str:
    from .baseline import check_name

    return check_name(rest)


def _scripted_handler(base):
    from .handlers import make_scripted_handler

    return make_scripted_handler(base)


LITELLM = Provider(prefix="")
PROVIDERS: dict[str, Provider] = {
    p.prefix: p
    for p in (
        Provider(
            prefix="local",
            in_process=True,
            max_tokens=EMBEDDED_LIMITS,
            check=_local_check,
            identity=_local_identity,
            handler=_local_handler,
            hint="Use local/smollm2 or local/<path to an existing .gguf file>.",
            cache_marks=True,
            caution="the embedded model is tiny (135M): what it says is for trying abeq, not for decisions. "
            "Use a stronger model for real reviews.",
            samples_caution="--runner-samples on the embedded model: each sample is a full generation on "
            "this machine's CPU, and how a 135M model varies says nothing about how a real model does, so "
            "its samples are not worth the time. Sample a hosted or served model instead.",
            tools=False,  # llama.cpp's chat handler here answers in text only
        ),
        Provider(
            prefix="scripted",
            in_process=True,
            handler=_scripted_handler,
            check=lambda rest: "" if rest else "name a scripted model, e.g. scripted/rules",
            caution="scripted/… is abeq's deterministic test double: its answers mean nothing about a "
            "real model.",
        ),
        Provider(
            prefix="baseline",
            in_process=True,
            handler=_baseline_handler,
            check=_baseline_check,
            hint="Use baseline/always-regressed, baseline/length or baseline/self-report (judges).",
            caution="baseline/… is a trivial reference judge that reads no behaviour: calibrate it to "
            "see the floor a real judge must beat, never to judge a rewrite.",
            tools=False,
        ),
        Provider(prefix="openai", fast_http=True, key_env="OPENAI_API_KEY", placeholder_key=True),
        Provider(prefix="anthropic", cache_marks=True),
        Provider(prefix="hosted_vllm", fast_http=True, key_env="HOSTED_VLLM_API_KEY"),
    )
}


def provider_for(model: str) -> Provider:
    """The provider that serves this model string (litellm's own for any prefix abeq has no entry for)."""
    return PROVIDERS.get(model.split("/", 1)[0], LITELLM)


def default_max_tokens(model: str, purpose: str = "run") -> int:
    """The reply-length limit for a purpose ("run", "draft", "compare") on this model's provider."""
    return provider_for(model).max_tokens[purpose]


def register_all(ll) -> None:
    """Register every in-process provider with litellm as a custom provider."""
    from litellm import CustomLLM

    mine = [
        {"provider": p.prefix, "custom_handler": p.handler(CustomLLM)}
        for p in PROVIDERS.values()
        if p.handler
    ]
    names = {m["provider"] for m in mine}
    existing = [p for p in (ll.custom_provider_map or []) if p["provider"] not in names]
    ll.custom_provider_map = existing + mine
    # litellm resolves custom providers when the map is set through its setter helpers.
    try:
        from litellm.utils import custom_llm_setup

        custom_llm_setup()
    except Exception:  # noqa: BLE001
        pass
