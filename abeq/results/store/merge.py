"""`abeq db merge DST SRC…`: the sqlite files that shards of a run wrote (each CI job of a matrix ran
`abeq run --shard k/n` into its own file and uploaded it) combined into one store, when the shards
had no shared store to write into.

What is content-addressed (documents, sets, workspaces, cached model results) is added once. A run is
the run with the same config key in the destination (the shards of one run share it), or a new one;
each case takes the source's row when the destination has it pending or not run, with the case's
checks; the source run's calls and reviewer actions come along, renumbered, and its case assignments
(where the destination has none for the case). A run whose cases are all
done is finished by the `finish` the caller passes (results.reports.record.end_run: its summary and
call sums rebuilt from the merged rows), in the same transaction: the store does not build reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...vocab import NOT_RUN_STATUS, PENDING
from .store import Store

SHARED = (
    "documents",
    "workspaces",
    "transfer_sets",
    "runner_results",
    "judgements",
    "gradings",
    "written_mutants",
)
_OPEN_CASE = (PENDING, NOT_RUN_STATUS)


@dataclass
class Merged:
    runs: dict[int, int] = field(default_factory=dict)  # a source run's id -> its id in the destination
    cases: int = 0
    finished: list[int] = field(default_factory=list)


def _insert_new(dst: Store, table: str, row: dict) -> int | None:
    return dst.sql.insert(table, {k: v for k, v in row.items() if k != "id"})


def merge_into(
    dst: Store, src: Store, out: Merged | None = None, *, finish: Callable[[Store, int], None]
) -> Merged:
    """Everything of `src` into `dst`, in one transaction; `finish(dst, run_id)` ends each run whose
    every case is now done (results.reports.record.end_run)."""
    out = out or Merged()
    runs_here: dict[int, int] = {}
    with dst.sql.batch():
        for table in SHARED:
            for row in src.sql.all(f'select * from "{table}"'):
                dst.sql.insert(table, row, ignore=True)
        reviews: dict[int, int] = {}
        for r in src.inputs.reviews():
            reviews[r["id"]] = dst.inputs.upsert_review(
                r["name"], r["original_hash"], r["transfer_set_hash"], r["variant"]
            )
        for run in sorted(src.sql.all("select * from runs"), key=lambda r: r["id"]):
            same = dst.sql.one(
                "select id from runs where config_key = ? order by id desc limit 1", [run["config_key"]]
            )
            if same:
                to = same["id"]
            else:
                row = {**run, "review_id": reviews.get(run["review_id"]) if run["review_id"] else None}
                new_id = _insert_new(dst, "runs", row)
                assert new_id is not None
                to = new_id
            runs_here[run["id"]] = out.runs[run["id"]] = to
            for case in src.sql.all("select * from run_cases where run_id = ?", [run["id"]]):
                have = dst.sql.one(
                    "select status from run_cases where run_id = ? and case_id = ?", [to, case["case_id"]]
                )
                if have is not None and (case["status"] in _OPEN_CASE or have["status"] not in _OPEN_CASE):
                    continue  # nothing to bring, or the destination has the case done already
                dst.sql.insert("run_cases", {**case, "run_id": to}, replace=True)
                where = [to, case["case_id"]]
                dst.sql.execute("delete from check_results where run_id = ? and case_id = ?", where)
                for check in src.sql.all(
                    "select * from check_results where run_id = ? and case_id = ?",
                    [run["id"], case["case_id"]],
                ):
                    dst.sql.insert("check_results", {**check, "run_id": to})
                out.cases += case["status"] not in _OPEN_CASE
            for call in src.sql.all("select * from calls where run_id = ? order by id", [run["id"]]):
                _insert_new(dst, "calls", {**call, "run_id": to})
            for action in src.sql.all("select * from overrides where run_id = ? order by id", [run["id"]]):
                _insert_new(dst, "overrides", {**action, "run_id": to, "seen_id": None})
            for assigned in src.sql.all("select * from assignments where run_id = ?", [run["id"]]):
                # an assignment the destination has for the case stands
                dst.sql.insert("assignments", {**assigned, "run_id": to}, ignore=True)
        for to in sorted(set(runs_here.values())):
            _finish_if_whole(dst, to, out, finish)
    return out


def _finish_if_whole(dst: Store, run_id: int, out: Merged, finish: Callable[[Store, int], None]) -> None:
    c = dst.log.case_counts(run_id)
    if c["total"] and c["done"] == c["total"]:
        finish(dst, run_id)
        if run_id not in out.finished:
            out.finished.append(run_id)
