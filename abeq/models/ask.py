"""Ask a model for a structured reply and keep asking (bounded) until it validates."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypedDict, TypeVar, overload

from pydantic import BaseModel, ValidationError

from ..errors import ModelCallError, json_problem
from .call import CallPolicy, Completion, complete
from .spec import ModelSpec

MAX_ATTEMPTS = 3  # a reply that does not validate is re-asked this many times in all
Reply = TypeVar("Reply", bound=BaseModel)


class Spend(TypedDict):
    """What a model reply cost, as the stored rows spell it (summed over re-asks)."""

    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    latency: float
    attempts: int


class CachedSpend(Spend, total=False):
    """The same with the provider's prompt-cache tokens (a column a stored row may leave NULL)."""

    cache_read_tokens: int | None
    cache_write_tokens: int | None


@dataclass
class Outcome(Generic[Reply]):
    """A validated model reply and what producing it cost (summed over re-asks)."""

    value: Reply
    raw: str
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    latency: float
    attempts: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_saved: float | None = 0.0

    @overload
    def spend(self) -> CachedSpend: ...

    @overload
    def spend(self, *, cache: Literal[False]) -> Spend: ...

    def spend(self, *, cache: bool = True) -> Spend | CachedSpend:
        """What the reply cost, as the stored rows spell it (`cache`: with the prompt-cache tokens)."""
        out: Spend = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
            "latency": self.latency,
            "attempts": self.attempts,
        }
        if cache:
            return {
                **out,
                "cache_read_tokens": self.cache_read_tokens,
                "cache_write_tokens": self.cache_write_tokens,
            }
        return out


def _fmt(e: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors(include_url=False)[:6])


async def ask_validated(
    spec: ModelSpec,
    msgs: list[dict],
    model_cls: type[Reply],
    policy: CallPolicy,
    check: Callable[[Reply], None] | None = None,
    attempts: int = MAX_ATTEMPTS,
) -> Outcome[Reply]:
    """Call the model until its reply validates against model_cls (and `check`), then give up loudly.

    A failed reply is shown back to the model with the validation errors, since re-asking the same
    question at temperature 0 would only return the same reply.
    """
    convo = list(msgs)
    pt = ct = 0
    cost: float | None = 0.0
    latency = 0.0
    read = written = 0  # prompt-cache tokens
    saved: float | None = 0.0  # None once a reply is unpriced
    problem = ""
    for i in range(attempts):
        try:
            c: Completion = await complete(spec, convo, model_cls, policy)
        except ModelCallError as e:  # the replies already paid for are still spent
            raise e.spent(pt, ct, cost) from None
        pt, ct, latency = pt + c.prompt_tokens, ct + c.completion_tokens, latency + c.latency
        cost = None if (cost is None or c.cost is None) else cost + c.cost
        read, written = read + c.cache_read_tokens, written + c.cache_write_tokens
        saved = None if (saved is None or c.cache_saved is None) else saved + c.cache_saved
        try:
            # strict=False: small local models put raw newlines inside JSON strings.
            value = model_cls.model_validate(json.loads(strip_fences(c.text), strict=False))
            if check is not None:
                check(value)
            return Outcome(value, c.text, pt, ct, cost, latency, i + 1, read, written, saved)
        except ValidationError as e:
            problem = _fmt(e)
        except json.JSONDecodeError as e:
            problem = f"not valid JSON ({json_problem(e)})"
        except ValueError as e:
            problem = str(e)
        convo = list(msgs) + [
            {"role": "assistant", "content": c.text[:4000]},
            {
                "role": "user",
                "content": f"That reply was not valid: {problem}. "
                "Reply again with the complete JSON object only.",
            },
        ]
    raise ModelCallError(f"{spec.name}: no valid reply after {attempts} attempts: {problem[:400]}").spent(
        pt, ct, cost
    )


def strip_fences(text: str) -> str:
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        if t.rstrip().endswith("```"):
            t = t.rstrip()[:-3]
    return t
