"""How a document is run on a case (the runner mode) and what of that belongs in a cache key.

- chat: one call to the runner model that narrates what it does (the default);
- tools: the runner model acts through tools over a fresh copy of the case's workspace;
- command: any agent CLI, run through the shell in that copy with the runner prompt on stdin.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...documents import Document
from ...models.http import redact
from ...models.spec import ModelSpec
from ...prompts import Prompt, load_prompt
from ...vocab import RUNNER_MODES
from .limits import RUNNER_MAX_STEPS, RUNNER_MAX_TOKENS, RUNNER_TIMEOUT


def as_mode(value) -> RunnerMode:
    """A RunnerMode from one, from its fields as a dict (dataclasses.asdict of a RunConfig), or from
    a mode name ("chat", "tools"; a command needs its fields)."""
    if isinstance(value, RunnerMode):
        return value
    if isinstance(value, dict):
        return RunnerMode(**{**value, "env": tuple(value.get("env") or ())})
    return RunnerMode(kind=value or "chat")


def mode_prompt(kind: str) -> Prompt:
    return load_prompt("runner-tools" if kind == "tools" else "runner-command")


@dataclass(frozen=True)
class RunnerMode:
    """The runner mode of a run and its limits."""

    kind: str = "chat"
    command: str = ""  # the shell command (command mode)
    command_version: str = ""  # the user's name for what the command runs (agent version, its model…)
    timeout: float = RUNNER_TIMEOUT  # seconds a command may take; then its whole process group is stopped
    max_steps: int = RUNNER_MAX_STEPS  # tool calls a tools-mode run may make
    max_tokens: int = RUNNER_MAX_TOKENS  # tokens a tools-mode run may spend, summed over its calls
    env: tuple[str, ...] = ()  # further environment variables a command may see, by name

    @property
    def in_workspace(self) -> bool:
        """Runs in a temporary copy of the case's workspace (tools, command)."""
        return self.kind != "chat"

    def problems(self) -> list[str]:
        """What is wrong with these settings ([] when nothing is)."""
        out = []
        if self.kind not in RUNNER_MODES:
            out.append(f"runner mode '{self.kind}' is not one of {', '.join(RUNNER_MODES)}")
        if self.kind == "command" and not self.command.strip():
            out.append("the command runner mode needs a command (--runner-cmd)")
        if self.kind != "command" and self.command.strip():
            out.append(f"a runner command is given, but the runner mode is '{self.kind}'")
        if self.timeout <= 0 or self.max_steps < 1 or self.max_tokens < 1:
            out.append("runner limits must be positive (timeout, steps, tokens)")
        return out

    def key_parts(self, original: Document, variant: str) -> dict:
        """What the mode adds to (or, as None, removes from) a runner cache key. Nothing for chat,
        so a chat run's keys are what they always were; a command replaces the model's sampling."""
        if self.kind == "chat":
            return {}
        from .workspace import placement  # the schemas and the set's files: a run's, not a setting's

        parts = {
            "mode": self.kind,
            "prompt": mode_prompt(self.kind).ref,
            "placed_at": placement(original, variant),
        }
        if self.kind == "tools":
            return {**parts, "max_steps": self.max_steps, "max_tokens": self.max_tokens}
        return {**parts, "command": self.command, "command_version": self.command_version, "sampling": None}

    def config_parts(self) -> dict:
        """What a run records of its mode (and what makes two runs' settings differ)."""
        if self.kind == "chat":
            return {}
        out: dict = {"runner_mode": self.kind}
        if self.kind == "command":
            out.update(runner_command=self.command, runner_command_version=self.command_version)
        else:
            out.update(runner_max_steps=self.max_steps, runner_max_tokens=self.max_tokens)
        return out

    def label(self, spec: ModelSpec) -> str:
        """The runner as a run lists it: the model, or the command."""
        if self.kind == "command":
            cmd = redact(" ".join(self.command.split()))
            return f"command: {cmd[:120]}" + (f" ({self.command_version})" if self.command_version else "")
        return spec.name + (" (tools)" if self.kind == "tools" else "")
