"""The one schema source: every structure abeq reads, writes or asks a model for.

JSON schemas sent to models are derived from these classes, never written by hand.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator

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
    user_confirmed: StrictBool = False  # true/false only: "yes" in a file is refused, not read as true
    confirmation_timestamp: Optional[str] = None
    # Recorded when a reviewer explicitly accepts a set below the minimum.
    thin_accepted: StrictBool = False
    # set_hash of the cases at confirmation: a file edited after it was confirmed no longer matches.
    confirmed_hash: Optional[str] = None


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
            return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

        changed = [v for v in get_args(Verdict) if v != "equivalent"]
        return {"anyOf": [variant({"const": "equivalent"}, {"maxLength": 0}),
                          variant({"enum": changed}, {"minLength": 1})]}


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


# ---------------------------------------------------------------- comparator (SPEC §10)
# The judge replies in the labels it was shown (A/B). comparison.json reports in terms of the
# inputs as given (a = output_a / --a, b = output_b / --b) after un-blinding; see abeq.comparator.
Winner = Literal["A", "B", "tie"]
PassFail = Literal["PASS", "FAIL"]
CONTENT_CRITERIA: tuple[str, ...] = ("completeness", "accuracy", "usefulness", "clarity", "depth")
STRUCTURE_CRITERIA: tuple[str, ...] = ("organization", "progressive_disclosure", "conciseness", "formatting",
                                       "consistency")


class CriterionScore(Strict):
    a: int = Field(ge=1, le=5)
    b: int = Field(ge=1, le=5)
    note: str


class ContentQuality(Strict):
    completeness: CriterionScore
    accuracy: CriterionScore
    usefulness: CriterionScore
    clarity: CriterionScore
    depth: CriterionScore


class StructuralQuality(Strict):
    organization: CriterionScore
    progressive_disclosure: CriterionScore
    conciseness: CriterionScore
    formatting: CriterionScore
    consistency: CriterionScore


class RubricScores(Strict):
    content_quality: ContentQuality
    structural_quality: StructuralQuality


class OutputQuality(Strict):
    a: str
    b: str


class ExpectationResult(Strict):
    assertion_id: str
    assertion_text: str
    a_result: PassFail
    b_result: PassFail
    note: str


class ComparatorReply(Strict):
    """What the comparator model must return; scores before the verdict, so it reasons first."""

    rubric_scores: RubricScores
    expectation_results: list[ExpectationResult]
    output_quality: OutputQuality
    reasoning: NonEmpty
    winner: Winner


class Totals(Strict):
    content: float
    structure: float
    overall: float


class WeightedTotals(Strict):
    a: Totals
    b: Totals


class MeanScore(Strict):
    """A criterion in comparison.json: the mean of both orders' scores (so x.5 is possible)."""

    a: float = Field(ge=1, le=5)
    b: float = Field(ge=1, le=5)
    note: str


class MeanContent(Strict):
    completeness: MeanScore
    accuracy: MeanScore
    usefulness: MeanScore
    clarity: MeanScore
    depth: MeanScore


class MeanStructure(Strict):
    organization: MeanScore
    progressive_disclosure: MeanScore
    conciseness: MeanScore
    formatting: MeanScore
    consistency: MeanScore


class MeanRubric(Strict):
    content_quality: MeanContent
    structural_quality: MeanStructure


class Comparison(Strict):
    """comparison.json exactly as SPEC §10 lays it out (no other keys)."""

    winner: Winner
    reasoning: str
    rubric_scores: MeanRubric
    weighted_totals: WeightedTotals
    output_quality: OutputQuality
    expectation_results: list[ExpectationResult]


InputSide = Literal["a", "b"]


class OrderJudgement(Strict):
    """One order as the judge saw it: labels, raw reply and the totals code computed from it."""

    order: int
    shown: dict[str, InputSide]  # {"A": "a"|"b", "B": "b"|"a"}
    judgement: ComparatorReply  # in the presented labels
    weighted_totals: WeightedTotals  # presented labels too
    winner_presented: Winner
    winner_input: Literal["a", "b", "tie"]
    rubric_winner_presented: Winner  # what the computed totals alone would pick
    overruled: bool  # the holistic winner differs from the rubric's
    raw: str
    attempts: int


class ComparisonResult(Comparison):
    """comparison.json: the SPEC §10 keys first, then abeq's extras beside them."""

    order_dependent: bool
    seed: int
    mapping: dict[str, dict[str, InputSide]]  # {"order_1": {"A": "a", "B": "b"}, "order_2": {...}}
    orders: list[OrderJudgement]
    weights: dict[str, float]
    judge: dict[str, str]  # model and prompt ref
    inputs: dict[str, str] = {}  # what a and b were (labels or paths), revealed only here
    blinding: dict[str, bool] = {}  # whether strip_origin changed each input

    def spec_part(self) -> dict:
        """Only the SPEC §10 keys."""
        return Comparison.model_validate(self.model_dump(include=set(Comparison.model_fields))).model_dump()
