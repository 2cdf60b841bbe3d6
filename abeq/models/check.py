"""Whether a model string can be served, checked before anything runs or is stored."""

from __future__ import annotations

from .bootstrap import litellm
from .http import uses_fast_path
from .registry import provider_for
from .spec import ModelSpec


def model_problem(name: str, api_base: str | None = None) -> str:
    """Why no provider can serve this model string ("" when one can).

    abeq's own providers and OpenAI-compatible endpoints are checked here; any other string is
    put to litellm (imported only then: it takes seconds), which knows every provider it serves.
    """
    prefix, slash, rest = name.partition("/")
    if not name.strip() or (slash and not (prefix and rest.strip())):
        return "write it as provider/model"
    provider = provider_for(name)
    if api_base and not api_base.startswith(("http://", "https://")) and not provider.in_process:
        return f"its API base {api_base!r} is not an http:// or https:// URL"
    if provider.fast_http and not slash:
        return f"name the model after the provider ({prefix}/MODEL)"
    if provider.check is not None:
        return provider.check(rest)
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
            return (
                f"it needs {' or '.join(missing)} in the environment (keys are read from there, never stored)"
            )
    return ""


def model_refusal(name: str, option: str, api_base: str | None = None) -> tuple[str, str] | None:
    """(message, what to do) when the model string cannot be served, else None."""
    problem = model_problem(name, api_base)
    return (f"{option} {name}: {problem}", provider_for(name).hint) if problem else None
