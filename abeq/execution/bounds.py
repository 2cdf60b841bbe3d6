"""What a tool call may reach: the power the person who started `abeq mcp` gave it, no more. The
desk holds its signed-in reviewers to the same bounds, given to `abeq app` (abeq.desk.policy).

A tool call is data an agent wrote (and an agent reads untrusted text), so it is held to what the
start-up options allow: files under the project root (the rule a set's workspace folders follow:
abeq.documents.doc_imports.project_root), the models and API bases named with --allow-model and
--allow-api-base, a runner command only with --allow-commands. Settings arrive as the CLI's options
(`judge_samples` for `--judge-samples`) and are checked with the CLI's own messages; a setting that
grants the set's code the right to run is refused (RunSettings.load without `grants`).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from .options import BY_NAME, out_of_bounds

DEFAULT_MODEL = "local/smollm2"  # what a run uses when no model is named (the embedded model)
# model strings a refusal can offer for a pattern the person allowed (a pattern is not a name)
KNOWN_MODELS = (
    DEFAULT_MODEL,
    "scripted/rules",
    "baseline/length",
    "baseline/self-report",
    "baseline/always-regressed",
)


@dataclass(frozen=True)
class Bounds:
    """The project root, the models (fnmatch patterns) and API bases a tool call may use, and
    whether it may give a runner command. With no --allow-model only the default model runs."""

    root: Path
    models: tuple[str, ...] = ()
    api_bases: tuple[str, ...] = ()
    allow_commands: bool = False
    db: str | None = None
    # who is bounded, in messages: `abeq mcp`'s tool calls, or the desk's signed-in reviewers
    command: str = "abeq mcp"
    server: str = "server"
    asker: str = "a tool call"

    @classmethod
    def started_in(cls, folder: str | Path | None = None, **kw: Any) -> Bounds:
        """The bounds of a server started in `folder` (default: here): its project root is the
        nearest folder above holding a .git, else the folder itself."""
        from ..documents.doc_imports import project_root

        here = Path(folder or os.getcwd()).resolve()
        return cls(root=project_root(here / "_"), **kw)

    # ------------------------------------------------------------ files
    def path(self, value: str, option: str) -> str:
        """A path a tool call names (relative to the root, or absolute), resolved; refused outside the
        root. `git:REV:PATH` (a file at a revision of the project's repository, PATH from its root)
        is checked by abeq.documents.git_source's own parser and passed on as it is: the loaders read it."""
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"argument {option}: give a path", hint="Name a file under " + str(self.root))
        from ..documents.git_source import Repo, is_git, parse

        if is_git(value):  # read at a revision of this project's repository (abeq.documents.git_source)
            repo, _ = parse(value, Repo.at(self.root))
            if repo.root.resolve() != self.root:
                raise InputError(
                    f"argument {option}: {value} is read from the repository at {repo.root}, not this "
                    f"project ({self.root})",
                    path=value,
                    hint=self._hint(),
                )
            return value
        return str(self._inside(value, option, value))

    def _inside(self, value: str, option: str, shown: str) -> Path:
        if value.startswith("~"):
            raise InputError(
                f"argument {option}: {shown} is outside the project", hint=self._hint(), path=shown
            )
        p = Path(value)
        full = (p if p.is_absolute() else self.root / p).resolve()  # follows every symlink
        if not full.is_relative_to(self.root):
            raise InputError(
                f"argument {option}: {shown} is outside the project this {self.server} reads ({self.root})",
                path=shown,
                hint=self._hint(),
            )
        return full

    def _hint(self) -> str:
        return (
            f"The {self.server} reads only under {self.root}; name a file there (relative paths start "
            f"there), or start `{self.command}` in the project that holds it."
        )

    # ------------------------------------------------------------ models
    def model(self, name: str | None, option: str) -> None:
        """Refuse a model the person did not allow at start-up."""
        used = name or DEFAULT_MODEL
        allowed = self.allowed_models()
        if not any(fnmatch.fnmatchcase(used, pat) for pat in allowed):
            raise InputError(
                f"argument {option}: model {used} is not allowed by this {self.server} "
                f"({self.models_said()})",
                hint=f"The person who starts `{self.command}` names the models {self.asker} may use: "
                "--allow-model PATTERN (e.g. --allow-model 'anthropic/*').",
            )

    def allowed_models(self) -> tuple[str, ...]:
        """The model patterns allowed (the default model alone when none was named)."""
        return self.models or (DEFAULT_MODEL,)

    def api_base(self, url: str | None, option: str) -> None:
        if url and url.rstrip("/") not in {u.rstrip("/") for u in self.api_bases}:
            raise InputError(
                f"argument {option}: API base {url} is not allowed by this {self.server} "
                f"({self.api_bases_said()})",
                hint=f"The person who starts `{self.command}` names the servers {self.asker} may reach: "
                "--allow-api-base URL.",
            )

    # ------------------------------------------------------------ what a client is told
    def default_allowed(self) -> bool:
        """Whether a run that names no model may use the default (the embedded model)."""
        return any(fnmatch.fnmatchcase(DEFAULT_MODEL, pat) for pat in (self.models or (DEFAULT_MODEL,)))

    def models_said(self) -> str:
        """The models a tool call may name, as a client should read them: each pattern, with a
        model string that fits it where abeq knows one; and whether naming none works."""
        allowed = self.models or (DEFAULT_MODEL,)
        parts = []
        for pat in allowed:
            fits = [m for m in KNOWN_MODELS if fnmatch.fnmatchcase(m, pat)]
            wild = any(c in pat for c in "*?[")
            parts.append(f"{pat} (e.g. {fits[0]})" if wild and fits else pat)
        default = (
            f"naming none uses {DEFAULT_MODEL}"
            if self.default_allowed()
            else f"name one: the default, {DEFAULT_MODEL}, is not allowed here"
        )
        return f"allowed: {', '.join(parts)}; {default}"

    def api_bases_said(self) -> str:
        if not self.api_bases:
            return "allowed: none (the provider's own endpoint only)"
        return "allowed: " + ", ".join(self.api_bases)

    # ------------------------------------------------------------ settings
    def settings(self, given: Mapping[str, Any], where: str):
        """A RunSettings from a tool call's settings, each checked as the CLI checks its option, then
        against these bounds."""
        from ..execution.settings import RunSettings

        data = {k: v for k, v in given.items() if v is not None}
        for key, value in data.items():
            check_option(key, value)
        if data.get("runner_cmd"):
            self.command_allowed()
        s = RunSettings.load(data, where)  # unknown keys, and trust_code/check_env, refused by name
        self.check(s)
        return s

    def command_allowed(self) -> None:
        """Refuse a runner command unless the person allowed them at start-up."""
        if not self.allow_commands:
            raise InputError(
                f"argument --runner-cmd: this {self.server} runs no command {self.asker} gives",
                hint=f"A runner command runs as the person on this machine: start `{self.command} "
                f"--allow-commands` to let {self.asker} give one.",
            )

    def check(self, s) -> None:
        """Refuse a RunSettings that goes beyond these bounds: a runner command (or the command
        mode), a model or an API base not allowed."""
        if s.runner_cmd or s.mode().kind == "command":
            self.command_allowed()
        else:  # a runner command brings its own model
            self.model(s.runner_model, "--runner-model")
        self.model(s.judge_model or s.runner_model, "--judge-model")
        self.api_base(s.api_base, "--api-base")
        self.api_base(s.judge_api_base, "--judge-api-base")


def check_option(name: str, value: Any) -> None:
    """One setting, checked as the CLI checks its option (the same bounds and messages)."""
    o = BY_NAME.get(name)
    if o is None:
        return  # RunSettings.load names it
    flag = o.flag
    if o.kind is bool:
        if not isinstance(value, bool):
            raise InputError(f"argument {flag}: expected true or false, got {value!r}")
        return
    if o.kind == "names":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise InputError(f"argument {flag}: expected a list of names, got {value!r}")
        return
    if o.choices and value not in o.choices:
        choose = ", ".join(repr(c) for c in o.choices)
        raise InputError(f"argument {flag}: invalid choice: {value!r} (choose from {choose})")
    if o.kind in (int, float):
        if isinstance(value, bool) or (o.kind is int and isinstance(value, float) and not value.is_integer()):
            raise InputError(f"argument {flag}: expected a whole number, got {value!r}")
        _, why = out_of_bounds(o.kind, str(int(value) if o.kind is int else value), o.ge, o.le, o.gt)
        if why:
            raise InputError(f"argument {flag}: {why}")
    elif o.kind is str and not isinstance(value, str):
        raise InputError(f"argument {flag}: expected text, got {value!r}")
