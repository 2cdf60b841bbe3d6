"""The cache part of the store: runner results, judgements and gradings, each under the key of
everything that produced it (run/keys.py). Errors never land here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from ...timestamps import now
from .connection import SqlConnection
from .liveness import holds_claim, owner_alive
from .rows import GradingRow, JudgedVerdict, JudgementRow, RunnerResultRow


class SqlResultCache:
    """Cached model results over the store's one connection: implements backend.ResultCache."""

    def __init__(self, sql: SqlConnection):
        self.sql = sql
        self.one, self.all, self._insert = sql.one, sql.all, sql.insert  # the connection's, bound once

    def runner_result(self, key: str) -> RunnerResultRow | None:
        return cast("RunnerResultRow | None", self.one("select * from runner_results where key = ?", [key]))

    def first_runner_result(self, keys: Iterable[str]) -> RunnerResultRow | None:
        """The result stored under the first of these keys that has one (its `key` says which): one
        query for all of them (the current key and the v1 key are asked on every runner call)."""
        keys = list(keys)
        if not keys:
            return None
        rows = self.all(f"select * from runner_results where key in ({','.join('?' * len(keys))})", keys)
        found = {r["key"]: r for r in rows}
        return next((cast(RunnerResultRow, found[k]) for k in keys if k in found), None)

    def put_runner_result(self, row: RunnerResultRow) -> None:
        self._insert("runner_results", {**row, "created_at": now()}, replace=True)

    def judgement(self, key: str) -> JudgementRow | None:
        return cast("JudgementRow | None", self.one("select * from judgements where key = ?", [key]))

    def judgements(self, keys: list[str]) -> dict[str, JudgedVerdict]:
        """The verdicts of the judgements with these keys, by key (asked in chunks: sqlite caps a
        query's parameters). Not their raw replies: a 10,000-case report would read megabytes of them."""
        out: dict[str, JudgedVerdict] = {}
        cols = ", ".join(JudgedVerdict.__annotations__)
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for j in self.all(f"select {cols} from judgements where key in ({marks})", chunk):
                out[j["key"]] = cast(JudgedVerdict, j)
        return out

    def gate_section(self, runner_key: str) -> str:
        """The section a cached run stopped in at an unanswered gate ("" when unknown)."""
        t = self.one("select gate_section from runner_results where key = ?", [runner_key])
        return (t or {}).get("gate_section") or ""

    def put_judgement(self, row: JudgementRow) -> None:
        self._insert("judgements", {**row, "created_at": now()}, replace=True)

    def grading(self, key: str) -> GradingRow | None:
        return cast("GradingRow | None", self.one("select * from gradings where key = ?", [key]))

    def put_grading(self, row: GradingRow) -> None:
        self._insert("gradings", {**row, "created_at": now()}, replace=True)

    # -------------------------------------------------------- claims on calls being made
    def claim(self, key: str, run_id: int, owner: str) -> bool:
        """Each step one statement, atomic on its own (no lock shared by every claim of every run:
        a claim is made twice per runner call, and on a server each transaction is round trips)."""
        row = {"key": key, "run_id": run_id, "owner": owner, "claimed_at": now()}
        if self._insert("claims", row, ignore=True) is not None:
            return True  # nobody held it
        held = self.one(
            """select c.run_id, c.owner claim_owner, r.owner, r.status, r.heartbeat_at from claims c
               left join runs r on r.id = c.run_id where c.key = ?""",
            [key],
        )
        if held is None:  # released since: whoever inserts first holds it
            return self._insert("claims", row, ignore=True) is not None
        if held["run_id"] != run_id and holds_claim(held):
            return False
        # this run's own, or its holder died: taken over only if it is still the claim just read
        # (another run taking it over at the same moment changes run_id or owner first)
        return bool(
            self.sql.execute(
                "update claims set run_id = ?, owner = ?, claimed_at = ? where key = ? and run_id = ? "
                "and owner = ?",
                [run_id, owner, row["claimed_at"], key, held["run_id"], held["claim_owner"]],
            )
        )

    def release(self, key: str, run_id: int) -> None:
        self.sql.execute("delete from claims where key = ? and run_id = ?", [key, run_id])

    def end_claims(self, run_id: int, owner: str) -> None:
        """A run's claims at its end: its own, and those of its processes that died (a process killed
        between claiming a key and releasing it leaves a claim that nobody takes over once another run
        has stored that key's result). A claim of another host's process is left to its heartbeat."""
        for row in self.sql.all("select key, owner from claims where run_id = ?", [run_id]):
            if row["owner"] == owner or owner_alive(row["owner"]) is False:
                self.sql.execute(
                    "delete from claims where key = ? and run_id = ? and owner = ?",
                    [row["key"], run_id, row["owner"]],
                )
