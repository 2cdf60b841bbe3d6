"""The runner-mode options of `abeq run`: chat (default), tools, or any agent CLI as a command."""

from __future__ import annotations

import argparse

from ..execution.limits import RUNNER_MAX_STEPS as MAX_STEPS
from ..execution.limits import RUNNER_MAX_TOKENS as MAX_TOKENS
from ..execution.limits import RUNNER_TIMEOUT as TIMEOUT
from ..vocab import RUNNER_MODES
from ._common import bounded


def runner_mode_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "runner mode",
        "How a document is run on a case. chat: one runner-model call narrates what it does. tools: the "
        "runner model acts through tools (list, read, search, write, run_command from the case's scripted "
        "command_outputs) on a temporary copy of the case's workspace. command: --runner-cmd runs any "
        "agent CLI through the shell in that copy (it runs as you: see docs/guides/runner-modes.md).",
    )
    g.add_argument(
        "--runner-mode", choices=RUNNER_MODES, default=None, help="default: chat (command with --runner-cmd)"
    )
    g.add_argument(
        "--runner-cmd",
        default=None,
        metavar="CMD",
        help="agent command, e.g. 'codex exec --json --sandbox read-only --ephemeral -' (tested lines for "
        "Claude Code and Codex: docs/guides/runner-modes.md); the runner prompt arrives on stdin, "
        "ABEQ_DOCUMENT / ABEQ_VARIANT / ABEQ_CASE_ID in its environment; its stdout (an agent's event "
        "stream, or plain text) is the transcript",
    )
    g.add_argument(
        "--runner-cmd-version",
        default="",
        metavar="TEXT",
        help="what the command runs (agent version, model, settings such as ANTHROPIC_MODEL, which it sees): "
        "part of the cache key with the command; without it a changed model reuses cached runs",
    )
    g.add_argument(
        "--runner-timeout",
        type=bounded(float, above=0),
        default=TIMEOUT,
        help=f"seconds a runner command may run before it and its processes are killed (default {TIMEOUT:g})",
    )
    g.add_argument(
        "--runner-max-steps",
        type=bounded(int, 1),
        default=MAX_STEPS,
        help=f"tool calls a tools-mode run may make (default {MAX_STEPS})",
    )
    g.add_argument(
        "--runner-max-tokens",
        type=bounded(int, 1),
        default=MAX_TOKENS,
        help=f"tokens a tools-mode run may spend over its calls (default {MAX_TOKENS:,})",
    )
    g.add_argument(
        "--runner-env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this environment variable to the runner command too (repeatable; "
        "the basics and the usual API keys are passed by name already)",
    )


def runner_mode(args):
    """The RunnerMode the options ask for (checked by prepare_run, like every setting)."""
    from ..execution.modes import RunnerMode

    kind = args.runner_mode or ("command" if args.runner_cmd else "chat")
    return RunnerMode(
        kind=kind,
        command=args.runner_cmd or "",
        command_version=args.runner_cmd_version,
        timeout=args.runner_timeout,
        max_steps=args.runner_max_steps,
        max_tokens=args.runner_max_tokens,
        env=tuple(args.runner_env),
    )
