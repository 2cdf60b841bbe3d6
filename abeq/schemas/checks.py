"""Checks on both arms of a case: the grader's reply (natural-language checks) and each check's result."""

from __future__ import annotations

import functools
from typing import Any, Literal

from pydantic import Field, create_model

from ..vocab import CHECK_FAILED_BOTH, CHECK_GAINED, CHECK_KEPT, CHECK_LOST, CHECK_SKIPPED
from .core import NonEmpty, Strict

CheckTarget = Literal["output", "transcript"]  # what a check reads
CheckSource = Literal["assertion", "expectation"]  # where it was written
CheckKind = Literal["code", "model", "skipped"]  # how it is decided


class GradedCheck(Strict):
    """One natural-language check, graded on run A and on run B, each with its evidence."""

    a_pass: bool
    a_evidence: NonEmpty = Field(description="a short quote from run A that shows it (or what is missing)")
    b_pass: bool
    b_evidence: NonEmpty = Field(description="a short quote from run B that shows it (or what is missing)")


@functools.lru_cache(maxsize=256)
def grading_reply(ids: tuple[str, ...]) -> type[Strict]:
    """What the check grader must return for these checks: one property per check id, each
    required, nothing else. The ids are in the schema itself, so a structured-output mode (and a
    local model's grammar) cannot leave a check out, repeat one or invent one."""
    # typed as Any: mypy matches a **dict's values against create_model's own keyword arguments too
    fields: dict[str, Any] = {i: (GradedCheck, ...) for i in ids}
    return create_model("GradingReply", __base__=Strict, **fields)


class CheckResult(Strict):
    """One check of a case on both arms. `teacher`/`candidate` are None only for a skipped check."""

    label: str  # e.g. contains "[ticket]"; what behaviour_delta names
    type: str
    target: CheckTarget = "output"
    source: CheckSource = "assertion"
    kind: CheckKind
    description: str = ""
    metric: str = ""
    gates: bool = True  # False for promptfoo's weight 0: reported, never changes a verdict
    teacher: bool | None = None
    candidate: bool | None = None
    teacher_evidence: str = ""
    candidate_evidence: str = ""
    reason: str = ""  # why a check was skipped
    shown_as_a: Literal["teacher", "candidate"] | None = None  # the blind order the grader saw

    @property
    def outcome(self) -> str:
        if self.kind == "skipped" or self.teacher is None or self.candidate is None:
            return CHECK_SKIPPED
        if self.teacher and not self.candidate:
            return CHECK_LOST
        if not self.teacher and self.candidate:
            return CHECK_GAINED
        return CHECK_KEPT if self.teacher else CHECK_FAILED_BOTH

    @property
    def lost(self) -> bool:
        """The teacher passes and the candidate fails: a lost behaviour, whatever the judge said."""
        return self.gates and self.outcome == CHECK_LOST
