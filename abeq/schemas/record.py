"""The run record (`abeq run --record`, `abeq export --record`, the desk's download): the
report unchanged, plus how the run was made and what happened on each case.

abeq.results.reports.report builds it from the store and writes `RunRecord.model_dump(mode="json",
by_alias=True)`, so every record is validated as it is written and its keys keep this order.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, computed_field, model_validator

from ..vocab import CHECK_OUTCOMES, Gate, ReviewAction, RunnerModeName, Variant, Verdict
from .checks import CheckResult
from .core import CaseError, Report, Strict

RECORD_VERSION = "abeq-record/1"  # the --record format; bumped when a key changes meaning

# a sum of call costs reads 0 (an integer) when nothing was spent and a float otherwise; kept as is
Number = int | float


class StoppedEarly(Strict):
    """--fail-fast stopped the run: after which case, and how many cases were never started."""

    after_case: str
    not_run: int


class GateResult(Strict):
    """The gate profile (docs/reference/rules.md, "Gate profiles") over the effective verdicts."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    gate: Gate
    pass_: bool = Field(alias="pass")
    regressions: int
    errors: int = Field(description="cases started that produced no verdict")
    not_run: int = Field(description="cases --fail-fast never started (not errors)")


class DirectivenessGateResult(GateResult):
    """directive-clarity also needs a measured directness gain: its figures come after the rest."""

    mean_original_directness: float
    mean_candidate_directness: float
    per_case_delta: dict[str, int] = Field(description="candidate minus original directness, per judged case")


class CheckSummary(Strict):
    """What the checks found over the run."""

    cases_with_checks: int
    checks: int
    lost: int = Field(description="the teacher passed, the candidate failed: each makes its case regressed")
    failed_both: int
    skipped: int
    cases_judge_disagrees: int = Field(description="cases with a lost check the judge did not call regressed")


class JudgeCalibration(Strict):
    """The judge model's latest calibration (`abeq calibrate`) when the record was written: with the
    judge prompt the run used if there is one, else with another version (`current_prompt` false).
    A judge never calibrated has only `judge_model`, `calibrated` false and `line`."""

    judge_model: str
    calibrated: bool
    current_prompt: bool | None = Field(None, description="measured with the judge prompt abeq uses now")
    suite: str | None = Field(None, description="the labelled suite it was measured on")
    prompt: str | None = Field(None, description="prompt@version#hash of the judge prompt measured")
    regressions: int | None = Field(None, description="regressed pairs in the suite")
    regressions_caught: int | None = Field(None, description="of those, the judge called regressed")
    regression_recall: float | None = Field(None, description="regressions_caught / regressions")
    regression_recall_ci95: list[float] | None = Field(
        None, description="the recall's Wilson 95% interval [low, high]; null when there were no regressions"
    )
    accuracy: float | None = Field(None, description="share of judged pairs given their label")
    false_regression_rate: float | None = Field(
        None,
        description="share of the pairs not labelled regressed (nothing lost) the judge called regressed",
    )
    balanced_accuracy: float | None = Field(
        None, description="the mean of regression recall and specificity: the figure that decides"
    )
    balanced_accuracy_ci95: list[float] | None = Field(
        None, description="its 95% interval [low, high] (adjusted Wald); null when a side had no pair"
    )
    specificity: float | None = Field(None, description="1 - false_regression_rate")
    position_flip_rate: float | None = Field(
        None, description="share of order-swap pairs whose verdict changed with the blocks' order alone"
    )
    baselines: list[dict] | None = Field(
        None,
        description="the trivial judges (baseline/...) on the same suite: judge_model, balanced_accuracy, "
        "regression_recall, false_regression_rate",
    )
    measured_at: str | None = Field(None, description="ISO 8601, UTC")
    line: str = Field(description="the sentence the Markdown report and the run summary show")


