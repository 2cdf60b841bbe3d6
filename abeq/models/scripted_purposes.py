"""The scripted model's replies per purpose of call, so a test can queue the judge's replies or
answer the runner's calls without matching prompt text itself (scripted.py asks `purpose_of`)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

Reply = str | dict
PurposeHandler = Callable[[str, list, dict | None], Reply | None]
_lock = threading.Lock()


class Purpose:
    """Replies for one purpose of call only (a runner, the judge, the check grader, the drafter, the
    comparator or the mutant writer), told apart by the data blocks abeq's own prompts carry. A queued
    reply or a handler's answer comes before the rules; a handler's None leaves the call to them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.queue: deque[Reply] = deque()
        self.handler: PurposeHandler | None = None
        self.calls: list[dict] = []  # this purpose's calls so far, as scripted.HISTORY has them

    def enqueue(self, *replies: Reply) -> None:
        """The next calls of this purpose get these, in order (then the handler or the rules)."""
        with _lock:
            self.queue.extend(replies)

    def always(self, reply: Reply) -> None:
        """Every call of this purpose gets `reply`."""
        self.handler = lambda model, messages, schema: reply

    def handle(self, fn: PurposeHandler) -> None:
        """fn(model, messages, schema) answers each call of this purpose; None leaves it to the rules."""
        self.handler = fn

    def take(self, call: dict, answered: bool) -> Reply | None:
        """Record a call of this purpose; the queued reply for it, unless it is `answered` already."""
        with _lock:
            self.calls.append(call)
            return self.queue.popleft() if self.queue and not answered else None

    def reset(self) -> None:
        with _lock:
            self.queue.clear()
            self.calls.clear()
        self.handler = None


runner, judge, grader, drafter, comparator, mutator = (
    Purpose(n) for n in ("runner", "judge", "grader", "drafter", "comparator", "mutator")
)
PURPOSES = {p.name: p for p in (runner, judge, grader, drafter, comparator, mutator)}


def purpose_of(blocks: dict, tools: list | None = None) -> Purpose | None:
    """Which of abeq's prompts this is, by its data blocks (the tests `respond_message` makes)."""
    if (tools and "document_path" in blocks) or ("document" in blocks and "case_input" in blocks):
        return runner
    if "original_run" in blocks:
        return judge
    if "run_a" in blocks and "checks" in blocks:
        return grader
    if "original_document" in blocks:
        return drafter
    if "output_a" in blocks:
        return comparator
    if "document_to_mutate" in blocks:
        return mutator
    return None
