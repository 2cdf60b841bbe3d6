"""The run-log part of the store: the runs, their cases, the calls each run made (tokens,
cost, cache hits), what the checks found on both arms of each case, and who runs a run now (owner,
heartbeat, cancel flag); implements backend.RunLog. A run read back has the status a reader should
see: 'interrupted' when the process that left it running is gone (liveness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, cast

from ...timestamps import now
from ...vocab import CASE_ERROR, FINISHED, JUDGED, PENDING, RUNNING, CaseRunStatus
from .connection import SqlConnection
from .liveness import ACTIVE, live_status
from .rows import (
    CallProgress,
    CallRow,
    CallSums,
    CaseCounts,
    CheckResultRow,
    RunCaseRow,
    RunRow,
    RunUpdate,
    TeacherCase,
    Transcripts,
)

if TYPE_CHECKING:  # Python 3.10's typing lacks it; annotations are never evaluated at run time
    from typing_extensions import Unpack


class SqlRunLog:
    """Runs, their cases, calls and checks over the store's one connection (writes hold its lock)."""

    def __init__(self, sql: SqlConnection):
        self.sql = sql
        self.remote = sql.remote  # backend.RunLog.remote

    @contextmanager
    def batch(self) -> Iterator[None]:
        """The writes made inside it in one transaction (the cache's too: one connection)."""
        with self.sql.batch():
            yield

    # -------------------------------------------------------- runs
    def create_run(self, row: RunRow) -> int:
        """A new run, running from now; its id."""

        new_id = self.sql.insert("runs", {**row, "started_at": now(), "status": RUNNING})
        assert new_id is not None  # set by every insert that is not ignored
        return new_id

    def exclusive(self) -> AbstractContextManager[None]:
        return self.sql.exclusive()

    def unfinished_run(self, config_key: str) -> RunRow | None:
        return cast(
            "RunRow | None",
            self.sql.one(
                "select * from runs where config_key = ? and status != ? order by id desc limit 1",
                [config_key, FINISHED],
            ),
        )

    def update_run(self, run_id: int, **fields: Unpack[RunUpdate]) -> None:
        self.sql.update("runs", {"id": run_id}, dict(fields))

    @staticmethod
    def _live(row: dict[str, Any] | None) -> RunRow | None:
        if row is not None:
            row["stored_status"] = row["status"]
            row["status"] = live_status(row)
        return cast("RunRow | None", row)

    def run(self, run_id: int) -> RunRow | None:
        return self._live(self.sql.one("select * from runs where id = ?", [run_id]))

    def runs(self, review_id: int | None = None) -> list[RunRow]:
        """Every run, newest first; or a review's, oldest first."""
        rows = (
            self.sql.all("select * from runs order by id desc")
            if review_id is None
            else self.sql.all("select * from runs where review_id = ? order by id", [review_id])
        )
        return [r for r in map(self._live, rows) if r is not None]

    def latest_run(self, review_id: int) -> RunRow | None:
        return self._live(
            self.sql.one("select * from runs where review_id = ? order by id desc limit 1", [review_id])
        )

    # -------------------------------------------------------- a run's cases
    def add_pending_cases(self, run_id: int, case_ids: list[str]) -> None:
        """A pending row for each case the run does not have yet (a resumed run keeps its own)."""
        have = {
            r["case_id"] for r in self.sql.all("select case_id from run_cases where run_id = ?", [run_id])
        }
        with self.sql.batch():
            for i, cid in enumerate(case_ids):
                if cid not in have:  # ignore: another process (a shard) may have stored it since
                    row = {
                        "run_id": run_id,
                        "case_id": cid,
                        "position": i,
                        "status": PENDING,
                        "updated_at": now(),
                    }
                    self.sql.insert("run_cases", row, ignore=True)

    def put_run_case(self, row: RunCaseRow) -> None:
        self.sql.insert("run_cases", {**row, "updated_at": now()}, replace=True)

    def run_case(self, run_id: int, case_id: str) -> RunCaseRow | None:
        return cast(
            "RunCaseRow | None",
            self.sql.one("select * from run_cases where run_id = ? and case_id = ?", [run_id, case_id]),
        )

    def run_cases(self, run_id: int) -> list[RunCaseRow]:
        return cast(
            "list[RunCaseRow]",
            self.sql.all("select * from run_cases where run_id = ? order by position", [run_id]),
        )

    def case_counts(self, run_id: int) -> CaseCounts:
        """total, done (judged or errored), judged and errors among a run's cases."""
        c = (
            self.sql.one(
                """select count(*) total, sum(case when status in (?1, ?2) then 1 else 0 end) done,
                          sum(case when status = ?1 then 1 else 0 end) judged,
                          sum(case when status = ?2 then 1 else 0 end) errors
                   from run_cases where run_id = ?3""",
                [JUDGED, CASE_ERROR, run_id],
            )
            or {}
        )
        return cast(CaseCounts, {k: c.get(k) or 0 for k in CaseCounts.__annotations__})

    def mark_not_run(self, run_id: int, status: CaseRunStatus, stage: str, error: str) -> int:
        """Record every case of a run still pending as not run (with why); returns how many."""
        return self.sql.execute(
            "update run_cases set status = ?, error_stage = ?, error = ?, updated_at = ? "
            "where run_id = ? and status = ?",
            [status, stage, error, now(), run_id, PENDING],
        )

    def teacher_runs(self, original_hash: str) -> list[TeacherCase]:
        """Judged cases of every run of this original, newest run first: run id, runner model,
        transfer set, case id and the teacher's cached transcript key."""
        return cast(
            list[TeacherCase],
            self.sql.all(
                """select r.id run_id, r.runner_model, r.transfer_set_hash, c.case_id, c.teacher_key
                   from run_cases c join runs r on r.id = c.run_id
                   where r.original_hash = ? and c.status = ? order by r.id desc""",
                [original_hash, JUDGED],
            ),
        )

    def transcripts(self, run_id: int) -> list[Transcripts]:
        """case_id with its teacher and candidate transcripts, for every judged or errored case that
        has them (text search on the Review page)."""
        return cast(
            list[Transcripts],
            self.sql.all(
                """select c.case_id, t.transcript teacher, k.transcript candidate from run_cases c
                   left join runner_results t on t.key = c.teacher_key
                   left join runner_results k on k.key = c.candidate_key
                   where c.run_id = ?""",
                [run_id],
            ),
        )

    def report_stamp(self, run_id: int) -> tuple:
        """What changes when the run's report would, as (its cases, any reviewer action, its calls,
        its checks): a case's status change moves a count, a re-judged case is a new row; a reviewer
        action, carried ones too; calls move costs. One indexed read instead of the report's seven
        (the desk's cache of reports)."""
        version = self.sql.row_version  # a re-judged case's row is written again
        # sums of CASE, not of comparisons: PostgreSQL's sum(boolean) is postgres.py's SQL-function
        # aggregate, ~1 µs a row (24 ms of a 10,000-case run's stamp; 2 ms this way)
        row = self.sql.one(
            f"""select
  (select count(*) || '|' || coalesce(max({version}), 0) || '|' || coalesce(max(updated_at), '') || '|'
          || sum(case when status = ?2 then 1 else 0 end) || '|'
          || sum(case when status = ?3 then 1 else 0 end) || '|'
          || sum(case when status = ?4 then 1 else 0 end)
     from run_cases where run_id = ?1) cases,
  (select coalesce(max(id), 0) from overrides) actions,
  (select count(*) || '|' || coalesce(max(id), 0) from calls where run_id = ?1) calls,
  (select count(*) from check_results where run_id = ?1) checks""",
            [run_id, JUDGED, CASE_ERROR, PENDING],
        )
        # named: PostgreSQL names each unnamed column ?column?, and a row's dict kept one of two
        return (row["cases"], row["actions"], row["calls"], row["checks"]) if row else (None, 0, "", 0)

    # -------------------------------------------------------- calls
    def log_call(self, row: CallRow) -> None:
        self.sql.insert("calls", {**row, "created_at": now()})

    # What the calls of a run add up to; the same sums for the whole run and for each case.
    _CALL_SUMS = """count(*) n, sum(cached) cached, sum(1 - ok) errors,
                    sum(case when cached = 0 then 1 else 0 end) made,
                    sum(case when cached = 0 and kind like 'runner%' then 1 else 0 end) runner_made,
                    sum(case when cached = 0 and kind = 'runner-teacher' then 1 else 0 end) teacher_made,
                    sum(case when cached = 0 and kind like 'judge%' then 1 else 0 end) judge_made,
                    sum(case when cached = 0 then prompt_tokens else 0 end) prompt_tokens,
                    sum(case when cached = 0 then completion_tokens else 0 end) completion_tokens,
                    sum(case when cached = 0 then cost else 0 end) cost,
                    sum(case when cached = 0 then cache_read_tokens else 0 end) cache_read_tokens,
                    sum(case when cached = 0 then cache_write_tokens else 0 end) cache_write_tokens,
                    sum(case when cached = 0 then cache_saved else 0 end) cache_saved,
                    sum(case when cached = 0 and cost is null
                             and (ok = 1 or prompt_tokens + completion_tokens > 0)
                        then 1 else 0 end) unpriced"""

    def call_stats(self, run_id: int) -> CallSums:
        r = self.sql.one(f"select {self._CALL_SUMS} from calls where run_id = ?", [run_id]) or {}
        return cast(CallSums, {k: (v or 0) for k, v in r.items()})

    def call_progress(self, run_id: int, after_call: int = 0) -> CallProgress:
        """The calls of a run logged after calls.id `after_call` (the current attempt's): runner and
        judge calls resolved (made, from the cache or failed), cached, made, failed."""
        r = (
            self.sql.one(
                """select sum(case when kind like 'runner%' then 1 else 0 end) runner,
                          sum(case when kind like 'judge%' then 1 else 0 end) judge,
                          sum(cached) cached, sum(1 - cached) made, sum(1 - ok) failed
                   from calls where run_id = ? and id > ?""",
                [run_id, after_call or 0],
            )
            or {}
        )
        return cast(CallProgress, {k: r.get(k) or 0 for k in CallProgress.__annotations__})

    def case_costs(self, run_id: int, case_id: str | None = None) -> dict[str, CallSums]:
        """call_stats per case of a run (or of its one case `case_id`): calls made and served from
        the cache, tokens and cost of the calls this run made (a cached call costs nothing now), made
        calls with no price."""
        rows = self.sql.all(
            f"select case_id, {self._CALL_SUMS} from calls where run_id = ? "
            + ("and case_id = ? " if case_id is not None else "")
            + "group by case_id",
            [run_id] if case_id is None else [run_id, case_id],
        )
        return {r.pop("case_id"): cast(CallSums, {k: (v or 0) for k, v in r.items()}) for r in rows}

    def made_calls_by_kind(self, run_id: int) -> dict[str, int]:
        """How many calls of each kind (runner-teacher, judge, …) the run made (not from the cache)."""
        rows = self.sql.all(
            "select kind, count(*) n from calls where run_id = ? and cached = 0 group by kind", [run_id]
        )
        return {r["kind"]: r["n"] for r in rows}

    def cases_with_calls(self, run_id: int, after_call: int = 0) -> set[str]:
        """The cases with a call logged after calls.id `after_call` (the current attempt's)."""
        rows = self.sql.all(
            "select distinct case_id from calls where run_id = ? and id > ?", [run_id, after_call or 0]
        )
        return {r["case_id"] for r in rows}

    # -------------------------------------------------------- who runs a run (liveness.py)
    def claim_run(self, run_id: int, owner: str) -> None:
        """This process runs the run now: a new attempt, a fresh heartbeat, no cancel pending."""
        t = now()
        self.sql.execute(
            """update runs set status = ?, owner = ?, heartbeat_at = ?, attempt_started_at = ?,
                      cancel_requested_at = null, finished_at = null,
                      attempt_first_call = (select coalesce(max(id), 0) from calls)
               where id = ?""",
            [RUNNING, owner, t, t, run_id],
        )

    def heartbeat(self, run_id: int) -> None:
        self.sql.execute("update runs set heartbeat_at = ? where id = ?", [now(), run_id])

    def request_cancel(self, run_id: int) -> None:
        """Ask whichever process runs this run to cancel it (its engine looks every second)."""
        self.sql.execute(
            "update runs set cancel_requested_at = ? where id = ? and status in (?, ?)",
            [now(), run_id, *ACTIVE],
        )

    def cancel_requested(self, run_id: int) -> bool:
        r = self.sql.one("select cancel_requested_at from runs where id = ?", [run_id])
        return bool(r and r["cancel_requested_at"])

    # -------------------------------------------------------- checks
    def put_check_results(self, run_id: int, case_id: str, rows: list[CheckResultRow]) -> None:
        """The case's checks in this run, replacing what an interrupted attempt left."""

        with self.sql.batch():
            self.sql.execute("delete from check_results where run_id = ? and case_id = ?", [run_id, case_id])
            for i, r in enumerate(rows):
                self.sql.insert("check_results", {"run_id": run_id, "case_id": case_id, "idx": i, **r})

    def check_results(self, run_id: int, case_id: str | None = None) -> dict[str, list[CheckResultRow]]:
        """A run's check results (or its one case's) by case, in the case's order of checks."""
        out: dict[str, list] = {}
        one = "and case_id = ? " if case_id is not None else ""
        params = [run_id] if case_id is None else [run_id, case_id]
        for r in self.sql.all(
            f"select * from check_results where run_id = ? {one}order by case_id, idx", params
        ):
            out.setdefault(r["case_id"], []).append(r)
        return out
