"""`scripted/<name>`: abeq's deterministic test double, a provider like any other.

Each scripted model is an instance (`ScriptedModel`) with its own state, as inspect_ai's `mockllm`
is: the calls it was asked (`history`), replies queued for its next calls (`enqueue`), a `handler`
that may answer a call, and the same per purpose of call (`judge.enqueue(...)`,
`runner.always(reply)`, `grader.handle(fn)`, `judge.calls`). `scripted/<name>` (and a loopback server's
model of that name) is answered by `model(name)`, made on first use; `forget()` drops them all, so
each test starts with new ones (tests/conftest.py), and `install(name, rules)` puts in one with
other rules.

What it answers when nothing is queued comes from its rules: by default those that read abeq's own
prompts (rules.py beside this module, loaded when a scripted model first needs them). This module
knows no prompt; the rules do, and they also say which purpose a call serves. Its answers mean
nothing about real models.
"""

from __future__ import annotations

import importlib
import threading
from collections import deque
from collections.abc import Callable
from types import ModuleType
from typing import Any

Reply = str | dict
Handler = Callable[[str, list, dict | None], Reply | None]
PURPOSE_NAMES = ("runner", "judge", "grader", "drafter", "comparator", "mutator")


class Purpose:
    """Replies for one purpose of call only (a runner, the judge, the check grader, the drafter, the
    comparator or the mutant writer). A queued reply or a handler's answer comes before the rules; a
    handler's None leaves the call to them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.queue: deque[Reply] = deque()
        self.handler: Handler | None = None
        self.calls: list[dict] = []  # this purpose's calls so far, as the model's history has them
        self._lock = threading.Lock()

    def enqueue(self, *replies: Reply) -> None:
        """The next calls of this purpose get these, in order (then the handler or the rules)."""
        with self._lock:
            self.queue.extend(replies)

    def always(self, reply: Reply) -> None:
        """Every call of this purpose gets `reply`."""
        self.handler = lambda model, messages, schema: reply

    def handle(self, fn: Handler) -> None:
        """fn(model, messages, schema) answers each call of this purpose; None leaves it to the rules."""
        self.handler = fn

    def take(self, call: dict, answered: bool) -> Reply | None:
        """Record a call of this purpose; the queued reply for it, unless it is `answered` already."""
        with self._lock:
            self.calls.append(call)
            return self.queue.popleft() if self.queue and not answered else None


class ScriptedModel:
    """One scripted model and everything it was told and asked. `rules` is a module with
    `read(messages, tools)` (the prompt as read: its `purpose` is a purpose's name or None) and
    `reply(prompt, messages, schema, tools, tool_choice)` (an assistant message); by default
    abeq's own (rules.py), or a module named by its dotted name."""

    def __init__(self, name: str = "rules", rules: str | ModuleType | None = None) -> None:
        self.name = name
        self.history: list[dict] = []
        self.queue: deque[Reply] = deque()
        self.handler: Handler | None = None
        self.purposes = {n: Purpose(n) for n in PURPOSE_NAMES}
        self._rules = rules
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Purpose:  # model.judge, model.runner, …
        purposes = self.__dict__.get("purposes", {})
        if name in purposes:
            return purposes[name]
        raise AttributeError(name)

    @property
    def rules(self) -> Any:
        if self._rules is None:  # abeq's own, loaded on the first call (they read abeq's prompts)
            from . import rules

            self._rules = rules
        elif isinstance(self._rules, str):
            self._rules = importlib.import_module(self._rules)
        return self._rules

    def enqueue(self, *replies: Reply) -> None:
        """Queue exact replies (texts, or assistant messages with tool_calls); each next call returns
        the next one instead of the rules."""
        with self._lock:
            self.queue.extend(replies)

    def respond(
        self,
        model: str,
        messages: list[dict],
        schema: dict | None,
        tools: list | None = None,
        tool_choice=None,
    ) -> dict:
        """The assistant message for these messages: {"content": text} or, when it calls tools,
        {"content": None, "tool_calls": [...]}. A queued reply or a handler's may be either."""
        prompt = self.rules.read(messages, tools)
        name = prompt.purpose
        purpose = self.purposes.get(name) if name else None
        call = {"model": model, "messages": messages, "schema": schema, "tools": tools, "purpose": name}
        with self._lock:
            self.history.append(call)
            queued = self.queue.popleft() if self.queue else None
        if purpose is not None:
            mine = purpose.take(call, answered=queued is not None)
            queued = queued if mine is None else mine
        if queued is not None:
            return queued if isinstance(queued, dict) else {"content": queued}
        for answer in (purpose.handler if purpose else None, self.handler):
            out = answer(model, messages, schema) if answer else None
            if out is not None:
                return out if isinstance(out, dict) else {"content": out}
        return self.rules.reply(prompt, messages, schema, tools, tool_choice)


_MODELS: dict[str, ScriptedModel] = {}
_TABLE_LOCK = threading.Lock()


def model(name: str) -> ScriptedModel:
    """The scripted model `scripted/<name>` (made on first use)."""
    with _TABLE_LOCK:
        if name not in _MODELS:
            _MODELS[name] = ScriptedModel(name)
        return _MODELS[name]


def install(name: str = "rules", rules: str | ModuleType | None = None) -> ScriptedModel:
    """A new scripted model answering `scripted/<name>` from now on (with other rules, say)."""
    fresh = ScriptedModel(name, rules)
    with _TABLE_LOCK:
        _MODELS[name] = fresh
    return fresh


def forget() -> None:
    """Drop every scripted model: each name gets a new instance on its next call (a test's own, as
    each inspect_ai test builds its own mockllm; tests/conftest.py does this around every test)."""
    with _TABLE_LOCK:
        _MODELS.clear()


def respond_message(
    name: str, messages: list[dict], schema: dict | None, tools: list | None = None, tool_choice=None
) -> dict:
    """What `scripted/<name>` answers (the provider's handler asks this)."""
    return model(name).respond(name, messages, schema, tools, tool_choice)
