"""Built-in model providers, registered with litellm exactly as a third-party one would be."""

from __future__ import annotations


def _handler_base():
    from litellm import CustomLLM

    return CustomLLM


def register_all(ll) -> None:
    from .local import make_local_handler
    from .scripted import make_scripted_handler

    base = _handler_base()
    mine = [{"provider": "local", "custom_handler": make_local_handler(base)},
            {"provider": "scripted", "custom_handler": make_scripted_handler(base)}]
    existing = [p for p in (ll.custom_provider_map or []) if p["provider"] not in ("local", "scripted")]
    ll.custom_provider_map = existing + mine
    # litellm resolves custom providers when the map is set through its setter helpers.
    try:
        from litellm.utils import custom_llm_setup

        custom_llm_setup()
    except Exception:
        pass


def fill_response(model_response, model: str, text: str, prompt_tokens: int, completion_tokens: int):
    import litellm

    model_response.choices[0].message.content = text
    model_response.model = model
    model_response.usage = litellm.Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                         total_tokens=prompt_tokens + completion_tokens)
    return model_response


def schema_from_optional_params(optional_params: dict):
    rf = (optional_params or {}).get("response_format")
    if isinstance(rf, dict):
        if rf.get("type") == "json_schema":
            return (rf.get("json_schema") or {}).get("schema")
        if "schema" in rf:
            return rf["schema"]
    return None
