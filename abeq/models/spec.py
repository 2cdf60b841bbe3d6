"""A model and everything about calling it that changes its output."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from .registry import Provider, default_max_tokens, provider_for

DEFAULT_MODEL = "local/smollm2"


@dataclass(frozen=True)
class ModelSpec:
    """A model and everything about calling it that changes its output."""

    name: str = DEFAULT_MODEL
    api_base: str | None = None
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = 0
    timeout: float = 120.0

    def __post_init__(self) -> None:
        if self.api_base is not None and (not self.api_base.strip() or self.provider.in_process):
            # the in-process models run here: a server address means nothing to them (and must
            # not split their cache from the same model without one)
            object.__setattr__(self, "api_base", None)

    @classmethod
    def for_purpose(
        cls,
        name: str | None,
        purpose: str = "run",
        *,
        api_base: str | None = None,
        max_tokens: int | None = None,
        **kw: Any,
    ) -> ModelSpec:
        """A spec with the reply limit its provider uses for this purpose, unless one is given."""
        name = (name or "").strip() or DEFAULT_MODEL
        return cls(
            name=name,
            api_base=(api_base or "").strip() or None,
            max_tokens=max_tokens or default_max_tokens(name, purpose),
            **kw,
        )

    @functools.cached_property  # asked ~10 times a call; the name never changes (frozen)
    def provider(self) -> Provider:
        return provider_for(self.name)

    @property
    def is_local(self) -> bool:
        """Runs in this process (the embedded model, the scripted test double)."""
        return self.provider.in_process

    def sampling(self) -> dict:
        """The parts that belong in a cache key: everything that can change what the model says."""
        out = {
            "model": self.name,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }
        if self.api_base:
            # `openai/llama` on two servers can be two different models
            out["api_base"] = self.api_base.rstrip("/")
        identity = self.provider.identity
        if identity is not None:
            out.update(identity(self.name.split("/", 1)[1]))
        return out
