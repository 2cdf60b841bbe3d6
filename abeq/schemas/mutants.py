"""What the mutant-writing model returns (`abeq mutate --model-mutants N`)."""

from __future__ import annotations

import functools

from pydantic import Field, create_model, field_validator

from .core import Strict


class WrittenMutant(Strict):
    """One mutant a model wrote: the whole document with one behaviour weakened or removed."""

    # No string-length keywords: several hosted structured-output modes reject them; checked below.
    text: str = Field(description="the complete mutated document")
    removed_behaviour: str = Field(description="one line: the behaviour now weakened or gone")

    @field_validator("text", "removed_behaviour")
    @classmethod
    def _filled(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v


@functools.lru_cache(maxsize=32)
def mutants_reply(count: int) -> type[Strict]:
    """The reply for `count` mutants: at least one, at most `count` (maxItems in the schema makes a
    small model close the JSON instead of running on)."""
    field = (list[WrittenMutant], Field(min_length=1, max_length=count))
    return create_model("MutantsReply", __base__=Strict, mutants=field)