class RecordRun(Strict):
    """The run: its models and settings, its times and status, and what its calls spent."""

    id: int
    runner_model: str = Field(
        description="the runner as the run lists it: a model, '(tools)', or the command"
    )
    judge_model: str
    variant: Variant = Field(description="how the documents were given to the runner")
    runner_mode: RunnerModeName
    runner_command: str | None = Field(description="the agent CLI a command-mode run ran")
    runner_command_version: str | None = Field(description="what the command printed for --version")
    prompts: list[str] | None = Field(description="prompt@version#hash of the runner, judge and check grader")
    judge_samples: int | None = Field(description="judge replies per case; the majority is the verdict")
    runner_samples: int = Field(1, description="runs of each arm per case (--runner-samples)")
    runner_temperature: float | None = Field(None, description="the runner's sampling temperature")
    aa: bool | None = Field(description="whether the teacher's own replay was judged (A/A)")
    started_at: str = Field(description="ISO 8601, UTC")
    finished_at: str | None
    status: str = Field(description="finished | cancelled | interrupted | failed | running | cancelling")
    thin_accepted: bool = Field(description="the run was started on a set below the coverage minimum")
    stopped_early: StoppedEarly | None
    calls_made: int = Field(description="model calls this run made (cached ones cost nothing)")
    calls_cached: int = Field(description="model calls answered from abeq's cache")
    prompt_tokens: int
    completion_tokens: int
    cache_read_tokens: int = Field(description="of prompt_tokens: read from the provider's prompt cache")
    cache_write_tokens: int = Field(description="of prompt_tokens: written to the provider's prompt cache")
    cache_saved: Number | None = Field(
        description="what the prompt cache saved; null when a call had no price"
    )
    cost: Number | None = Field(description="of the calls this run made; null when any had no known price")
    cost_unpriced_calls: int
    aa_false_regression_rate: float | None = Field(
        description="share of A/A replays the judge called regressed; null when none was judged"
    )
    aa_cases_judged: int | None = Field(description="null when the run did not ask for A/A")
    checks: CheckSummary
    judge_calibration: JudgeCalibration
    sources: dict[str, str] | None = Field(
        default=None,
        description="where the original, candidate and transfer set were read when at a git revision: "
        "git:COMMIT:PATH by role (their content hashes are the report's)",
    )
    started_by: str | None = Field(
        default=None,
        description="the person signed in to the desk who started the run (st.login or a trusted "
        "proxy's header); null for a run started elsewhere or on a desk nobody signs in to",
    )


class RecordCheck(CheckResult):
    """One check of the case on both arms, with what it found."""

    @model_validator(mode="before")
    @classmethod
    def _outcome_is_derived(cls, data: Any) -> Any:
        """A record read back carries `outcome`: it follows from the arms, so it is computed again."""
        return {k: v for k, v in data.items() if k != "outcome"} if isinstance(data, dict) else data

    @computed_field(description=" | ".join(CHECK_OUTCOMES) + ": only lost changes a verdict")  # type: ignore[prop-decorator]  # mypy: no decorated property
    @property
    def outcome(self) -> str:
        return super().outcome


class RecordOverride(Strict):
    """The reviewer's override in effect on the case."""

    verdict: Verdict
    judge_verdict: Verdict | None
    reason: str
    reviewer: str
    created_at: str
    carried_from_run: int | None = Field(description="the run it was made in, when carried from another")


class RecordReview(Strict):
    """The reviewer action in effect on the case: an override or an agreement with the judge."""

    action: ReviewAction
    verdict: Verdict
    reviewer: str
    created_at: str
    reason: str | None
    seen_verdict: Verdict | None = Field(description="the verdict the reviewer had in front of them")
    carried_from_run: int | None


class RecordRate(Strict):
    """How often one behaviour appeared on each side over a case's samples, and the test's result."""

    behaviour: str = Field(
        description="the judge's 'keeps the teacher's behaviour', or 'check <label>' for a check of the case"
    )
    teacher: int = Field(description="teacher samples that showed it")
    candidate: int = Field(description="candidate samples that showed it")
    n: int = Field(description="samples a side")
    p: float = Field(description="one-sided Fisher exact p that the candidate's rate is below the teacher's")
    lost: bool = Field(
        description="the candidate's rate is below the teacher's beyond chance (Holm-Tarone over the case's "
        "behaviours; for judged_equivalent, p <= alpha)"
    )
    testable: bool = Field(
        True,
        description="some split of these counts could reach the level; one that cannot (a check both "
        "sides always pass) is left out of the correction's m (Tarone)",
    )


