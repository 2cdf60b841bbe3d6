"""What one call consumed, as the provider reported it: tokens, prompt-cache reads and writes, and
their price, each at its own rate.

Providers count cached input inside the prompt tokens (OpenAI: `prompt_tokens_details.
cached_tokens`; Anthropic through litellm: `cache_read_input_tokens` and
`cache_creation_input_tokens`, already added into `prompt_tokens`). A cache read is billed at
`cache_read_input_token_cost`, a cache write at `cache_creation_input_token_cost` (dearer than
plain input on Anthropic); `cache_saved` is what the call would have cost with no cache at all,
minus what it cost (negative when writes outweighed reads).
"""

from __future__ import annotations

from dataclasses import dataclass

from .pricing import price


@dataclass
class Usage:
    prompt_tokens: int = 0  # every input token, cached ones included
    completion_tokens: int = 0
    cache_read_tokens: int = 0  # input served from the provider's prompt cache
    cache_write_tokens: int = 0  # input written to it
    cost: float | None = None  # None: the model has no known price
    cache_saved: float | None = 0.0  # None when the price (with or without the cache) is unknown

    @classmethod
    def priced(cls, model: str, pt: int, ct: int, cache_read: int = 0, cache_write: int = 0) -> Usage:
        """Tokens priced from the price list, cache reads and writes at their own rates."""
        cost = price(model, pt, ct, cache_read=cache_read, cache_write=cache_write)
        return cls(pt, ct, cache_read, cache_write, cost, saved(model, pt, ct, cost))


def saved(model: str, pt: int, ct: int, cost: float | None) -> float | None:
    """What the prompt cache saved on a call that cost `cost`: its price with no cache, minus that."""
    full = price(model, pt, ct)
    return None if full is None or cost is None else full - cost


def _int(v) -> int:
    try:
        return max(0, int(v or 0))
    except (TypeError, ValueError):
        return 0


def from_openai_json(usage: dict | None) -> tuple[int, int, int, int]:
    """(prompt, completion, cache read, cache write) tokens from an OpenAI-style `usage` object."""
    u = usage if isinstance(usage, dict) else {}
    given = u.get("prompt_tokens_details")
    details = given if isinstance(given, dict) else {}
    read = _int(details.get("cached_tokens")) or _int(u.get("prompt_cache_hit_tokens"))  # DeepSeek's name
    write = _int(details.get("cache_creation_tokens")) or _int(u.get("cache_creation_input_tokens"))
    return _int(u.get("prompt_tokens")), _int(u.get("completion_tokens")), read, write


def from_litellm(usage) -> tuple[int, int, int, int]:
    """The same from litellm's Usage object (any provider: litellm maps Anthropic's fields onto it)."""
    if usage is None:
        return 0, 0, 0, 0
    details = getattr(usage, "prompt_tokens_details", None)
    read = _int(getattr(details, "cached_tokens", 0)) or _int(getattr(usage, "cache_read_input_tokens", 0))
    write = _int(getattr(usage, "cache_creation_input_tokens", 0)) or _int(
        getattr(details, "cache_creation_tokens", 0)
    )
    return _int(getattr(usage, "prompt_tokens", 0)), _int(getattr(usage, "completion_tokens", 0)), read, write
