"""The one schema source: every structure abeq reads, writes or asks a model for.

JSON schemas sent to models are derived from these classes, never written by hand.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

Verdict = Literal["equivalent", "candidate-regressed", "candidate-diverged"]
VERDICTS: tuple[str, ...] = ("equivalent", "candidate-regressed", "candidate-diverged")
CaseType = Literal["happy", "edge", "adversarial", "composition"]
CASE_TYPES: tuple[str, ...] = ("happy", "edge", "adversarial", "composition")
CaseStatus = Literal["derived", "user-modified", "user-added", "confirmed"]
Variant = Literal["skill", "instruction-file"]

STOPPED = "STOPPED (no scripted answer)"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- transfer set
class GateResponse(Strict):
    gate_id: str = ""
    gate_type: str = ""
    pattern: str
    response: str


class Case(Strict):
    id: str = Field(min_length=1)
    type: CaseType
    input: str = Field(min_length=1)
    exercises_sections: list[str] = []
    status: CaseStatus = "user-added"
    gate_responses: list[GateResponse] = []
    # Kept from imported formats (e.g. skill-creator expectations); not sent to the runner.
    expectations: list[str] = []
    # Why the case exists (the drafting model's reason, or the reviewer's); not sent to the runner.
    rationale: str = ""

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
    user_confirmed: bool = False
    confirmation_timestamp: Optional[str] = None
    # Recorded when a reviewer explicitly accepts a set below the minimum.
    thin_accepted: bool = False


# ---------------------------------------------------------------- drafting
class DraftCase(Strict):
    """One case the drafting model proposes; code then checks ids and sections and marks it derived."""

    # No string-length keywords: several hosted structured-output modes reject them; checked below.
    id: str = Field(description="short unique slug, e.g. edge-over-20-changes")
    type: CaseType
    input: str = Field(description="the realistic request a user would send")
    exercises_sections: list[str] = Field(description="titles copied exactly from the sections list")
    gate_responses: list[GateResponse] = Field(description="an answer for each question the document makes "
                                                           "the model ask the user on this input")
    rationale: str = Field(description="which pass found it and the behaviour it checks")

    @field_validator("id", "input")
    @classmethod
    def _filled(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v


class DraftReply(Strict):
    """What the drafting model must return."""

    cases: list[DraftCase] = Field(min_length=1, max_length=40)


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

    transcript: str = Field(min_length=1, description="What you did, step by step, including any text you wrote.")
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


class EfficiencySignal(Strict):
    original_directness: int = Field(ge=1, le=5)
    candidate_directness: int = Field(ge=1, le=5)
    interpretation_notes: str


# ---------------------------------------------------------------- report (SPEC §4, exact)
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


class Override(Strict):
    case_id: str
    verdict: Verdict
    reason: str = Field(min_length=1)
    reviewer: str = ""
    created_at: str = ""
    judge_verdict: Optional[str] = None
