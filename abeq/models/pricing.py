"""What a call costs, from litellm's price list (read without importing litellm when possible)."""

from __future__ import annotations

import json

from .bootstrap import imported, litellm, litellm_file
from .registry import provider_for

_cost_map: dict | None = None


def cost_map() -> dict:
    """litellm's price list. Until litellm is imported for a call, read its offline copy directly
    (~30 ms, against seconds for the import); it is the file litellm itself loads offline."""
    global _cost_map
    ll = imported()
    if ll is not None:
        return ll.model_cost  # includes anything a user registered
    if _cost_map is None:
        try:
            _cost_map = json.loads(
                litellm_file("model_prices_and_context_window_backup.json").read_text(encoding="utf-8")
            )
        except (AttributeError, OSError, ValueError):
            return litellm().model_cost
    return _cost_map


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """Dollars from litellm's price list; 0 for the in-process models, None when the model is unpriced."""
    if provider_for(model).in_process:
        return 0.0
    table = cost_map()
    info = table.get(model) or table.get(model.split("/", 1)[-1])
    if not isinstance(info, dict) or "input_cost_per_token" not in info:
        return None
    return prompt_tokens * (info.get("input_cost_per_token") or 0) + completion_tokens * (
        info.get("output_cost_per_token") or 0
    )
