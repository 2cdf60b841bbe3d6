"""The scripted runner's samples: a document's list item ending "{kept K/N}" is followed by the
runner of seed s only when s mod N < K, so over the seeds 0..N-1 (the samples of --runner-samples N,
each its own seed) it is kept in exactly K of N runs. A test writes a candidate that keeps a rule
some of the time as a document, and the real pipeline runs it.

The seed is the call's own (litellm hands it to the scripted handler, which sets `SEED` for the
reply it makes); a call that gives none is seed 0."""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextvars import ContextVar

# the seed of the call being answered (abeq.models.handlers sets it; 0 when the call gives none)
SEED: ContextVar[int] = ContextVar("scripted_seed", default=0)

_KEPT = re.compile(r"\s*\{kept (\d+)/(\d+)\}\s*$")


def kept(step: str, seed: int) -> tuple[str, bool]:
    """The step without its "{kept K/N}" mark, and whether the runner of this seed follows it."""
    m = _KEPT.search(step)
    if not m:
        return step, True
    k, n = int(m.group(1)), max(1, int(m.group(2)))
    return step[: m.start()], seed % n < k


def kept_steps(steps: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(section, step) pairs the runner of the current call's seed follows, marks removed."""
    seed = SEED.get()
    return [(section, text) for section, step in steps for text, keep in [kept(step, seed)] if keep]
