"""The assignments part of the store: which reviewer each case of a run is assigned to (work shared
out among a team); implements backend.Assignments. What to assign to whom is decided in
results/review/assigning.py."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from ...timestamps import now
from .connection import SqlConnection
from .rows import AssignmentRow


class SqlAssignments:
    """Case assignments over the store's one connection (on either backend)."""

    def __init__(self, sql: SqlConnection):
        self.sql = sql

    def assign(self, run_id: int, cases: Mapping[str, str], by: str) -> int:
        """Assign each case (id -> reviewer) of the run, replacing an earlier assignment; how many."""
        at = now()
        with self.sql.batch():
            for case_id, reviewer in cases.items():
                row = {"run_id": run_id, "case_id": case_id, "reviewer": reviewer, "assigned_by": by}
                self.sql.insert("assignments", {**row, "assigned_at": at}, replace=True)
        return len(cases)

    def clear(self, run_id: int, case_ids: Iterable[str] | None = None) -> int:
        """Take back the assignments of these cases (all of the run's when None); how many."""
        if case_ids is None:
            return self.sql.execute("delete from assignments where run_id = ?", [run_id])
        n = 0
        with self.sql.batch():
            for case_id in case_ids:
                n += self.sql.execute(
                    "delete from assignments where run_id = ? and case_id = ?", [run_id, case_id]
                )
        return n

    def of_run(self, run_id: int) -> dict[str, AssignmentRow]:
        """The run's assignments by case id."""
        rows = self.sql.all("select * from assignments where run_id = ? order by case_id", [run_id])
        return {r["case_id"]: cast(AssignmentRow, r) for r in rows}
