"""The one table of a run's settings: each one's name, default, bounds and what it does.

`abeq.execution.settings.RunSettings` takes its fields' defaults, bounds and descriptions from here,
and the CLI makes its options from here (`abeq.cli._settings`): a setting's option is its name with
'-' for '_' (`judge_samples` is `--judge-samples`). This module imports nothing heavy, so
`abeq --help` stays instant (pydantic is not loaded to build the parser).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..vocab import COMPRESS, GATES, RUNNER_MODES, VARIANTS
from .runners.limits import RUNNER_MAX_STEPS, RUNNER_MAX_TOKENS, RUNNER_TIMEOUT, SAMPLE_TEMPERATURE

RUNNER_GROUP = "runner mode"
RUNNER_GROUP_HELP = (
    "How a document is run on a case. chat: one runner-model call narrates what it does. tools: the "
    "runner model acts through tools (list, read, search, write, run_command from the case's scripted "
    "command_outputs) on a temporary copy of the case's workspace. command: --runner-cmd runs any "
    "agent CLI through the shell in that copy (it runs as you: see docs/guides/runner-modes.md)."
)


def out_of_bounds(kind: Any, text: str, lo=None, hi=None, above=None) -> tuple[Any, str]:
    """`text` as a number of `kind` and why it is out of bounds ("" when it is not): the message the
    CLI prints for an option (`abeq.cli._common.bounded`) and a tool call gets (abeq.agents)."""
    import math

    try:
        v = kind(text)
    except ValueError:
        return None, f"expected {'a whole number' if kind is int else 'a number'}, got {text!r}"
    if (
        (kind is float and not math.isfinite(v))
        or (above is not None and not v > above)
        or (lo is not None and v < lo)
        or (hi is not None and v > hi)
    ):
        want = (
            f"greater than {above:g}"
            if above is not None
            else f"from {lo} to {hi}"
            if hi is not None
            else f"{lo} or more"
        )
        return v, f"must be {want}, got {text}"
    return v, ""


@dataclass(frozen=True)
class Option:
    """One setting: `kind` is str, int, float, bool or "names" (a repeatable name, kept as a tuple)."""

    name: str
    kind: Any
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    metavar: str | None = None
    group: str = ""  # the CLI's argument group
    cli: bool = True  # False: a setting with no option (an API and project-file setting only)
    # lets the set's own code run: given by the person running abeq (an option, their own program),
    # never read from data someone else may have written (a database, a project file, a tool call)
    grants: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


OPTIONS: tuple[Option, ...] = (
    # the models
    Option("runner_model", str, None, "litellm model string for the runner (default: local/smollm2)"),
    Option("judge_model", str, None, "litellm model string for the judge (default: the runner model)"),
    Option(
        "api_base",
        str,
        None,
        "base URL of an OpenAI-compatible or other server (the runner's; the judge's too unless "
        "--judge-api-base)",
    ),
    Option(
        "judge_api_base",
        str,
        None,
        "the judge's server when it differs from the runner's (e.g. a hosted runner, a local judge)",
    ),
    Option("timeout", float, 120.0, "seconds before a model call is cut off and retried", gt=0),
    Option(
        "max_retries",
        int,
        4,
        "retries of a call after a rate limit, server error or timeout (default 4)",
        ge=0,
    ),
    Option("max_tokens", int, None, "reply length limit per call", ge=1),
    # the run
    Option(
        "variant",
        str,
        None,
        "runner variant (default: detected from the original's file name)",
        choices=VARIANTS,
    ),
    Option("concurrency", int, 8, "model calls in flight (1 = one case after another)", ge=1),
    Option("allow_thin", bool, False, "accept a set below 5 cases or missing a case type"),
    Option("fresh", bool, False, "ignore cached results (they are still written)"),
    Option("judge_samples", int, 1, "judge each case K times (1-9); majority verdict", ge=1, le=9),
    Option(
        "runner_samples",
        int,
        1,
        "run each arm N times per case (1-50), each sample its own seed and cache entry, at temperature "
        f"{SAMPLE_TEMPERATURE:g} when N > 1 (agent commands as they are); a case is regressed only when the "
        "candidate keeps a behaviour less often than the teacher beyond chance (docs/guides/samples.md)",
        ge=1,
        le=50,
        metavar="N",
    ),
    Option("aa", bool, False, "also replay the teacher and judge it against itself (noise floor)"),
    Option(
        "fail_fast",
        bool,
        False,
        "stop starting cases once one is judged regressed (the gate has failed); the rest are reported "
        "not run, and the same command without --fail-fast runs them",
    ),
    Option("review", str, None, "name of a review to create or continue (rounds)"),
    Option(
        "min_judge_recall",
        float,
        None,
        "warn before the run unless the judge, as `abeq calibrate` measured it, caught at least R (0-1) of "
        "the suite's regressions and called at most 1-R of the pairs that lost nothing regressed (so a "
        "judge that always says regressed never passes); also when never measured",
        ge=0,
        le=1,
        metavar="R",
    ),
    Option(
        "require_judge_recall",
        bool,
        False,
        "refuse the run (before any call, exit code 2) instead of warning when the judge fails "
        "--min-judge-recall or was never calibrated",
    ),
    Option(
        "gate",
        str,
        COMPRESS,
        "compress: no regression; directive-clarity: no regression and a measured directness gain",
        choices=GATES,
    ),
    # the runner mode
    Option(
        "runner_mode",
        str,
        None,
        "default: chat (command with --runner-cmd)",
        choices=RUNNER_MODES,
        group=RUNNER_GROUP,
    ),
    Option(
        "runner_cmd",
        str,
        None,
        "agent command, e.g. 'codex exec --json --sandbox read-only --ephemeral -' (tested lines for "
        "Claude Code and Codex: docs/guides/runner-modes.md); the runner prompt arrives on stdin, "
        "ABEQ_DOCUMENT / ABEQ_VARIANT / ABEQ_CASE_ID in its environment; its stdout (an agent's event "
        "stream, or plain text) is the transcript",
        metavar="CMD",
        group=RUNNER_GROUP,
    ),
    Option(
        "runner_cmd_version",
        str,
        "",
        "what the command runs (agent version, model, settings such as ANTHROPIC_MODEL, which it sees): "
        "part of the cache key with the command; without it a changed model reuses cached runs",
        metavar="TEXT",
        group=RUNNER_GROUP,
    ),
    Option(
        "runner_timeout",
        float,
        RUNNER_TIMEOUT,
        "seconds a runner command may run before it and its processes are killed "
        f"(default {RUNNER_TIMEOUT:g})",
        gt=0,
        group=RUNNER_GROUP,
    ),
    Option(
        "runner_max_steps",
        int,
        RUNNER_MAX_STEPS,
        f"tool calls a tools-mode run may make (default {RUNNER_MAX_STEPS})",
        ge=1,
        group=RUNNER_GROUP,
    ),
    Option(
        "runner_max_tokens",
        int,
        RUNNER_MAX_TOKENS,
        f"tokens a tools-mode run may spend over its calls (default {RUNNER_MAX_TOKENS:,})",
        ge=1,
        group=RUNNER_GROUP,
    ),
    Option(
        "runner_env",
        "names",
        (),
        "pass this environment variable to the runner command too (repeatable; the basics and the usual "
        "API keys are passed by name already)",
        metavar="NAME",
        group=RUNNER_GROUP,
    ),
    # the set's own code: given for each run, never stored with one (a database handed over must not
    # grant it; a resumed run is given it again)
    Option(
        "trust_code",
        bool,
        False,
        "run the code the transfer set's checks carry (promptfoo python/javascript asserts and "
        "transforms) on this machine; without it a set with code is refused, naming each script "
        "(`abeq check-set` lists them). Trusted code runs with a reduced environment and limits",
        grants=True,
    ),
    Option(
        "unsandboxed",
        bool,
        False,
        "let the set's trusted code run where bubblewrap cannot make a sandbox: it then runs as you "
        "(as root: as nobody), able to read your files and your other processes' environments, their "
        "keys included; every run says so. Without it, trusted code runs only inside bubblewrap",
        grants=True,
    ),
    Option(
        "check_env",
        "names",
        (),
        "an environment variable the set's code may read (repeatable); it sees no other of yours but "
        "PATH and the locale",
        metavar="NAME",
        grants=True,
    ),
    Option(
        "backoff_base",
        float,
        0.5,
        "seconds before a call's first retry; doubled per retry, with jitter",
        ge=0,
        cli=False,
    ),
)
BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
GRANTS: tuple[str, ...] = tuple(o.name for o in OPTIONS if o.grants)
