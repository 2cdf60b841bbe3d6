"""The interfaces a store backend implements; `Store` (sqlite) is the one abeq ships.

The engine needs two narrow parts while a run goes on: a `ResultCache` (runner results,
judgements and gradings, each stored under the key of everything that produced it; errors are
never stored) and a `RunLog` (the run's calls, cases, checks, liveness and cancel flag). The CLI,
the desk and the report read through the rest of `Store`'s public methods (documents, transfer
sets, reviews, runs, reviewer actions and the sums the trust figures read), all returning the
typed rows of rows.py. A second backend (PostgreSQL, for a team sharing one store) is a module
with a class offering the same public methods over its own connection; `Store` composes its parts
(connection.py, cached.py, ledger.py) and none of its callers issue SQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from .rows import CallSums, GradingRow, JudgementRow, RunnerResultRow


@runtime_checkable
class ResultCache(Protocol):
    """Cached model results by key. A `put_*` replaces the row under its key."""

    def runner_result(self, key: str) -> RunnerResultRow | None: ...

    def first_runner_result(self, keys: Iterable[str]) -> RunnerResultRow | None:
        """The result under the first of these keys that has one (its `key` says which)."""
        ...

    def put_runner_result(self, row: dict) -> None: ...

    def judgement(self, key: str) -> JudgementRow | None: ...

    def judgements(self, keys: list[str]) -> dict[str, JudgementRow]: ...

    def put_judgement(self, row: dict) -> None: ...

    def grading(self, key: str) -> GradingRow | None: ...

    def put_grading(self, row: dict) -> None: ...

    def gate_section(self, runner_key: str) -> str: ...


@runtime_checkable
class RunLog(Protocol):
    """What a running engine writes (and polls) about its run."""

    def batch(self) -> AbstractContextManager[None]:
        """The writes made inside it in one transaction (a call's result with its ledger row): all
        of them or none. A backend whose cache is elsewhere covers its own writes."""
        ...

    def log_call(self, row: dict) -> None: ...

    def put_run_case(self, row: dict) -> None: ...

    def put_check_results(self, run_id: int, case_id: str, rows: list[dict]) -> None: ...

    def update_run(self, run_id: int, **fields: Any) -> None: ...

    def mark_not_run(self, run_id: int, status: str, stage: str, error: str) -> int: ...

    def claim_run(self, run_id: int, owner: str) -> None: ...

    def heartbeat(self, run_id: int) -> None: ...

    def cancel_requested(self, run_id: int) -> bool: ...

    def case_counts(self, run_id: int) -> dict: ...

    def call_stats(self, run_id: int) -> CallSums: ...
