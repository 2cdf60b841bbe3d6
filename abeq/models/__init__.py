"""Models: a provider registry, a spec per model, one call path with retries and accounting.

The names below load on first use: a model string is checked (abeq.models.spec) without loading the
call path (asyncio, the HTTP client, the schemas), which a command that calls no model never needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:
    from .ask import Outcome, ask_validated
    from .call import CallPolicy, Completion, complete
    from .check import model_problem, model_refusal
    from .pricing import price
    from .registry import Provider, default_max_tokens, provider_for
    from .spec import DEFAULT_MODEL, ModelSpec

_EXPORTS = {
    "DEFAULT_MODEL": "spec",
    "ModelSpec": "spec",
    "CallPolicy": "call",
    "Completion": "call",
    "complete": "call",
    "ask_validated": "ask",
    "Outcome": "ask",
    "model_problem": "check",
    "model_refusal": "check",
    "price": "pricing",
    "Provider": "registry",
    "provider_for": "registry",
    "default_max_tokens": "registry",
}
__all__ = [
    "DEFAULT_MODEL",
    "ModelSpec",
    "CallPolicy",
    "Completion",
    "complete",
    "ask_validated",
    "Outcome",
    "model_problem",
    "model_refusal",
    "price",
    "Provider",
    "provider_for",
    "default_max_tokens",
]

__getattr__ = exports(__name__, _EXPORTS)
