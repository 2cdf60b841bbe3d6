"""What each tool returns, as pydantic models: the MCP server publishes their JSON schemas as the
tools' outputSchema, and a tool's structured result is one of them (with a short text summary)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..schemas import ReportFile


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckSet(Result):
    """A set against the original: its sections, coverage, what no case covers, and whether a
    person has confirmed it for this original's content."""

    cases: int
    per_type: dict[str, int]
    sections_identified: list[str]
    sections_covered: list[str]
    uncovered: list[str] = Field(description="sections of the original no case exercises")
    coverage_pct: float
    warnings: list[str]
    runnable: bool = Field(description="a run would accept the set's size and types")
    confirmed: bool = Field(description="a person confirmed this set for the original's current content")
    confirmation: str = Field(description="'confirmed', or why the set does not count as confirmed")
    confirm_command: str = Field(description="the command a person runs to confirm it (a tool call cannot)")
    document_hash: str
    set_hash: str


class RunStarted(Result):
    """`run`'s answer: the run's id at once (it goes on in the background), or why it cannot start
    until a person confirms the set."""

    status: Literal["started", "needs_confirmation"]
    run_id: int | None = None
    round: int | None = None
    cases: int
    message: str
    coverage: CheckSet | None = Field(None, description="when a person must confirm the set first")
    confirm_command: str | None = None
    estimate: dict[str, Any] | None = Field(None, description="calls, tokens and price at most")
    warnings: list[str] = Field(
        default_factory=list,
        description="what `abeq run` warns of before the run (min_judge_recall, coverage)",
    )


class RunStatus(Result):
    run_id: int
    status: str = Field(description="running, finished, cancelled, interrupted, failed, stopped")
    finished: bool
    done: int = Field(description="cases judged so far")
    total: int
    error: str | None = Field(None, description="why the run ended without a report, when it did")
    next_step: str | None = Field(
        None, description="what to do when the run will not finish by itself (interrupted, failed)"
    )


class Lost(Result):
    """A case the candidate regressed or diverged on: what it no longer does."""

    case_id: str
    verdict: str
    behaviour_delta: str
    checks_lost: list[str] = Field(default_factory=list)
    directness: str = Field(description="original → candidate directness (1-5, from the judge)")


class Trust(Result):
    """How far the verdicts can be trusted: the judge's calibration, A/A noise, the set's mutation
    score, and what the models are (the scripted test model says nothing about real models)."""

    judge_calibration: dict[str, Any]
    aa: list[dict[str, Any]]
    mutation: str | None = Field(None, description="the set's latest mutation score, when measured")
    model_caveats: list[str]


class RunReportResult(Result):
    """A finished run's report in abeq's report schema, with the gate, the lost behaviours and the
    trust figures."""

    run_id: int
    status: str
    report: ReportFile = Field(
        description="report.json as `abeq run --out` writes it: cases and summary, errors, cases not run, "
        "gate-truncated cases with the section they stopped at, reviewers' decisions"
    )
    passed: bool = Field(description="the gate passed")
    gate: dict[str, Any]
    lost: list[Lost] = Field(description="each regressed or diverged case, with what it no longer does")
    errors: list[dict[str, Any]]
    not_run: list[str] = Field(
        default_factory=list, description="cases the run did not get to (interrupted, stopped early)"
    )
    next_step: str | None = Field(None, description="what to do before this report can be final")
    calls: dict[str, Any] = Field(
        description="calls made (teacher_made: the original's runs; 0 when they came from the cache), "
        "cached, tokens, cost"
    )
    trust: Trust


class MutationResult(Result):
    score: float
    killed: int
    mutants: int
    report: dict[str, Any]
    incomplete: list[str]


class MutationStarted(Result):
    """`mutate`'s answer, at once: the test's id (it goes on in the background), or its report when
    an identical test already finished (no call made)."""

    status: Literal["started", "finished"]
    mutation_id: int
    mutants: int
    message: str
    estimate: dict[str, Any] | None = Field(None, description="calls and tokens, at most and as expected")
    result: MutationResult | None = Field(None, description="the report, when the test had already finished")


class MutationStatus(Result):
    mutation_id: int
    status: str = Field(description="running, finished, incomplete, cancelled, interrupted, failed")
    finished: bool
    done: int = Field(description="mutants tried so far")
    mutants: int
    error: str | None = None
    next_step: str | None = Field(None, description="what to do when the test will not finish by itself")
    result: MutationResult | None = Field(None, description="the score and the map, once finished")


class HistoryResult(Result):
    review: str
    rounds: list[dict[str, Any]]


class ExportResult(Result):
    run_id: int
    format: str
    text: str


class CompareResult(Result):
    winner: str
    order_dependent: bool
    comparison: dict[str, Any]
