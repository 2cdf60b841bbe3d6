"""The blind comparator's structures: the judge's reply and comparison.json
(docs/reference/rules.md, "comparison.json")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, create_model

from ..vocab import CONTENT_CRITERIA, STRUCTURE_CRITERIA
from .core import NonEmpty, Strict

# ---------------------------------------------------------------- comparator
# The judge replies in the labels it was shown (A/B). comparison.json reports in terms of the
# inputs as given (a = output_a / --a, b = output_b / --b) after un-blinding; see abeq.comparator.
Winner = Literal["A", "B", "tie"]
PassFail = Literal["PASS", "FAIL"]


class CriterionScore(Strict):
    a: int = Field(ge=1, le=5)
    b: int = Field(ge=1, le=5)
    note: str


def _criteria(name: str, criteria: tuple[str, ...], score: type[BaseModel]) -> type[Strict]:
    """A rubric group: one required field per criterion, in vocab's order (the rubric is spelled
    there once; the schema the comparator is sent and comparison.json follow it)."""
    fields: dict = {c: (score, ...) for c in criteria}
    return create_model(name, __base__=Strict, __module__=__name__, **fields)


ContentQuality = _criteria("ContentQuality", CONTENT_CRITERIA, CriterionScore)
StructuralQuality = _criteria("StructuralQuality", STRUCTURE_CRITERIA, CriterionScore)


class RubricScores(Strict):
    content_quality: ContentQuality  # type: ignore[valid-type]  # built from vocab above
    structural_quality: StructuralQuality  # type: ignore[valid-type]


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


MeanContent = _criteria("MeanContent", CONTENT_CRITERIA, MeanScore)
MeanStructure = _criteria("MeanStructure", STRUCTURE_CRITERIA, MeanScore)


class MeanRubric(Strict):
    content_quality: MeanContent  # type: ignore[valid-type]
    structural_quality: MeanStructure  # type: ignore[valid-type]


class Comparison(Strict):
    """The keys of comparison.json whose shape is fixed, and no other."""

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
    """comparison.json: the keys of fixed shape first, then abeq's own beside them."""

    order_dependent: bool
    seed: int
    mapping: dict[str, dict[str, InputSide]]  # {"order_1": {"A": "a", "B": "b"}, "order_2": {...}}
    orders: list[OrderJudgement]
    weights: dict[str, float]
    judge: dict[str, str]  # model and prompt ref
    inputs: dict[str, str] = {}  # what a and b were (labels or paths), revealed only here
    blinding: dict[str, bool] = {}  # whether strip_origin changed each input

    def spec_part(self) -> dict:
        """Only the keys of fixed shape."""
        return Comparison.model_validate(self.model_dump(include=set(Comparison.model_fields))).model_dump()
