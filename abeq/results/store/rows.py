"""The rows the store writes and returns, typed: what each table's columns hold. A row is written in
the type it is read in; the columns the store fills itself (ids, timestamps, a new run's status) are
NotRequired in a row written, and always there in a row read."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from ...models.ask import CachedSpend, Spend
from ...vocab import CaseRunStatus, ReviewAction, RunStatus, Variant, Verdict

if TYPE_CHECKING:  # Python 3.10's typing lacks it; annotations here are never evaluated at run time
    from typing_extensions import NotRequired


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
    id: NotRequired[int]  # filled by the store, as are the columns marked so below
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
    status: NotRequired[RunStatus]  # as read: a run whose process died reads interrupted (liveness.py)
    stored_status: NotRequired[
        RunStatus
    ]  # what the process last wrote ('running' for a run whose process died)
    thin_accepted: int
    set_confirmed_for_run: NotRequired[str | None]  # who accepted the set for this run only (--confirm)
    started_at: NotRequired[str]
    finished_at: NotRequired[str | None]
    summary: NotRequired[str | None]  # JSON: the report's summary when the run ended
    stats: NotRequired[str | None]  # JSON: call sums when the run ended
    owner: NotRequired[str | None]  # "host:pid" of the process that runs (or last ran) it
    heartbeat_at: NotRequired[str | None]
    cancel_requested_at: NotRequired[str | None]
    attempt_started_at: NotRequired[
        str | None
    ]  # when the current (or last) attempt started; a resume is a new one
    attempt_first_call: NotRequired[int | None]  # calls.id after which that attempt's calls lie
    stopped_after: NotRequired[str | None]  # --fail-fast: the regressed case after which no new case started


class RunUpdate(TypedDict, total=False):
    """What a run's process changes on its row as it goes and when it ends."""

    status: RunStatus
    finished_at: str | None
    summary: str | None
    stats: str | None
    stopped_after: str | None


class RunCaseKey(TypedDict):
    """Which case of which run, and its place in the set."""

    run_id: int
    case_id: str
    position: int


class CaseResult(TypedDict):
    """What a run found on one of its cases: a run case's row without which case it is."""

    status: CaseRunStatus
    teacher_key: NotRequired[str | None]
    candidate_key: NotRequired[str | None]
    judge_keys: NotRequired[str | None]  # JSON list of judgement keys
    verdict: NotRequired[Verdict | None]
    agreement: NotRequired[float | None]
    uncertain: NotRequired[int | None]
    gate_truncated: NotRequired[int | None]
    aa_verdict: NotRequired[Verdict | None]
    error_stage: NotRequired[str | None]
    error: NotRequired[str | None]
    cached: NotRequired[str | None]
    updated_at: NotRequired[str]  # filled by the store
    checks_lost: NotRequired[int | None]  # checks the teacher passed and the candidate failed
    samples: NotRequired[str | None]  # JSON: a case run N > 1 times (abeq.execution.sampled), else None


class RunCaseRow(RunCaseKey, CaseResult):
    """A case of a run; a row written replaces the case's row, and a column it leaves out is NULL."""


class CaseCounts(TypedDict):
    """A run's cases: all of them, those done (judged or errored), judged, errored."""

    total: int
    done: int
    judged: int
    errors: int


class CallRow(TypedDict):
    """One model call of a run, made or served from the cache (the calls table)."""

    id: NotRequired[int]  # filled by the store
    run_id: int
    case_id: str
    kind: str  # runner-teacher, runner-candidate, judge, judge-aa, judge-checks, …
    model: str
    key: str
    cached: int
    ok: int
    error: str
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    latency: float
    attempts: int
    cache_read_tokens: int
    cache_write_tokens: int
    cache_saved: float
    created_at: NotRequired[str]  # filled by the store


class CallProgress(TypedDict):
    """The calls of a run's current attempt: runner and judge calls resolved, cached, made, failed."""

    runner: int
    judge: int
    cached: int
    made: int
    failed: int


class TeacherCase(TypedDict):
    """A judged case of a run of an original, with its teacher's cached transcript key."""

    run_id: int
    runner_model: str
    transfer_set_hash: str
    case_id: str
    teacher_key: str


class Transcripts(TypedDict):
    """A case of a run with its two transcripts (None where it has none)."""

    case_id: str
    teacher: str | None
    candidate: str | None


class SetConfirmation(TypedDict, total=False):
    """When, by whom and in which review a stored set was confirmed (empty when it was not)."""

    confirmed_at: str | None
    confirmed_by: str | None
    confirmed_in: str | None


class _Spend(Spend):
    """What a stored model reply cost (every cached-call table has these columns)."""

    created_at: NotRequired[str]  # filled by the store


class _CachedSpend(CachedSpend):
    created_at: NotRequired[str]  # filled by the store


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
    mode: NotRequired[str | None]  # tools | command for a run in a workspace; None for chat
    observed: NotRequired[str | None]  # JSON: workspace changes, tool trace, self-report fields not reported


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


class JudgedVerdict(TypedDict):
    """What a report reads of a judgement (not its raw reply): `ResultCache.judgements`."""

    key: str
    verdict: Verdict
    behaviour_delta: str
    original_directness: int
    candidate_directness: int
    interpretation_notes: str


class GradingRow(_Spend):
    key: str
    model: str
    prompt: str
    shown_as_a: str  # teacher | candidate: which arm the grader saw as run A
    reply: str  # JSON: the GradingReply, in A/B terms
    raw: str


class CheckResultRow(TypedDict):
    run_id: NotRequired[int]  # filled by the store from put_check_results' arguments
    case_id: NotRequired[str]
    idx: NotRequired[int]
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
    action: ReviewAction  # an agreement's verdict is the judge's
    seen_id: int | None  # the action in effect when this one was saved (what it replaced)
    seen_verdict: Verdict | None  # the verdict the reviewer had in front of them
    carried_from: int  # only on an action carried from another run


class AssignmentRow(TypedDict):
    """A case of a run assigned to a reviewer (one reviewer per case)."""

    run_id: int
    case_id: str
    reviewer: str
    assigned_by: str  # who assigned it ('' when not known)
    assigned_at: str


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
    id: NotRequired[int]  # filled by the store
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
    created_at: NotRequired[str]  # filled by the store
