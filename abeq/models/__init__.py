"""Models: a provider registry, a spec per model, one call path with retries and accounting."""

from .ask import Outcome, ask_validated
from .call import CallPolicy, Completion, complete
from .check import model_problem, model_refusal
from .pricing import price
from .registry import Provider, default_max_tokens, provider_for
from .spec import DEFAULT_MODEL, ModelSpec

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