class RecordSamples(Strict):
    """A case run N > 1 times on each arm (--runner-samples): its samples and the decision on them."""

    n: int = Field(description="runs of each arm")
    temperature: float = Field(description="the runner's temperature for every sample")
    test: str = Field(description="how a loss is decided on the counts")
    alpha: float = Field(description="the test's level: a loss is called when p <= alpha")
    teacher_keys: list[str] = Field(description="each teacher sample's cache key, sample 0 first")
    candidate_keys: list[str] = Field(description="each candidate sample's cache key, sample 0 first")
    pair_verdicts: list[Verdict] = Field(description="the judge on (teacher i, candidate i), per i")
    teacher_pair_verdicts: list[Verdict] = Field(
        description="the judge on (teacher i, teacher i+1): how the teacher varies by itself"
    )
    rates: list[RecordRate]
    judged_equivalent: RecordRate | None = Field(
        None,
        description="pairs the judge called equivalent, the teacher's own (teacher i, i+1) against the "
        "candidate's: lost (the case diverged) when the candidate's are fewer beyond chance",
    )
    undecided: bool = Field(
        description="a rate is lower on the candidate, not beyond chance at this N, and the counts cannot "
        "yet rule out a material loss (the teacher's rate halved, 95%): more samples could change the verdict"
    )
    behaviour_delta: str = Field(description="the rates and the judge's words the report's delta shows")


class RecordCase(Strict):
    """One case: the judge's and the effective verdict, the trust signals, checks, review, spend."""

    case_id: str
    status: str = Field(description="pending | judged | error")
    judge_verdict: Verdict | None = Field(description="the judge samples' majority")
    verdict: Verdict | None = Field(
        description="effective: a lost check regresses it, an override replaces it"
    )
    judge_samples: list[Verdict] = Field(description="every judge sample's verdict")
    agreement: float | None = Field(description="share of judge samples that gave the majority verdict")
    uncertain: bool = Field(description="the judge samples split, or the checks contradict the judge")
    aa_verdict: Verdict | None = Field(description="the judge's verdict on the teacher's own replay")
    within_noise: bool = Field(description="regressed, but the judge also flagged the teacher's own replay")
    gate_truncated: bool = Field(description="judged only up to an interactive gate the case left unanswered")
    judge_behaviour_delta: str
    checks: list[RecordCheck]
    checks_lost: list[str] = Field(
        description="labels of the checks the teacher passed and the candidate failed"
    )
    checks_disagree_with_judge: bool
    override: RecordOverride | None
    review: RecordReview | None
    calls_made: int
    calls_cached: int
    tokens: int
    cost: float | None = Field(
        description="of the calls this run made for the case; null when one had no price"
    )
    cost_unpriced_calls: int
    error: str | None = Field(description="why the case has no verdict")
    observed: dict[str, dict[str, Any]] | None = Field(
        description="per arm (original, candidate), when the run acted in a workspace: workspace_changes, "
        "tool_trace, not_reported, as stored"
    )
    runner_samples: RecordSamples | None = Field(
        None, description="the case's samples and rates when each arm ran more than once; null otherwise"
    )


class RunRecord(Strict):
    """The full record of one run."""

    version: str = Field(RECORD_VERSION, description="the record format; bumped when a key changes meaning")
    report: Report = Field(description="the report, exactly as --out writes its cases and summary")
    errors: list[CaseError] = Field(description="cases without a verdict: errored, or never started")
    gate: DirectivenessGateResult | GateResult  # the first that fits: extra keys are refused
    run: RecordRun
    cases: list[RecordCase]
