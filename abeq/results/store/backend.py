"""The interfaces of a store's parts, and `Backend`, the store that has them all.

A store is its parts, and callers reach each part by its name: `store.inputs` (documents, transfer
sets, reviews), `store.log` (runs, their cases, calls and checks), `store.cache` (model results by
key), `store.ledger` (reviewer actions and the trust sums), `store.calibrations`,
`store.mutations` and `store.assignments` (cases shared out to reviewers). Each part's interface is
a Protocol below, and `Backend` says which parts a store has. The engine needs two of them while
a run goes on: a `ResultCache` and a `RunLog`.

Every part returns and takes the typed rows of rows.py, a row written in the type it is read in.

What abeq ships is one implementation of each Protocol, the `Sql*` part classes (inputs.py,
runlog.py, cached.py, ledger.py, calibrations.py, mutations.py, assignments.py), and two
connections they run over: sqlite's (connection.Connection, a file) and PostgreSQL's
(postgres.PgConnection, a team's server). The parts' SQL is written once, in the subset both
speak; what differs between the two databases is the connection's to bridge (its parameters, an
upsert, the id of a new row, a row's version, a lock other processes wait on), behind the methods
and attributes connection.SqlConnection lists, so no part asks which database it is on. Another
database is another connection of those methods; another kind of store (not SQL) would implement
these Protocols with classes of its own. No module outside the store issues SQL
(tests/test_backend.py holds it), and `Store` is not a facade: it has no method of its own that
hands a call on to a part (the same test holds that too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ...schemas import TransferSet
from ...vocab import CaseRunStatus, ReviewAction, Verdict
from .rows import (
    AssignmentRow,
    CalibrationRow,
    CallProgress,
    CallRow,
    CallSums,
    CaseCounts,
    CheckResultRow,
    DocumentRow,
    GradingRow,
    JudgedVerdict,
    JudgementRow,
    OverrideRow,
    ReviewRow,
    RunCaseRow,
    RunnerResultRow,
    RunRow,
    RunUpdate,
    SetConfirmation,
    TeacherCase,
    Transcripts,
)


@runtime_checkable
class Inputs(Protocol):
    """What a person brings: documents (with a skill's other files), transfer sets (with their
    confirmation and their cases' workspace files), and the named reviews that bind them."""

    def put_document(self, name: str, content: str, files: dict[str, str] | None = None) -> str: ...

    def document(self, h: str) -> DocumentRow | None: ...

    def record_load(self, h: str, name: str, source: str, review: str | None, role: str) -> None: ...

    def loaded_as(self, h: str, review: str | None = None, role: str | None = None) -> dict | None: ...

    def document_files(self, row: DocumentRow | dict) -> dict[str, str]: ...

    def put_transfer_set(self, ts: TransferSet, by: str | None = None, review: str | None = None) -> str: ...

    def transfer_set(self, h: str) -> TransferSet | None: ...

    def confirmation(self, h: str) -> SetConfirmation: ...

    def review(self, name: str) -> ReviewRow | None: ...

    def reviews(self) -> list[ReviewRow]: ...

    def upsert_review(
        self, name: str, original_hash: str | None, transfer_set_hash: str | None, variant: str
    ) -> int: ...

    def rename_review(self, review_id: int, name: str) -> None: ...

    def set_review_candidate(self, review_id: int, doc_hash: str) -> None: ...

    def review_candidate(self, review_id: int) -> str | None: ...

    def review_candidates(self, review_id: int) -> list[dict]: ...


@runtime_checkable
class ResultCache(Protocol):
    """Cached model results by key. A `put_*` replaces the row under its key; errors are never put."""

    def runner_result(self, key: str) -> RunnerResultRow | None: ...

    def first_runner_result(self, keys: Iterable[str]) -> RunnerResultRow | None:
        """The result under the first of these keys that has one (its `key` says which)."""
        ...

    def put_runner_result(self, row: RunnerResultRow) -> None: ...

    def judgement(self, key: str) -> JudgementRow | None: ...

    def judgements(self, keys: list[str]) -> dict[str, JudgedVerdict]:
        """The verdict fields of the judgements under these keys (what a report reads), by key."""
        ...

    def put_judgement(self, row: JudgementRow) -> None: ...

    def grading(self, key: str) -> GradingRow | None: ...

    def put_grading(self, row: GradingRow) -> None: ...

    def gate_section(self, runner_key: str) -> str: ...

    def claim(self, key: str, run_id: int, owner: str) -> bool:
        """This run makes the result under `key` now: True, unless another live run claimed it first
        (then wait for its result). A claim whose run died, or this run's own, is taken."""
        ...

    def release(self, key: str, run_id: int) -> None:
        """The run's claim on `key` is over (its result is stored, or its call failed)."""
        ...

    def end_claims(self, run_id: int, owner: str) -> None:
        """The run has ended: its claims held by `owner` or by a dead process of this host go."""
        ...


@runtime_checkable
class RunLog(Protocol):
    """Runs, their cases, the calls they made and what their checks found; who runs a run now. A
    running engine writes (and polls) here; the report, the CLI and the desk read it."""

    remote: bool
    """Its calls (and the result cache's beside it) are round trips to a server: the engine makes
    them off its event loop. False for a file in this process, whose calls are made in place."""

    def batch(self) -> AbstractContextManager[None]:
        """The writes made inside it in one transaction (a call's result with its ledger row): all
        of them or none. A backend whose cache is elsewhere covers its own writes."""
        ...

    def create_run(self, row: RunRow) -> int: ...

    def exclusive(self) -> AbstractContextManager[None]:
        """The writes made inside it in one transaction that no other process's `exclusive` one
        interleaves with: shards of one run starting at once find (or make) the same run."""
        ...

    def unfinished_run(self, config_key: str) -> RunRow | None: ...

    def update_run(self, run_id: int, **fields: Unpack[RunUpdate]) -> None: ...

    def run(self, run_id: int) -> RunRow | None:
        """The run with its status as a reader should see it (`stored_status`: as written)."""
        ...

    def runs(self, review_id: int | None = None) -> list[RunRow]: ...

    def latest_run(self, review_id: int) -> RunRow | None: ...

    def add_pending_cases(self, run_id: int, case_ids: list[str]) -> None: ...

    def put_run_case(self, row: RunCaseRow) -> None: ...

    def run_case(self, run_id: int, case_id: str) -> RunCaseRow | None: ...

    def run_cases(self, run_id: int) -> list[RunCaseRow]: ...

    def case_counts(self, run_id: int) -> CaseCounts: ...

    def mark_not_run(self, run_id: int, status: CaseRunStatus, stage: str, error: str) -> int: ...

    def teacher_runs(self, original_hash: str) -> list[TeacherCase]: ...

    def transcripts(self, run_id: int) -> list[Transcripts]: ...

    def report_stamp(self, run_id: int) -> tuple: ...

    def log_call(self, row: CallRow) -> None: ...

    def call_stats(self, run_id: int) -> CallSums: ...

    def call_progress(self, run_id: int, after_call: int = 0) -> CallProgress: ...

    def case_costs(self, run_id: int, case_id: str | None = None) -> dict[str, CallSums]: ...

    def made_calls_by_kind(self, run_id: int) -> dict[str, int]: ...

    def cases_with_calls(self, run_id: int, after_call: int = 0) -> set[str]: ...

    def claim_run(self, run_id: int, owner: str) -> None: ...

    def heartbeat(self, run_id: int) -> None: ...

    def request_cancel(self, run_id: int) -> None: ...

    def cancel_requested(self, run_id: int) -> bool: ...

    def put_check_results(self, run_id: int, case_id: str, rows: list[CheckResultRow]) -> None: ...

    def check_results(self, run_id: int, case_id: str | None = None) -> dict[str, list[CheckResultRow]]: ...


@runtime_checkable
class Ledger(Protocol):
    """Reviewer actions on the judge's verdicts (the latest per case in effect, the rest the audit
    trail; an action carries to an identical judgement in another run) and the trust sums."""

    def add_override(
        self,
        run_id: int,
        case_id: str,
        verdict: Verdict,
        reason: str,
        reviewer: str,
        judge_verdict: Verdict | None,
        *,
        action: ReviewAction = ...,
        check_seen: bool = False,
        seen_id: int | None = None,
    ) -> int: ...

    def action_in_effect(self, run_id: int, case_id: str) -> OverrideRow | None: ...

    def reviewed(self, run_id: int) -> dict[str, OverrideRow]: ...

    def overrides(self, run_id: int) -> dict[str, OverrideRow]: ...

    def carried_overrides(self, run_id: int, case_id: str | None = None) -> dict[str, OverrideRow]: ...

    def all_overrides(self) -> list[OverrideRow]: ...

    def override_history(self, run_id: int, case_id: str) -> list[OverrideRow]: ...

    def reviewed_pairs(self) -> list[dict]: ...

    def check_witness_counts(self) -> list[dict]: ...

    def aa_counts(self, run_id: int | None = None) -> list[dict]: ...


@runtime_checkable
class Calibrations(Protocol):
    """A judge model's measured figures on a labelled suite, one row per measurement."""

    def put(self, row: CalibrationRow) -> int: ...

    def all(self, judge_model: str | None = None) -> list[CalibrationRow]: ...

    def latest(
        self, judge_model: str, prompt: str | None = None, suite: str | None = None
    ) -> CalibrationRow | None: ...


@runtime_checkable
class Mutations(Protocol):
    """Mutation tests (`abeq mutate`), the mutants a model wrote for them, and what their report
    reads besides the runs."""

    def start(self, key: str, row: dict) -> int: ...

    def update(self, mutation_id: int, **fields) -> None: ...

    def finished(self, key: str) -> dict | None: ...

    def get(self, mutation_id: int) -> dict | None: ...

    def latest(
        self,
        transfer_set_hash: str,
        original_hash: str | None = None,
        runner: str | None = None,
        judge: str | None = None,
    ) -> dict | None: ...

    def noisy_cases(
        self, original_hash: str, transfer_set_hash: str, runner: str, judge: str
    ) -> set[str]: ...

    def written(self, key: str) -> dict | None: ...

    def put_written(self, row: dict) -> None: ...

    def transcript(self, key: str | None) -> str: ...

    def mutation_run_ids(self) -> set[int]: ...


@runtime_checkable
class Assignments(Protocol):
    """Which reviewer each case of a run is assigned to (one per case): work shared out in a team."""

    def assign(self, run_id: int, cases: Mapping[str, str], by: str) -> int:
        """Assign each case (id -> reviewer), replacing an earlier assignment; how many."""
        ...

    def clear(self, run_id: int, case_ids: Iterable[str] | None = None) -> int: ...

    def of_run(self, run_id: int) -> dict[str, AssignmentRow]: ...


if TYPE_CHECKING:  # Python 3.10's typing lacks it; annotations are never evaluated at run time
    from typing_extensions import Unpack


class Backend(Protocol):
    """A store: its parts, where it lives (`path`, shown in messages), and `close`."""

    path: str
    inputs: Inputs
    log: RunLog
    cache: ResultCache
    ledger: Ledger
    calibrations: Calibrations
    mutations: Mutations
    assignments: Assignments

    def close(self) -> None: ...
