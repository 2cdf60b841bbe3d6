"""The one sqlite file: documents, transfer sets, cached runner/judge results, runs, overrides.

Migrations are append-only functions applied every time the database is opened. A connection
belongs to one thread (open one per thread); WAL lets readers and a writer work at once.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Optional

from sqlite_utils import Database, Migrations

from .schemas import TransferSet

DEFAULT_DB = "abeq.db"
migrations = Migrations("abeq")


@migrations()
def m001_initial(db: Database) -> None:
    db["documents"].create({"hash": str, "name": str, "content": str, "created_at": str}, pk="hash")
    db["transfer_sets"].create({"hash": str, "document_hash": str, "content": str, "confirmed": int,
                                "confirmed_at": str, "created_at": str}, pk="hash")
    db["reviews"].create({"id": int, "name": str, "original_hash": str, "transfer_set_hash": str,
                          "variant": str, "created_at": str}, pk="id",
                         foreign_keys=[("original_hash", "documents", "hash")])
    db["reviews"].create_index(["name"], unique=True)
    # Cached successful runner calls. Errors never land here.
    db["runner_results"].create({"key": str, "doc_hash": str, "case_id": str, "model": str, "variant": str,
                                 "prompt": str, "sample": int, "transcript": str, "self_report": str,
                                 "gate_truncated": int, "gate_section": str, "prompt_tokens": int,
                                 "completion_tokens": int, "cost": float, "latency": float,
                                 "attempts": int, "created_at": str}, pk="key")
    db["judgements"].create({"key": str, "model": str, "prompt": str, "sample": int, "verdict": str,
                             "behaviour_delta": str, "original_directness": int, "candidate_directness": int,
                             "interpretation_notes": str, "raw": str, "prompt_tokens": int,
                             "completion_tokens": int, "cost": float, "latency": float, "attempts": int,
                             "created_at": str}, pk="key")
    db["runs"].create({"id": int, "review_id": int, "round": int, "config_key": str, "original_hash": str,
                       "candidate_hash": str, "transfer_set_hash": str, "runner_model": str,
                       "judge_model": str, "variant": str, "config": str, "status": str, "thin_accepted": int,
                       "started_at": str, "finished_at": str, "summary": str, "stats": str}, pk="id",
                      foreign_keys=[("original_hash", "documents", "hash"), ("candidate_hash", "documents", "hash"),
                                    ("transfer_set_hash", "transfer_sets", "hash")])
    db["runs"].create_index(["config_key"])
    db["run_cases"].create({"run_id": int, "case_id": str, "position": int, "status": str, "teacher_key": str,
                            "candidate_key": str, "judge_keys": str, "verdict": str, "agreement": float,
                            "uncertain": int, "gate_truncated": int, "aa_verdict": str, "error_stage": str,
                            "error": str, "cached": str, "updated_at": str}, pk=("run_id", "case_id"),
                           foreign_keys=[("run_id", "runs", "id")])
    db["overrides"].create({"id": int, "run_id": int, "case_id": str, "verdict": str, "judge_verdict": str,
                            "reason": str, "reviewer": str, "created_at": str}, pk="id",
                           foreign_keys=[("run_id", "runs", "id")])
    db["overrides"].create_index(["run_id", "case_id"])
    db["calls"].create({"id": int, "run_id": int, "case_id": str, "kind": str, "model": str, "key": str,
                        "cached": int, "ok": int, "prompt_tokens": int, "completion_tokens": int, "cost": float,
                        "latency": float, "attempts": int, "error": str, "created_at": str}, pk="id")
    db["calls"].create_index(["run_id"])


@migrations()
def m002_review_candidate(db: Database) -> None:
    # the candidate loaded into a review before it has runs (each review its own: never another's)
    db["reviews"].add_column("candidate_hash", str)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def db_path(path: Optional[str] = None) -> str:
    return path or os.environ.get("ABEQ_DB") or DEFAULT_DB


_local = threading.local()


class Store:
    """A thin layer over one sqlite file; every write is one short transaction."""

    def __init__(self, path: Optional[str] = None, *, memory: bool = False):
        self.path = ":memory:" if memory else db_path(path)
        if memory:
            conn = sqlite3.connect(":memory:", check_same_thread=False)
        else:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=30000")
        self.db = Database(conn)
        if not memory:
            self.db.enable_wal()
            conn.execute("PRAGMA synchronous=NORMAL")
        self._write = threading.Lock()
        with self._write:
            self._migrate()

    def _migrate(self) -> None:
        """Apply pending migrations holding the write lock from the start.

        Two processes opening a new file at once would otherwise both see the steps as pending;
        the second then fails with "database is locked" (its read snapshot is stale when it comes
        to write, which sqlite reports at once instead of waiting). BEGIN IMMEDIATE waits its turn
        (busy_timeout), then sees what the other process applied.
        """
        if not migrations.pending(self.db):
            return
        conn = self.db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            migrations.apply(self.db)  # its per-step transactions become savepoints inside this one
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.db.conn.close()

    # -------------------------------------------------------- helpers
    def _tx(self, fn, *a, **kw):
        with self._write:
            with self.db.conn:
                return fn(*a, **kw)

    def _insert(self, table: str, row: dict, *, replace: bool = False) -> None:
        """One row in its own transaction, as a single statement.

        For the writes made once per model call: sqlite-utils' `insert` also reads sqlite_master
        three times per row, which was a third of abeq's CPU per call in bench/bench_overhead.py.
        Values are converted exactly as sqlite-utils converts them.
        """
        from sqlite_utils.db import jsonify_if_needed

        cols = ", ".join(f'"{c}"' for c in row)
        sql = (f'INSERT {"OR REPLACE " if replace else ""}INTO "{table}" ({cols}) '
               f'VALUES ({", ".join("?" * len(row))})')
        self._tx(self.db.conn.execute, sql, [jsonify_if_needed(v) for v in row.values()])

    def one(self, sql: str, params: Iterable = ()) -> Optional[dict]:
        rows = list(self.db.query(sql, list(params)))
        return rows[0] if rows else None

    def all(self, sql: str, params: Iterable = ()) -> list[dict]:
        return list(self.db.query(sql, list(params)))

    # -------------------------------------------------------- documents and sets
    def put_document(self, name: str, content: str) -> str:
        from .documents import sha256

        h = sha256(content)
        self._tx(lambda: self.db["documents"].insert({"hash": h, "name": name, "content": content,
                                                       "created_at": now()}, ignore=True))
        return h

    def document(self, h: str) -> Optional[dict]:
        return self.one("select * from documents where hash = ?", [h])

    def put_transfer_set(self, ts: TransferSet) -> str:
        from .transferset import set_hash

        h = set_hash(ts)
        row = {"hash": h, "document_hash": ts.document_hash, "content": ts.model_dump_json(),
               "confirmed": int(ts.user_confirmed), "confirmed_at": ts.confirmation_timestamp, "created_at": now()}
        existing = self.one("select confirmed, document_hash from transfer_sets where hash = ?", [h])
        if existing is None:  # another process may insert it between the check and here
            self._tx(lambda: self.db["transfer_sets"].insert(row, ignore=True))
        elif ts.user_confirmed and (not existing["confirmed"] or existing["document_hash"] != ts.document_hash):
            # confirmed now, or confirmed again for another original: the newest confirmation holds
            self._tx(lambda: self.db["transfer_sets"].update(h, row))
        return h

    def transfer_set(self, h: str) -> Optional[TransferSet]:
        row = self.one("select content, confirmed from transfer_sets where hash = ?", [h])
        if not row:
            return None
        ts = TransferSet.model_validate_json(row["content"])
        if row["confirmed"] and ts.user_confirmed and not ts.confirmed_hash:
            # confirmed in this database before sets carried their confirmation hash; the row is keyed by it
            ts = ts.model_copy(update={"confirmed_hash": h})
        return ts

    # -------------------------------------------------------- reviews
    def review(self, name: str) -> Optional[dict]:
        return self.one("select * from reviews where name = ?", [name])

    def reviews(self) -> list[dict]:
        return self.all("select * from reviews order by id desc")

    def upsert_review(self, name: str, original_hash: str, transfer_set_hash: Optional[str], variant: str) -> int:
        def go():
            r = self.review(name)
            if r is None:
                return self.db["reviews"].insert({"name": name, "original_hash": original_hash,
                                                  "transfer_set_hash": transfer_set_hash, "variant": variant,
                                                  "created_at": now()}).last_pk
            self.db["reviews"].update(r["id"], {"original_hash": original_hash,
                                                "transfer_set_hash": transfer_set_hash, "variant": variant})
            return r["id"]

        return self._tx(go)

    def set_review_candidate(self, review_id: int, doc_hash: str) -> None:
        self._tx(lambda: self.db["reviews"].update(review_id, {"candidate_hash": doc_hash}))

    # -------------------------------------------------------- cache
    def runner_result(self, key: str) -> Optional[dict]:
        return self.one("select * from runner_results where key = ?", [key])

    def put_runner_result(self, row: dict) -> None:
        self._insert("runner_results", {**row, "created_at": now()}, replace=True)

    def judgement(self, key: str) -> Optional[dict]:
        return self.one("select * from judgements where key = ?", [key])

    def put_judgement(self, row: dict) -> None:
        self._insert("judgements", {**row, "created_at": now()}, replace=True)

    # -------------------------------------------------------- runs
    def create_run(self, row: dict) -> int:
        return self._tx(lambda: self.db["runs"].insert({**row, "started_at": now(), "status": "running"}).last_pk)

    def unfinished_run(self, config_key: str) -> Optional[dict]:
        return self.one("select * from runs where config_key = ? and status != 'finished' order by id desc limit 1",
                        [config_key])

    def update_run(self, run_id: int, **fields: Any) -> None:
        self._tx(lambda: self.db["runs"].update(run_id, fields))

    def run(self, run_id: int) -> Optional[dict]:
        return self.one("select * from runs where id = ?", [run_id])

    def runs(self, review_id: Optional[int] = None) -> list[dict]:
        if review_id is None:
            return self.all("select * from runs order by id desc")
        return self.all("select * from runs where review_id = ? order by id", [review_id])

    def put_run_case(self, row: dict) -> None:
        self._insert("run_cases", {**row, "updated_at": now()}, replace=True)

    def run_cases(self, run_id: int) -> list[dict]:
        return self.all("select * from run_cases where run_id = ? order by position", [run_id])

    def log_call(self, row: dict) -> None:
        self._insert("calls", {**row, "created_at": now()})

    # What the calls of a run add up to; the same sums for the whole run and for each case.
    _CALL_SUMS = """count(*) n, sum(cached) cached, sum(1 - ok) errors,
                    sum(case when cached = 0 then 1 else 0 end) made,
                    sum(case when cached = 0 and kind like 'runner%' then 1 else 0 end) runner_made,
                    sum(case when cached = 0 and kind = 'runner-teacher' then 1 else 0 end) teacher_made,
                    sum(case when cached = 0 and kind like 'judge%' then 1 else 0 end) judge_made,
                    sum(case when cached = 0 then prompt_tokens else 0 end) prompt_tokens,
                    sum(case when cached = 0 then completion_tokens else 0 end) completion_tokens,
                    sum(case when cached = 0 then cost else 0 end) cost,
                    sum(case when cached = 0 and cost is null
                             and (ok = 1 or prompt_tokens + completion_tokens > 0) then 1 else 0 end) unpriced"""

    def call_stats(self, run_id: int) -> dict:
        r = self.one(f"select {self._CALL_SUMS} from calls where run_id = ?", [run_id]) or {}
        return {k: (v or 0) for k, v in r.items()}

    def case_costs(self, run_id: int) -> dict[str, dict]:
        """call_stats per case of a run: calls made and served from the cache, tokens and cost of
        the calls this run made (a cached call costs nothing now), made calls with no price."""
        rows = self.all(f"select case_id, {self._CALL_SUMS} from calls where run_id = ? group by case_id", [run_id])
        return {r.pop("case_id"): {k: (v or 0) for k, v in r.items()} for r in rows}

    # -------------------------------------------------------- overrides
    def add_override(self, run_id: int, case_id: str, verdict: str, reason: str, reviewer: str,
                     judge_verdict: Optional[str]) -> int:
        if not reason.strip():
            from .errors import InputError

            raise InputError("an override needs a reason")
        return self._tx(lambda: self.db["overrides"].insert({
            "run_id": run_id, "case_id": case_id, "verdict": verdict, "judge_verdict": judge_verdict,
            "reason": reason.strip(), "reviewer": reviewer, "created_at": now()}).last_pk)

    def overrides(self, run_id: int) -> dict[str, dict]:
        """The effective (latest) override per case; older ones stay in the table as the audit trail."""
        out: dict[str, dict] = {}
        for r in self.all("select * from overrides where run_id = ? order by id", [run_id]):
            out[r["case_id"]] = r
        return out

    def carried_overrides(self, run_id: int) -> dict[str, dict]:
        """Overrides made in other runs on exactly this judgement (same teacher and candidate
        transcripts, same judge replies), so an identical re-run keeps the reviewer's verdict.
        Each row says where it was made (`carried_from`); the latest one per case wins."""
        out: dict[str, dict] = {}
        for r in self.all("""select o.*, o.run_id as carried_from from overrides o
                             join run_cases src on src.run_id = o.run_id and src.case_id = o.case_id
                             join run_cases cur on cur.run_id = ? and cur.case_id = src.case_id
                             where o.run_id != ? and cur.status = 'judged' and src.status = 'judged'
                               and cur.teacher_key = src.teacher_key and cur.candidate_key = src.candidate_key
                               and cur.judge_keys = src.judge_keys
                             order by o.id""", [run_id, run_id]):
            out[r["case_id"]] = r
        return out

    def all_overrides(self) -> list[dict]:
        return self.all("select * from overrides order by id")


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)
