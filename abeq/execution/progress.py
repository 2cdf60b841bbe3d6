"""A run in progress: its cancel flag (with why it was set) and what it has done, in cases and calls."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field

from ..vocab import CANCELLED, StopReason
from .estimate import time_left


class Stop(threading.Event):
    """A run's cancel flag, with why it was set: 'cancelled' (a person pressed Cancel) or
    'interrupted' (Ctrl-C, SIGTERM, the desk shutting down). Either way no new model call starts."""

    reason: StopReason = CANCELLED

    def stop(self, reason: StopReason = CANCELLED) -> None:
        if not self.is_set():
            self.reason = reason
        self.set()


@dataclass
class Progress:
    """One attempt at a run, counted in cases and in model calls."""

    total: int  # cases
    runner_needed: int = 0  # the calls the run consists of (cached or not)
    judge_needed: int = 0
    done: int = 0  # cases judged or errored
    errors: int = 0  # cases errored
    runner_done: int = 0  # runner calls resolved: made, from the cache, or failed after retries
    judge_done: int = 0
    cached: int = 0  # calls served from the cache
    calls: int = 0  # calls made (sent to a model)
    failed_calls: int = 0
    started: float = field(default_factory=time.time)
    throttle: str = ""  # what a provider's rate limits are doing to the run ("" when nothing)
    stopped_after: str | None = None  # --fail-fast: the regressed case after which no case started
    ended: bool = False  # the attempt ended with cases left undone (stopped early)
    # a runner command's spending is known only as it runs: what its runs made so far cost, to
    # project the rest from (the estimate before the run could not)
    command: bool = False
    runner_cost: float = 0.0
    runner_priced: int = 0  # runner runs made whose cost the agent reported

    def count(self, kind: str, cached: bool, ok: bool, cost: float | None = None) -> None:
        if kind.startswith("runner"):
            self.runner_done += 1
            if not cached and cost is not None:
                self.runner_cost += cost
                self.runner_priced += 1
        else:
            self.judge_done += 1
        if cached:
            self.cached += 1
        else:
            self.calls += 1
        if not ok:
            self.failed_calls += 1

    def as_dict(self) -> dict:
        elapsed = time.time() - self.started
        left = time_left(
            self.runner_done + self.judge_done, self.runner_needed + self.judge_needed, self.calls, elapsed
        )
        return {
            **asdict(self),
            "elapsed": round(elapsed, 2),
            "eta": left,
            "runner_projected": self.projected(),
        }

    def projected(self) -> float | None:
        """What the runner command's remaining runs would spend at the average of its runs so far
        (None before one of them reported a cost, and for other runners)."""
        if not (self.command and self.runner_priced):
            return None
        left = max(0, self.runner_needed - self.runner_done)
        return round(self.runner_cost / self.runner_priced * left, 4)


def stop(flag: threading.Event, reason: StopReason = CANCELLED) -> None:
    """Set a run's cancel flag, saying why when it can carry a reason (a Stop)."""
    if isinstance(flag, Stop):
        flag.stop(reason)
    else:
        flag.set()
