"""A run's settings: the models and everything else a run is made with, stored with each run so
it can be resumed with exactly its own settings."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..models.http import strip_credentials
from ..models.spec import ModelSpec
from .runners.modes import RunnerMode, as_mode, mode_prompt


@dataclass
class RunConfig:
    runner: ModelSpec = field(default_factory=ModelSpec)
    judge: ModelSpec = field(default_factory=ModelSpec)
    variant: str = "skill"
    concurrency: int = 8
    fresh: bool = False
    judge_samples: int = 1
    runner_samples: int = 1  # runs of each arm per case (the runner spec's temperature says how)
    aa: bool = False
    allow_thin: bool = False
    review: str | None = None
    max_retries: int = 4
    backoff_base: float = 0.5  # seconds before the first retry; doubled per retry, with jitter
    # stop starting cases once one is judged regressed. It changes no result, so it is in no key, and
    # it is not a stored setting: resuming a run it stopped runs the cases it did not start
    fail_fast: bool = False
    # the judge's calibrated minimum, checked before the run (preflight): it changes no result, so it
    # is in no key and not stored; a resumed run is not held to it again
    min_judge_recall: float | None = None
    require_judge_recall: bool = False  # refuse, not warn, when the judge fails the minimum
    mode: RunnerMode = field(default_factory=RunnerMode)  # chat, tools or an agent command
    # run the set's code (promptfoo python/javascript checks) for this run; and the environment
    # variables that code may read. Neither is stored: a database handed over must not grant them,
    # so a resumed run is given them again (abeq.execution.checks.code_trust)
    trust_code: bool = False
    unsandboxed: bool = False  # the person let trusted code run where bubblewrap cannot
    check_env: tuple[str, ...] = ()

    def sandbox(self):
        """How the set's code runs in this run."""
        from .checks.scripts import Sandbox

        return Sandbox(env_names=tuple(self.check_env), unsandboxed=self.unsandboxed)

    def key_parts(self) -> dict:
        # the prompt modules load the model call path and the schemas: only a run needs them, not
        # `abeq.toml`'s settings checked on the gate's "nothing changed" path (tests/test_startup.py)
        from .checks.grading import grader_prompt
        from .judge import judge_prompt

        return {
            "runner": self.runner.sampling(),
            "judge": self.judge.sampling(),
            "variant": self.variant,
            "judge_samples": self.judge_samples,
            "aa": self.aa,
            "prompts": [self.runner_prompt_ref(), judge_prompt().ref, grader_prompt().ref],
            **self.mode.config_parts(),  # nothing for chat: its runs' keys are what they were
            # one sample: the run's key is what it was before samples existed
            **({"runner_samples": self.runner_samples} if self.runner_samples > 1 else {}),
        }

    def stored(
        self, graded_cases: int, sources: dict[str, str] | None = None, started_by: str | None = None
    ) -> dict:
        """What a run's row keeps of these settings: the key's parts (an API base without its
        secrets: the key hashes the full one), the concurrency, the settings to resume with,
        `sources` (role -> git:COMMIT:PATH of inputs read at a revision; in no key: where, not what)
        and `started_by` (the person signed in to the desk who started it; in no key either)."""
        parts = self.key_parts()
        for side in ("runner", "judge"):
            if "api_base" in parts[side]:
                parts[side] = {**parts[side], "api_base": strip_credentials(parts[side]["api_base"])[0]}
        return {
            **parts,
            "concurrency": self.concurrency,
            "api_base": bool(self.runner.api_base or self.judge.api_base),
            "graded_cases": graded_cases,  # for the progress a reader computes from the store
            "settings": self.settings(),
            **({"sources": sources} if sources else {}),
            **({"started_by": started_by} if started_by else {}),
        }

    def runner_prompt_ref(self) -> str:
        """The runner prompt this run's runner reads: the variant's for chat, the mode's otherwise
        (a command run was recorded as runner-skill@1 though the command read runner-command)."""
        from .runners.runner import runner_prompt

        return (
            runner_prompt(self.variant).ref if self.mode.kind == "chat" else mode_prompt(self.mode.kind).ref
        )

    def settings(self) -> dict:
        """Everything needed to resume this run with its own settings, as JSON, without secrets:
        an API base loses any user:password and query string (and says so)."""
        out = {k: getattr(self, k) for k in SETTINGS}
        for side in ("runner", "judge"):
            spec = asdict(getattr(self, side))
            spec["api_base"], stripped = strip_credentials(spec["api_base"])
            if stripped:
                out["api_base_stripped"] = True
            out[side] = spec
        if self.mode.kind != "chat":  # a chat run's settings are what they were
            out["mode"] = asdict(self.mode)
        if self.runner_samples > 1:  # and so are those of a run of one sample
            out["runner_samples"] = self.runner_samples
        return out

    @classmethod
    def from_settings(cls, settings: dict) -> RunConfig:
        """The RunConfig a run was made with, from its stored settings."""
        return cls(
            runner=ModelSpec(**settings["runner"]),
            judge=ModelSpec(**settings["judge"]),
            **{k: settings[k] for k in SETTINGS if k in settings},
            mode=as_mode(settings.get("mode")),
            runner_samples=settings.get("runner_samples", 1),
        )


# RunConfig's fields besides the two models; all of them are stored with each run
SETTINGS = (
    "variant",
    "concurrency",
    "fresh",
    "judge_samples",
    "aa",
    "allow_thin",
    "review",
    "max_retries",
    "backoff_base",
)
