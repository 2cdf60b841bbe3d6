"""A run's settings as one typed thing: what every way of starting a run produces.

`RunSettings` holds what a person chooses for a run: the models, the runner mode, sampling,
concurrency, the gate. Each field's default, bounds and description come from one table
(`abeq.execution.options`), which the CLI's options are made from too (`abeq.cli._settings`). The
CLI makes a RunSettings from its options, the desk from its form, the API from keywords
(`prepare_run(..., runner_model="…", aa=True)`, typed by `RunSettingsArgs`), a project file or a
tool call from a mapping (`RunSettings.load`, which names a key it does not know). A field's name
is the CLI option's without the dashes: `--runner-model` is `runner_model`.

The engine takes the settings whole (`Engine(..., settings)`): `RunSettings.config(variant)`
resolves the model strings to their specs (each provider's reply limit) and the runner mode, the
one way from settings to the `RunConfig` a run is stored and keyed by. A run's stored settings are
`RunConfig.settings()`, as before; `trust_code` and `check_env` are never among them (a database
handed over must not grant them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import Self, Unpack  # typing's own from Python 3.11

from ..errors import InputError
from ..models.spec import ModelSpec
from ..vocab import Gate, RunnerModeName, Variant
from .config import RunConfig
from .options import BY_NAME, GRANTS
from .runners.limits import SAMPLE_TEMPERATURE
from .runners.modes import RunnerMode

Names = tuple[str, ...]


def _field(name: str) -> Any:
    """A field's default, bounds and description, from the one table (abeq.execution.options)."""
    o = BY_NAME[name]
    return Field(o.default, description=o.help, ge=o.ge, le=o.le, gt=o.gt)


