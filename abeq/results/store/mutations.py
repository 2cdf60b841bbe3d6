"""The store's record of mutation tests (`abeq mutate`): each test's settings key, its mutants' runs,
its status and score, and the finished report; and what a mutation report reads besides the runs
(the A/A noise of the cases, the transcripts)."""

from __future__ import annotations

import json

from ...timestamps import now
from ...vocab import AA_NOISY, FINISHED, RUNNING
from .connection import SqlConnection


class SqlMutations:
    """Mutation tests in the `mutations` table (migration m009), and the mutants a model wrote for
    them in `written_mutants` (m012): implements backend.Mutations."""

    def __init__(self, sql: SqlConnection):
        self.sql = sql

    def start(self, key: str, row: dict) -> int:
        """The unfinished test with this key (resumed), or a new one."""
        found = self.sql.one(
            "select id from mutations where key = ? and status != ? order by id desc limit 1", [key, FINISHED]
        )
        if found:
            self.update(found["id"], status=RUNNING)
            return found["id"]
        new_id = self.sql.insert("mutations", {**row, "key": key, "status": RUNNING, "started_at": now()})
        assert new_id is not None  # set by every insert that is not ignored
        return new_id

    def update(self, mutation_id: int, **fields) -> None:
        self.sql.update("mutations", {"id": mutation_id}, fields)

    def finished(self, key: str) -> dict | None:
        """The newest finished test with this key (its report makes a repeat cost nothing)."""
        return self.sql.one(
            "select * from mutations where key = ? and status = ? order by id desc limit 1", [key, FINISHED]
        )

    def get(self, mutation_id: int) -> dict | None:
        return self.sql.one("select * from mutations where id = ?", [mutation_id])

    def latest(
        self,
        transfer_set_hash: str,
        original_hash: str | None = None,
        runner: str | None = None,
        judge: str | None = None,
    ) -> dict | None:
        """The newest finished mutation test of this set (on this original, when given); one that is a
        trust figure first (not made with the scripted double or the embedded model), then one made
        with these runner and judge models, when they are given (the score depends on them)."""
        where, params = "transfer_set_hash = ? and status = ?", [transfer_set_hash, FINISHED]
        if original_hash:
            where, params = where + " and original_hash = ?", [*params, original_hash]
        rows = self.sql.all(f"select * from mutations where {where}", params)

        def rank(r: dict) -> tuple:  # sorted here, not in SQL: both backends read JSON differently
            trusted = bool(json.loads(r["report"] or "{}").get("trust_figure", True))
            same = bool(runner and judge and (r["runner_model"], r["judge_model"]) == (runner, judge))
            return trusted, same, r["id"]

        return max(rows, key=rank, default=None)

    def noisy_cases(self, original_hash: str, transfer_set_hash: str, runner: str, judge: str) -> set[str]:
        """Cases whose A/A check (the teacher against its own replay) this original, set and pair of
        models ever found noisy (vocab.AA_NOISY): a kill on one of them alone is within noise."""
        marks = ", ".join("?" * len(AA_NOISY))
        rows = self.sql.all(
            f"""select distinct c.case_id from run_cases c join runs r on r.id = c.run_id
                where r.original_hash = ? and r.transfer_set_hash = ? and r.runner_model = ?
                and r.judge_model = ? and c.aa_verdict in ({marks})""",
            [original_hash, transfer_set_hash, runner, judge, *AA_NOISY],
        )
        return {r["case_id"] for r in rows}

    def written(self, key: str) -> dict | None:
        """A model's reply of written mutants stored under this key (a repeat makes no call)."""
        return self.sql.one("select * from written_mutants where key = ?", [key])

    def put_written(self, row: dict) -> None:
        self.sql.insert("written_mutants", {**row, "created_at": now()}, replace=True)

    def transcript(self, key: str | None) -> str:
        row = self.sql.one("select transcript from runner_results where key = ?", [key]) if key else None
        return (row or {}).get("transcript") or ""

    def mutation_run_ids(self) -> set[int]:
        """Every run made for a mutant (lists of a person's runs leave them out)."""
        out: set[int] = set()
        for r in self.sql.all("select run_ids from mutations"):
            out.update(json.loads(r["run_ids"] or "[]"))
        return out


def mutation_line(row: dict) -> str:
    """A finished mutation test in a line: what a run's report and check-set say of the set."""
    when = (row["finished_at"] or "")[:16]
    written = sum(
        1 for m in json.loads(row.get("report") or "{}").get("mutants", []) if m.get("kind") == "model"
    )
    what = f"mutants ({written} written by a model)" if written else "section deletions"
    trusted = json.loads(row.get("report") or "{}").get("trust_figure", True)
    return (
        f"{row['score']:.0%} ({row['killed']} of {row['mutants']} {what} noticed; mutation "
        f"test {row['id']} with {row['runner_model']} / {row['judge_model']}, {when})"
        + ("" if trusted else "; not a trust figure: made with a test double or the embedded model")
    )
