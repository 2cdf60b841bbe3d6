"""The rows the store returns, typed: what each table's columns hold (sqlite gives dicts)."""

from __future__ import annotations

from typing import TypedDict

from ..vocab import Variant, Verdict


class DocumentRow(TypedDict):
    hash: str
    name: str
    content: str
    created_at: str
    files: str | None  # a skill's other files: a workspaces digest (NULL for a single file)


class ReviewRow(TypedDict):
    id: int
    name: str
    original_hash: str | None
    transfer_set_hash: str | None
    variant: str
    created_at: str
    candidate_hash: str | None


class RunRow(TypedDict):
    id: int
    review_id: int | None
    round: int | None
    config_key: str
    original_hash: str
    candidate_hash: str
    transfer_set_hash: str
    runner_model: str
    judge_model: str
    variant: Variant
    config: str  # JSON: the settings that made the run
    status: str  # running | cancelling | finished | cancelled | interrupted | failed (as read: liveness.py)
    stored_status: str  # what the process last wrote ('running' for a run whose process died)
    thin_accepted: int
    started_at: str
    finished_at: str | None
    summary: str | None  # JSON: the SPEC summary when the run ended
    stats: str | None  # JSON: call sums when the run ended
    owner: str | None  # "host:pid" of the process that runs (or last ran) it
    heartbeat_at: str | None
    cancel_requested_at: str | None
    attempt_started_at: str | None  # when the current (or last) attempt started; a resume is a new one
    attempt_first_call: int | None  # calls.id after which that attempt's calls lie
    stopped_after: str | None  # --fail-fast: the regressed case after which no new case started


class RunCaseRow(TypedDict):
    run_id: int
    case_id: str
    position: int
    status: str  # pending | judged | error
    teacher_key: str | None
    candidate_key: str | None
    judge_keys: str | None  # JSON list of judgement keys
    verdict: Verdict | None
    agreement: float | None
    uncertain: int | None
    gate_truncated: int | None
    aa_verdict: Verdict | None
    error_stage: str | None
    error: str | None
    cached: str | None
    updated_at: str
    checks_lost: int | None  # checks the teacher passed and the candidate failed
    samples: str | None  # JSON: a case run N > 1 times (abeq.execution.sampled), else None


class _Spend(TypedDict):
    """What a stored model reply cost (every cached-call table has these columns)."""

    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    latency: float
    attempts: int
    created_at: str


class _CachedSpend(_Spend):
    cache_read_tokens: int | None
    cache_write_tokens: int | None


class RunnerResultRow(_CachedSpend):
    key: str
    doc_hash: str
    case_id: str
    model: str
    variant: str
    prompt: str
    sample: int
    transcript: str
    self_report: str  # JSON: the six fields
    gate_truncated: int
    gate_section: str
    mode: str | None  # tools | command for a run in a workspace; None for chat
    observed: str | None  # JSON: workspace changes, tool trace, self-report fields not reported


class JudgementRow(_CachedSpend):
    key: str
    model: str
    prompt: str
    sample: int
    verdict: Verdict
    behaviour_delta: str
    original_directness: int
    candidate_directness: int
    interpretation_notes: str
    raw: str


class GradingRow(_Spend):
    key: str
    model: str
    prompt: str
    shown_as_a: str  # teacher | candidate: which arm the grader saw as run A
    reply: str  # JSON: the GradingReply, in A/B terms
    raw: str


class CheckResultRow(TypedDict):
    run_id: int
    case_id: str
    idx: int
    label: str
    type: str
    target: str
    source: str  # assertion | expectation
    kind: str  # code | model | skipped
    description: str
    metric: str
    gates: int
    teacher: int | None  # 1 passed, 0 failed, None skipped
    candidate: int | None
    teacher_evidence: str
    candidate_evidence: str
    reason: str
    shown_as_a: str | None
    grading_key: str | None


class OverrideRow(TypedDict, total=False):
    """A reviewer action on a case: an override of the judge, or an agreement with it."""

    id: int
    run_id: int
    case_id: str
    verdict: Verdict
    judge_verdict: Verdict | None
    reason: str
    reviewer: str
    created_at: str
    action: str  # override | agree (an agreement's verdict is the judge's)
    seen_id: int | None  # the action in effect when this one was saved (what it replaced)
    seen_verdict: Verdict | None  # the verdict the reviewer had in front of them
    carried_from: int  # only on an action carried from another run


class CallSums(TypedDict):
    """What the calls of a run (or of one case) add up to."""

    n: int
    cached: int
    errors: int
    made: int
    runner_made: int
    teacher_made: int
    judge_made: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    cache_read_tokens: int  # of prompt_tokens: read from the provider's prompt cache
    cache_write_tokens: int  # of prompt_tokens: written to it
    cache_saved: float  # dollars the provider's cache saved (priced calls only)
    unpriced: int


class CalibrationRow(TypedDict):
    id: int
    judge_model: str
    prompt: str  # the judge prompt's name@version#hash
    suite: str
    suite_hash: str
    samples: int
    pairs: int
    accuracy: float | None
    regressions: int
    regressions_caught: int
    regression_recall: float | None
    false_regression_rate: float | None
    summary: str  # JSON: per category, confusion, swapped pairs, calls
    created_at: str