class RunSettings(BaseModel):
    """Everything a person chooses for a run. Every field has the default `abeq run` uses; a
    field's name is its CLI option's (`judge_samples` is `--judge-samples`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runner_model: str | None = _field("runner_model")
    judge_model: str | None = _field("judge_model")
    api_base: str | None = _field("api_base")
    judge_api_base: str | None = _field("judge_api_base")
    timeout: float = _field("timeout")
    max_retries: int = _field("max_retries")
    max_tokens: int | None = _field("max_tokens")
    variant: Variant | None = _field("variant")
    concurrency: int = _field("concurrency")
    allow_thin: bool = _field("allow_thin")
    fresh: bool = _field("fresh")
    judge_samples: int = _field("judge_samples")
    runner_samples: int = _field("runner_samples")
    aa: bool = _field("aa")
    fail_fast: bool = _field("fail_fast")
    review: str | None = _field("review")
    min_judge_recall: float | None = _field("min_judge_recall")
    require_judge_recall: bool = _field("require_judge_recall")
    gate: Gate = _field("gate")
    runner_mode: RunnerModeName | None = _field("runner_mode")
    runner_cmd: str | None = _field("runner_cmd")
    runner_cmd_version: str = _field("runner_cmd_version")
    runner_timeout: float = _field("runner_timeout")
    runner_max_steps: int = _field("runner_max_steps")
    runner_max_tokens: int = _field("runner_max_tokens")
    runner_env: Names = _field("runner_env")
    # the set's own code: given for each run, never stored with one
    trust_code: bool = _field("trust_code")
    unsandboxed: bool = _field("unsandboxed")
    check_env: Names = _field("check_env")
    backoff_base: float = _field("backoff_base")

    @classmethod
    def load(
        cls,
        data: Mapping[str, Any],
        where: str = "settings",
        *,
        grants: bool = False,
        name: Callable[[str], str] = repr,
    ) -> Self:
        """Settings from a mapping (a project file's table, a tool call's arguments), checked once; a key
        it does not know, or a value of the wrong kind, is an InputError naming the key (as `name` says
        it: abeq.toml adds its line) and `where`. (A subclass that adds fields, such as a project file's
        document table with its paths, loads the same way.)

        `trust_code` and `check_env` let the set's own code run: like a database handed over, data
        that someone else may have written does not grant them, so they are refused unless `grants`
        (the person's own command line or program gives them)."""
        given = [k for k in GRANTS if k in data and not grants]
        if given:
            raise InputError(
                f"{' and '.join(name(k) for k in given)} cannot be set here: a file or a tool call does "
                "not grant the set's code the right to run",
                path=where,
                hint="Give --trust-code (and --check-env) when you run abeq, or trust exactly this code "
                "with `abeq check-set --confirm --trust-code`.",
            )
        try:
            return cls.model_validate(dict(data))
        except ValidationError as e:
            said = []
            for err in e.errors(include_url=False):
                key = ".".join(str(p) for p in err["loc"]) or "?"
                why = "not a setting" if err["type"] == "extra_forbidden" else err["msg"]
                said.append(f"{name(key)}: {why}")
            raise InputError(
                "; ".join(said),
                path=where,
                hint="Settings are named as the options of `abeq run` with '_' for '-' "
                "(docs/reference/settings.md lists them).",
            ) from None

    def with_args(self, **kwargs: Any) -> Self:
        """These settings with some changed, checked like the rest."""
        # the caller's own keywords: a program may grant what its user asked for
        return self.load({**self.model_dump(exclude_unset=True), **kwargs}, grants=True) if kwargs else self

    def given(self, **kwargs: Unpack[RunSettingsArgs]) -> Self:
        """These settings with values a program made, of the fields' own types (a detected variant, a
        review's name, grants parsed by the table's own options), not checked again: settings read
        from a file or a call are checked once, by `load`. Typed by RunSettingsArgs (mypy checks it)."""
        return self.model_copy(update=kwargs)

    def mode(self) -> RunnerMode:
        """The runner mode: chat unless one is named (command when a runner command is given)."""
        return RunnerMode(
            kind=self.runner_mode or ("command" if self.runner_cmd else "chat"),
            command=self.runner_cmd or "",
            command_version=self.runner_cmd_version,
            timeout=self.runner_timeout,
            max_steps=self.runner_max_steps,
            max_tokens=self.runner_max_tokens,
            env=tuple(self.runner_env),
        )

    def model(self, name: str | None, purpose: str = "run", api_base: str | None = None) -> ModelSpec:
        """A model of this run (`timeout`, `max_tokens`) with its provider's reply limit for `purpose`."""
        return ModelSpec.for_purpose(
            name, purpose, api_base=api_base, timeout=self.timeout, max_tokens=self.max_tokens
        )

    def config(self, variant: str) -> RunConfig:
        """The run these settings make, for an original of this variant (`variant` wins when set)."""
        runner = self.model(self.runner_model, api_base=self.api_base)
        if self.runner_samples > 1:  # samples at the provider's usual sampling, not one mode of it
            runner = replace(runner, temperature=SAMPLE_TEMPERATURE)
        judge = self.model(self.judge_model or runner.name, api_base=self.judge_api_base or self.api_base)
        return RunConfig(
            runner=runner,
            judge=judge,
            variant=self.variant or variant,
            concurrency=self.concurrency,
            fresh=self.fresh,
            judge_samples=self.judge_samples,
            runner_samples=self.runner_samples,
            aa=self.aa,
            allow_thin=self.allow_thin,
            review=self.review,
            max_retries=self.max_retries,
            backoff_base=self.backoff_base,
            fail_fast=self.fail_fast,
            min_judge_recall=self.min_judge_recall,
            require_judge_recall=self.require_judge_recall,
            mode=self.mode(),
            trust_code=self.trust_code,
            unsandboxed=self.unsandboxed,
            check_env=tuple(self.check_env),
        )


def settings_of(settings: RunSettings | None, kwargs: Mapping[str, Any]) -> RunSettings:
    """`settings` (default: every default) with the keywords a caller gave on top."""
    base = settings if settings is not None else RunSettings()
    return base.with_args(**kwargs)


class RunSettingsArgs(TypedDict, total=False):
    """RunSettings' fields as keywords (`prepare_run(..., **kwargs: Unpack[RunSettingsArgs])`), so
    mypy checks a caller's names and types. A test holds it to RunSettings' fields."""

    runner_model: str | None
    judge_model: str | None
    api_base: str | None
    judge_api_base: str | None
    timeout: float
    max_retries: int
    max_tokens: int | None
    variant: Variant | None
    concurrency: int
    allow_thin: bool
    fresh: bool
    judge_samples: int
    runner_samples: int
    aa: bool
    fail_fast: bool
    review: str | None
    min_judge_recall: float | None
    require_judge_recall: bool
    gate: Gate
    runner_mode: RunnerModeName | None
    runner_cmd: str | None
    runner_cmd_version: str
    runner_timeout: float
    runner_max_steps: int
    runner_max_tokens: int
    runner_env: Names
    trust_code: bool
    unsandboxed: bool
    check_env: Names
    backoff_base: float


__all__ = ["RunSettings", "RunSettingsArgs", "settings_of"]
