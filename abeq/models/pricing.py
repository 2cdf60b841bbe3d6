"""What a call costs, from litellm's price list (read without importing litellm when possible)."""

from __future__ import annotations

import json

from .bootstrap import imported, litellm, litellm_file
from .registry import provider_for

_cost_map: dict | None = None
_registered: dict[str, dict] = {}  # prices given with register_price, seen before litellm is imported


def cost_map() -> dict:
    """litellm's price list. Until litellm is imported for a call, read its offline copy directly
    (~30 ms, against seconds for the import); it is the file litellm itself loads offline."""
    global _cost_map
    ll = imported()
    if ll is not None:
        return ll.model_cost  # includes anything a user registered
    if _cost_map is None:
        backup = litellm_file("model_prices_and_context_window_backup.json")
        try:
            if backup is None:  # litellm is not installed: importing it says so
                return litellm().model_cost
            _cost_map = json.loads(backup.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return litellm().model_cost
    return _cost_map


def model_info(model: str) -> dict | None:
    """The model's entry in the price list (by its full name, then without the provider prefix)."""
    for name in (model, model.split("/", 1)[-1]):
        info = _registered.get(name) or cost_map().get(name)
        if isinstance(info, dict):
            return info
    return None


def register_price(model: str, info: dict) -> None:
    """Give a model a price (litellm's keys: input_cost_per_token, output_cost_per_token,
    cache_read_input_token_cost, cache_creation_input_token_cost, …), for abeq's own transport and,
    through litellm.register_model, for litellm's cost calculation too."""
    _registered[model] = dict(info)
    litellm().register_model({model: {"litellm_provider": model.split("/", 1)[0], "mode": "chat", **info}})


def price(
    model: str, prompt_tokens: int, completion_tokens: int, *, cache_read: int = 0, cache_write: int = 0
) -> float | None:
    """Dollars from litellm's price list; 0 for the in-process models, None when the model is unpriced.

    `prompt_tokens` counts every input token; `cache_read` / `cache_write` of them were read from /
    written to the provider's prompt cache and are billed at their own rates (the input rate when
    the list has none for the model)."""
    if provider_for(model).in_process:
        return 0.0
    info = model_info(model)
    if info is None or "input_cost_per_token" not in info:
        return None
    rate = info.get("input_cost_per_token") or 0
    read = info.get("cache_read_input_token_cost")
    write = info.get("cache_creation_input_token_cost")
    plain = max(0, prompt_tokens - cache_read - cache_write)
    return (
        plain * rate
        + cache_read * (rate if read is None else read)
        + cache_write * (rate if write is None else write)
        + completion_tokens * (info.get("output_cost_per_token") or 0)
    )
