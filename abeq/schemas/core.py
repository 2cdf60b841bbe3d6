"""Transfer sets, runner and judge replies, and the report.

JSON schemas sent to models are derived from these classes, never written by hand.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictBool, field_validator

from ..vocab import EQUIVALENT, CaseProvenance, CaseType, Verdict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- transfer set
class GateResponse(Strict):
    gate_id: str = ""
    gate_type: str = ""
    pattern: str
    response: str


class Assertion(Strict):
    """A check on what a run produced, in promptfoo's vocabulary: code checks (contains, icontains,
    regex, equals, starts-with, is-json, contains-any, contains-all, their not- forms, …) or a
    natural-language one (llm-rubric) that the judge model grades on both arms."""

    type: str = Field(min_length=1)
    value: Any = None
    description: str = ""
    metric: str = ""
    # what the check reads on each arm: the self-report's output_produced, or the whole transcript
    target: Literal["output", "transcript"] = "output"
    # the source's other settings (promptfoo's threshold, weight, transform, …), kept as given
    options: dict[str, Any] = {}


class CommandOutput(Strict):
    """A scripted answer for a command a runner wants to run in the case workspace (first match wins)."""

    pattern: str = Field(min_length=1)
    output: str
    exit_code: int = 0


class Case(Strict):
    id: str = Field(min_length=1)
    type: CaseType
    input: str = Field(min_length=1)
    exercises_sections: list[str] = []
    status: CaseProvenance = "user-added"
    gate_responses: list[GateResponse] = []
    # Kept from imported formats (e.g. skill-creator expectations); not sent to the runner.
    expectations: list[str] = []
    # Why the case exists (the drafting model's reason, or the reviewer's); not sent to the runner.
    rationale: str = ""
    # Checks run on both arms' output (see abeq.execution.checks.checks); part of the case's identity.
    assertions: list[Assertion] = []
    # Fields a source file carried that abeq does not use (kept so nothing is lost on import).
    metadata: dict[str, Any] = {}
    # The case's workspace: a folder relative to the set file, and/or inline files (path -> text);
    # each run gets a fresh copy. Part of the case's identity.
    workspace: str | None = None
    files: dict[str, str] = {}
    command_outputs: list[CommandOutput] = []
    # The `workspace` folder's files, read when the set was loaded (abeq.sets.workspace): never
    # written back into a set file; the store keeps them with the set.
    _folder_files: dict[str, str] | None = PrivateAttr(default=None)

    @field_validator("id", "input")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v


class Coverage(Strict):
    sections_identified: list[str] = []
    sections_covered: list[str] = []
    thin_coverage_warnings: list[str] = []


class TransferSet(Strict):
    document_hash: str = ""
    coverage: Coverage = Coverage()
    cases: list[Case]
    user_confirmed: StrictBool = False  # true/false only: "yes" in a file is refused, not read as true
    confirmation_timestamp: str | None = None
    # Recorded when a reviewer explicitly accepts a set below the minimum.
    thin_accepted: StrictBool = False
    # set_hash of the cases at confirmation: a file edited after it was confirmed no longer matches.
    confirmed_hash: str | None = None
    # who confirmed it (signed in on the desk, else `git config user.name`, else "unknown")
    confirmed_by: str | None = None
    # A confirmation for one run only (`abeq run --confirm`): by whom, and the set as it was given;
    # the store keeps that, never this confirmation (abeq.sets.confirmation.confirm_for_run).
    _one_run: tuple[str, TransferSet] | None = PrivateAttr(default=None)


# ---------------------------------------------------------------- drafting
class DraftCase(Strict):
    """One case the drafting model proposes; code then checks ids and sections and marks it derived."""

    # No string-length keywords: several hosted structured-output modes reject them; checked below.
    id: str = Field(description="short unique slug, e.g. edge-over-20-changes")
    type: CaseType
    input: str = Field(description="the realistic request a user would send")
    exercises_sections: list[str] = Field(description="titles copied exactly from the sections list")
    gate_responses: list[GateResponse] = Field(
        description="an answer for each question the document makes the model ask the user on this input"
    )
    rationale: str = Field(description="which pass found it and the behaviour it checks")

    @field_validator("id", "input")
    @classmethod
    def _filled(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v


class DraftReply(Strict):
    """What the drafting model must return."""

    # maxItems is in the schema on purpose: it makes a small local model that repeats itself close the
    # JSON instead of running out of tokens mid-object. A first draft; the reviewer adds more.
    cases: list[DraftCase] = Field(min_length=1, max_length=12)


# ---------------------------------------------------------------- runner
class GateHit(Strict):
    gate_type: str
    prompt_text: str
    response_used: str
    section: str = ""


NonEmpty = Annotated[str, Field(min_length=1)]


class SelfReport(Strict):
    output_produced: NonEmpty
    steps_followed_skipped: NonEmpty
    ambiguities: NonEmpty
    improvisation: NonEmpty
    wanted_to_deviate: NonEmpty
    gates_hit: list[GateHit]

    @field_validator(
        "output_produced", "steps_followed_skipped", "ambiguities", "improvisation", "wanted_to_deviate"
    )
    @classmethod
    def _present(cls, v: str) -> str:
        # An empty field is a missing field: the runner must say "none" when there is nothing.
        if not v.strip():
            raise ValueError("field is empty; the runner must fill every self-report field")
        return v


SELF_REPORT_FIELDS: tuple[str, ...] = tuple(SelfReport.model_fields)


class RunnerReply(Strict):
    """What the runner model must return."""

    transcript: str = Field(
        min_length=1, description="What you did, step by step, including any text you wrote."
    )
    self_report: SelfReport

    @field_validator("transcript")
    @classmethod
    def _transcript(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("transcript is empty")
        return v


# ---------------------------------------------------------------- judge
class JudgeReply(Strict):
    """What the equivalence judge model must return (flat, so small models manage it)."""

    verdict: Verdict
    behaviour_delta: str
    original_directness: int = Field(ge=1, le=5)
    candidate_directness: int = Field(ge=1, le=5)
    interpretation_notes: NonEmpty

    @classmethod
    def grammar_schema(cls) -> dict:
        """The schema for grammar-constrained decoding (local models): the same object, with the
        rule code checks anyway (delta empty iff equivalent) built in, so a small model cannot
        produce a reply that breaks it. Hosted models get the plain schema; every reply is still
        validated and checked (judge.check_reply) whatever produced it."""
        base = cls.model_json_schema()
        same = {k: v for k, v in base["properties"].items() if k not in ("verdict", "behaviour_delta")}

        def variant(verdict: dict, delta: dict) -> dict:
            props = {"verdict": verdict, "behaviour_delta": {"type": "string", **delta}, **same}
            return {
                "type": "object",
                "properties": props,
                "required": list(props),
                "additionalProperties": False,
            }

        changed = [v for v in get_args(Verdict) if v != EQUIVALENT]
        return {
            "anyOf": [
                variant({"const": EQUIVALENT}, {"maxLength": 0}),
                variant({"enum": changed}, {"minLength": 1}),
            ]
        }


class EfficiencySignal(Strict):
    original_directness: int = Field(ge=1, le=5)
    candidate_directness: int = Field(ge=1, le=5)
    interpretation_notes: str


# ------------------------------------------------- report (docs/reference/rules.md, "The report")
class CaseVerdict(Strict):
    case_id: str
    verdict: Verdict
    behaviour_delta: str
    efficiency_signal: EfficiencySignal


class Summary(Strict):
    # `pass` is a Python keyword, hence the alias.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    pass_: bool = Field(alias="pass")
    regressions: int
    divergences: int
    equivalents: int


class Report(Strict):
    cases: list[CaseVerdict]
    summary: Summary


class CaseError(Strict):
    case_id: str
    stage: str
    error: str


# ---------------------------------------- report.json (docs/reference/rules.md, "The report")
class TruncatedCase(Strict):
    """A case the runner stopped at an interactive gate with no scripted answer."""

    case_id: str
    section: str = Field(description="the section of the document where it stopped")


class StoppedEarly(Strict):
    """--fail-fast stopped the run."""

    after_case: str = Field(description="the case whose regression stopped it")
    not_run: int = Field(description="cases never started (listed in `errors` with stage not-run)")


class ReviewedCase(Strict):
    """A case a reviewer acted on: the verdict in effect, who, when, and the run it was carried from."""

    case_id: str
    verdict: Verdict = Field(description="the verdict in effect (the reviewer's)")
    reviewer: str
    at: str = Field(description="when, as stored (UTC, ISO 8601)")
    carried_from_run: int | None = Field(
        description="the run whose identical judgement the action was made on; null: this run"
    )


class ReportOverride(ReviewedCase):
    judge_verdict: Verdict | None = Field(description="the judge's verdict the override replaced")
    reason: str


class ReportFile(Report):
    """report.json: the report (`cases` and `summary`, the shape the rules fix) and, beside them, what
    abeq adds. Every key a reader may meet is declared here; nothing else is written."""

    errors: list[CaseError] = Field(
        description="cases with no verdict: errored after retries, or never run (stage 'not run', "
        "'not run (stopped early)')"
    )
    stopped_early: StoppedEarly | None = Field(
        default=None, description="present only when --fail-fast stopped the run"
    )
    gate_truncated: list[TruncatedCase] = Field(
        description="cases judged on what ran before an interactive gate with no scripted answer"
    )
    undecided: list[str] | None = Field(
        default=None,
        description="present only with --runner-samples: cases whose candidate showed a behaviour less "
        "often, but not beyond chance at this N",
    )
    overrides: list[ReportOverride] | None = Field(
        default=None, description="present only when a reviewer overrode a verdict"
    )
    agreements: list[ReviewedCase] | None = Field(
        default=None, description="present only when a reviewer agreed with the judge"
    )


class Override(Strict):
    case_id: str
    verdict: Verdict
    reason: str = Field(min_length=1)
    reviewer: str = ""
    created_at: str = ""
    judge_verdict: str | None = None
