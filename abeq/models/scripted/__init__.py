"""The scripted provider, `scripted/<name>`: abeq's deterministic test double. provider.py holds its
instances and their state and knows no prompt; rules.py answers abeq's own prompts (as a runner,
the judge, the grader, the drafter, the comparator), with tools.py for tools mode, mutants.py for
the mutant writer and samples.py for a runner's samples by seed. The answers mean nothing about
real models; the rules are the library's so that the tour and a user's own suite run without
abeq.testing."""

from .provider import (
    PURPOSE_NAMES,
    Handler,
    Purpose,
    Reply,
    ScriptedModel,
    forget,
    install,
    model,
    respond_message,
)

__all__ = [
    "PURPOSE_NAMES",
    "Handler",
    "Purpose",
    "Reply",
    "ScriptedModel",
    "forget",
    "install",
    "model",
    "respond_message",
]
