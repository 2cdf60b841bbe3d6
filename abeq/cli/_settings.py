"""The run settings as CLI options, made from the one table (abeq.execution.options): each option
is its setting's name with '-' for '_', with the setting's default, bounds and help; the parsed
options become a RunSettings through the same table."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from typing import Any

from ..execution.options import BY_NAME, OPTIONS, RUNNER_GROUP, RUNNER_GROUP_HELP
from ._common import bounded, db_arg

MODELS = ("runner_model", "judge_model", "api_base", "judge_api_base", "timeout", "max_retries", "max_tokens")
RUNNER_MODE = tuple(o.name for o in OPTIONS if o.group == RUNNER_GROUP)
CODE = ("trust_code", "unsandboxed", "check_env")
# what each command takes (a mutation test has no review, gate or fail-fast of a person's run)
RUN = tuple(o.name for o in OPTIONS if o.cli)
MUTATE = (
    *MODELS,
    "variant",
    "concurrency",
    "allow_thin",
    "fresh",
    "judge_samples",
    "aa",
    *RUNNER_MODE,
    *CODE,
)
RESUME = ("gate", *CODE)  # trust is never stored with a run: a resumed run is given it again
CHECK_SET = ("allow_thin", *CODE)


def add_settings(p: argparse.ArgumentParser, names: Iterable[str], help: Mapping[str, str] = {}) -> None:
    """Add the options of these settings to `p` (the runner-mode ones in their own group); `help`
    words a setting for this command where it means more here."""
    groups: dict[str, Any] = {}
    for name in names:
        o = BY_NAME[name]
        target: Any = p
        if o.group:
            if o.group not in groups:
                groups[o.group] = p.add_argument_group(o.group, RUNNER_GROUP_HELP)
            target = groups[o.group]
        kw: dict[str, Any] = {"help": help.get(name, o.help)}
        if o.metavar:
            kw["metavar"] = o.metavar
        if o.kind is bool:
            kw["action"] = "store_true"
        elif o.kind == "names":
            kw.update(action="append", default=[])
        else:
            kw["default"] = o.default
            if o.choices:
                kw["choices"] = o.choices
            elif o.kind in (int, float):
                kw["type"] = bounded(o.kind, o.ge, o.le, above=o.gt)
        target.add_argument(o.flag, **kw)


def settings_given(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The parsed options of these settings, by setting name (repeatable ones as tuples)."""
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(args, name)
        out[name] = tuple(value) if BY_NAME[name].kind == "names" else value
    return out


def run_settings(args: argparse.Namespace, names: Iterable[str]):
    """The RunSettings of a command's parsed options."""
    from ..execution.settings import RunSettings

    return RunSettings(**settings_given(args, names))


JUDGE_ONLY = {
    "judge_model": "litellm model string for the judge (default: local/smollm2)",
    "api_base": "base URL of an OpenAI-compatible or other server",
}


def model_args(p: argparse.ArgumentParser) -> None:
    """The judge model's options of a command that is not a run (calibrate), from the same table,
    and --db."""
    add_settings(p, ("judge_model", "api_base", "timeout", "max_retries", "max_tokens"), help=JUDGE_ONLY)
    db_arg(p)
