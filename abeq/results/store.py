"""The one sqlite file: documents, transfer sets, cached runner/judge results, runs, overrides.

Every SQL statement abeq runs is here or in the store's parts (ledger.py: calls and overrides;
cached.py: cached results; connection.py: opening and migrating); callers get typed rows (rows.py)
and issue no SQL, so another backend can implement the same methods (backend.py). A connection
belongs to one thread (open one per thread); WAL lets readers and a writer work at once.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from sqlite_utils.db import Table

from ..documents import document_hash
from ..errors import InputError
from ..schemas import TransferSet
from ..sets import workspace
from ..sets.confirmation import set_hash
from ..timestamps import now
from .cached import CachedResults
from .calibrations import Calibrations
from .connection import Connection
from .ledger import Ledger
from .liveness import live_status
from .mutations import MutationLog
from .rows import DocumentRow, ReviewRow, RunCaseRow, RunRow

DEFAULT_DB = "abeq.db"
T = TypeVar("T")
P = ParamSpec("P")


def db_path(path: str | None = None) -> str:
    return path or os.environ.get("ABEQ_DB") or DEFAULT_DB


def _from(part: str, fn: Callable[Concatenate[Any, P], T]) -> Callable[Concatenate[Store, P], T]:
    """A Store method that is one of its parts' (`store.judgement` is `store.cache.judgement`)."""

    @functools.wraps(fn)
    def method(self: Store, *a: P.args, **kw: P.kwargs) -> T:
        return fn(getattr(self, part), *a, **kw)

    return method


class Store:
    """One sqlite file, composed of a connection (`sql`), the result cache (`cache`, a
    backend.ResultCache) and the ledger (`ledger`); every write is one short transaction. The
    parts' methods are also the store's, so a caller holds one object; backend.py says what a
    second backend implements."""

    def __init__(self, path: str | None = None, *, memory: bool = False):
        memory = memory or path == ":memory:"  # sqlite's own name for a database in memory: no file
        self.path = ":memory:" if memory else db_path(path)
        self.sql = Connection(self.path, memory=memory)
        self.db = self.sql.db
        self.one, self.all, self._tx, self._insert = self.sql.one, self.sql.all, self.sql.tx, self.sql.insert
        self.batch = self.sql.batch  # writes that belong together, in one transaction (connection.py)
        self.cache = CachedResults(self.sql)
        self.ledger = Ledger(self.sql)
        self.calibration = Calibrations(self.sql)
        self.mutations = MutationLog(self.sql)  # `abeq mutate`'s tests (results/mutations.py)

    def close(self) -> None:
        self.sql.close()

    # -------------------------------------------------------- the cache's and the ledger's
    runner_result = _from("cache", CachedResults.runner_result)
    first_runner_result = _from("cache", CachedResults.first_runner_result)
    put_runner_result = _from("cache", CachedResults.put_runner_result)
    judgement = _from("cache", CachedResults.judgement)
    judgements = _from("cache", CachedResults.judgements)
    gate_section = _from("cache", CachedResults.gate_section)
    put_judgement = _from("cache", CachedResults.put_judgement)
    grading = _from("cache", CachedResults.grading)
    put_grading = _from("cache", CachedResults.put_grading)
    log_call = _from("ledger", Ledger.log_call)
    call_stats = _from("ledger", Ledger.call_stats)
    call_progress = _from("ledger", Ledger.call_progress)
    case_costs = _from("ledger", Ledger.case_costs)
    claim_run = _from("ledger", Ledger.claim_run)
    heartbeat = _from("ledger", Ledger.heartbeat)
    request_cancel = _from("ledger", Ledger.request_cancel)
    cancel_requested = _from("ledger", Ledger.cancel_requested)
    put_check_results = _from("ledger", Ledger.put_check_results)
    check_results = _from("ledger", Ledger.check_results)
    check_witness_counts = _from("ledger", Ledger.check_witness_counts)
    add_override = _from("ledger", Ledger.add_override)
    action_in_effect = _from("ledger", Ledger.action_in_effect)
    reviewed = _from("ledger", Ledger.reviewed)
    overrides = _from("ledger", Ledger.overrides)
    carried_overrides = _from("ledger", Ledger.carried_overrides)
    all_overrides = _from("ledger", Ledger.all_overrides)
    override_history = _from("ledger", Ledger.override_history)
    reviewed_pairs = _from("ledger", Ledger.reviewed_pairs)
    transcripts = _from("ledger", Ledger.transcripts)
    aa_counts = _from("ledger", Ledger.aa_counts)
    put_calibration = _from("calibration", Calibrations.put_calibration)
    calibrations = _from("calibration", Calibrations.calibrations)
    latest_calibration = _from("calibration", Calibrations.latest_calibration)

    # -------------------------------------------------------- documents and sets
    def put_document(self, name: str, content: str, files: dict[str, str] | None = None) -> str:
        """Store a document (a skill with its folder's other files) under its hash; the hash."""
        h = document_hash(content, files)
        row = {"hash": h, "name": name, "content": content, "created_at": now()}
        if files:
            row["files"] = self._put_workspace(files)  # content-addressed, as a case's workspace
        self._tx(lambda: self.db.table("documents").insert(row, ignore=True))
        return h

    def document_files(self, row: DocumentRow | dict) -> dict[str, str]:
        """A stored skill's other files ({} for a single file)."""
        digest = row.get("files")
        return self._workspace_files(digest) if digest else {}

    def document(self, h: str) -> DocumentRow | None:
        return cast("DocumentRow | None", self.one("select * from documents where hash = ?", [h]))

    def put_transfer_set(self, ts: TransferSet, by: str | None = None, review: str | None = None) -> str:
        """Store a set (keyed by its cases); a confirmed one records `by` whom and in which `review`."""
        h = set_hash(ts)
        row = {
            "hash": h,
            "document_hash": ts.document_hash,
            "content": ts.model_dump_json(),
            "confirmed": int(ts.user_confirmed),
            "confirmed_at": ts.confirmation_timestamp,
            "created_at": now(),
        }
        if ts.user_confirmed:
            row.update(confirmed_by=by, confirmed_in=review)
        trees = workspace.trees(ts)
        if trees:  # the folders' files travel with the set: a run from the desk needs no folder
            row["workspaces"] = json.dumps({cid: self._put_workspace(files) for cid, files in trees.items()})
        existing = self.one("select confirmed, document_hash from transfer_sets where hash = ?", [h])
        if existing is None:  # another process may insert it between the check and here
            self._tx(lambda: self.db.table("transfer_sets").insert(row, ignore=True))
        elif ts.user_confirmed and (
            not existing["confirmed"] or existing["document_hash"] != ts.document_hash
        ):
            # confirmed now, or confirmed again for another original: the newest confirmation holds
            self._tx(lambda: self.db.table("transfer_sets").update(h, row))
        return h

    def _put_workspace(self, files: dict[str, str]) -> str:
        d = workspace.digest(files)
        self._tx(
            lambda: self.db.table("workspaces").insert(
                {"digest": d, "files": json.dumps(files, ensure_ascii=False), "created_at": now()},
                ignore=True,
            )
        )
        return d

    def confirmation(self, h: str) -> dict:
        """When, by whom and in which review the stored set `h` was confirmed (values may be None)."""
        sql = (
            "select confirmed_at, confirmed_by, confirmed_in from transfer_sets where hash = ? and confirmed"
        )
        return dict(self.one(sql, [h]) or {})

    def transfer_set(self, h: str) -> TransferSet | None:
        row = self.one("select content, confirmed, workspaces from transfer_sets where hash = ?", [h])
        if not row:
            return None
        ts = TransferSet.model_validate_json(row["content"])
        if row["workspaces"]:
            by_case = {cid: self._workspace_files(d) for cid, d in json.loads(row["workspaces"]).items()}
            ts = workspace.reattach(ts, by_case)
        if row["confirmed"] and ts.user_confirmed and not ts.confirmed_hash:
            # confirmed in this database before sets carried their confirmation hash; the row is keyed by it
            ts = ts.model_copy(update={"confirmed_hash": h})
        return ts

    def _workspace_files(self, digest: str) -> dict[str, str]:
        row = self.one("select files from workspaces where digest = ?", [digest])
        if row is None:  # only when the row was deleted by hand: sets never drop their workspaces
            raise InputError(f"workspace {digest} of a stored transfer set is missing", path=self.path)
        return json.loads(row["files"])

    # -------------------------------------------------------- reviews
    def review(self, name: str) -> ReviewRow | None:
        return cast("ReviewRow | None", self.one("select * from reviews where name = ?", [name]))

    def reviews(self) -> list[ReviewRow]:
        return cast("list[ReviewRow]", self.all("select * from reviews order by id desc"))

    def upsert_review(
        self, name: str, original_hash: str | None, transfer_set_hash: str | None, variant: str
    ) -> int:
        def go() -> int:
            r = self.review(name)
            if r is None:
                return _new_id(
                    self.db.table("reviews").insert(
                        {
                            "name": name,
                            "original_hash": original_hash,
                            "transfer_set_hash": transfer_set_hash,
                            "variant": variant,
                            "created_at": now(),
                        }
                    )
                )
            self.db.table("reviews").update(
                r["id"],
                {"original_hash": original_hash, "transfer_set_hash": transfer_set_hash, "variant": variant},
            )
            return r["id"]

        return self._tx(go)

    def set_review_candidate(self, review_id: int, doc_hash: str) -> None:
        self._tx(lambda: self.db.table("reviews").update(review_id, {"candidate_hash": doc_hash}))

    def review_candidate(self, review_id: int) -> str | None:
        """The candidate last loaded into this review (in any session), else its latest run's; never
        a document loaded into another review."""
        row = self.one("select candidate_hash from reviews where id = ?", [review_id])
        if row and row["candidate_hash"]:
            return row["candidate_hash"]
        run = self.latest_run(review_id)
        return run["candidate_hash"] if run else None

    def review_candidates(self, review_id: int) -> list[dict]:
        """Documents used as candidates in this review's runs, newest first (hash, name, last_run)."""
        return self.all(
            """select d.hash, d.name, max(r.id) last_run from runs r
                           join documents d on d.hash = r.candidate_hash
                           where r.review_id = ? group by d.hash order by last_run desc""",
            [review_id],
        )

    # -------------------------------------------------------- runs
    def create_run(self, row: dict) -> int:
        return self._tx(
            lambda: _new_id(self.db.table("runs").insert({**row, "started_at": now(), "status": "running"}))
        )

    def unfinished_run(self, config_key: str) -> RunRow | None:
        return cast(
            "RunRow | None",
            self.one(
                "select * from runs where config_key = ? and status != 'finished' order by id desc limit 1",
                [config_key],
            ),
        )

    def update_run(self, run_id: int, **fields: Any) -> None:
        self._tx(lambda: self.db.table("runs").update(run_id, fields))

    # A run read back has the status a reader should see: 'interrupted' when the process that
    # left it 'running' is gone (liveness.py); `stored_status` keeps what was written.
    @staticmethod
    def _live(row: dict[str, Any] | None) -> RunRow | None:
        if row is not None:
            row["stored_status"] = row["status"]
            row["status"] = live_status(row)
        return cast("RunRow | None", row)

    def run(self, run_id: int) -> RunRow | None:
        return self._live(self.one("select * from runs where id = ?", [run_id]))

    def runs(self, review_id: int | None = None) -> list[RunRow]:
        rows = (
            self.all("select * from runs order by id desc")
            if review_id is None
            else self.all("select * from runs where review_id = ? order by id", [review_id])
        )
        return [r for r in map(self._live, rows) if r is not None]

    def add_pending_cases(self, run_id: int, case_ids: list[str]) -> None:
        """A pending row for each case the run does not have yet (a resumed run keeps its own)."""
        have = {r["case_id"] for r in self.all("select case_id from run_cases where run_id = ?", [run_id])}
        with self.batch():
            for i, cid in enumerate(case_ids):
                if cid not in have:
                    self.put_run_case({"run_id": run_id, "case_id": cid, "position": i, "status": "pending"})

    def run_case(self, run_id: int, case_id: str) -> RunCaseRow | None:
        return cast(
            "RunCaseRow | None",
            self.one("select * from run_cases where run_id = ? and case_id = ?", [run_id, case_id]),
        )

    def latest_run(self, review_id: int) -> RunRow | None:
        return self._live(
            self.one("select * from runs where review_id = ? order by id desc limit 1", [review_id])
        )

    def case_counts(self, run_id: int) -> dict:
        """total, done (judged or errored), judged and errors among a run's cases."""
        c = (
            self.one(
                """select count(*) total, sum(status in ('judged', 'error')) done,
                               sum(status = 'judged') judged, sum(status = 'error') errors
                        from run_cases where run_id = ?""",
                [run_id],
            )
            or {}
        )
        return {k: c.get(k) or 0 for k in ("total", "done", "judged", "errors")}

    def mark_not_run(self, run_id: int, status: str, stage: str, error: str) -> int:
        """Record every case of a run still pending as not run (with why); returns how many."""
        return self._tx(
            lambda: (
                self.db.conn.execute(
                    "update run_cases set status = ?, error_stage = ?, error = ?, updated_at = ? "
                    "where run_id = ? and status = 'pending'",
                    [status, stage, error, now(), run_id],
                ).rowcount
            )
        )

    def put_run_case(self, row: dict) -> None:
        self._insert("run_cases", {**row, "updated_at": now()}, replace=True)

    def run_cases(self, run_id: int) -> list[RunCaseRow]:
        return cast(
            "list[RunCaseRow]",
            self.all("select * from run_cases where run_id = ? order by position", [run_id]),
        )

    def teacher_runs(self, original_hash: str) -> list[dict]:
        """Judged cases of every run of this original, newest run first: run id, runner model,
        transfer set, case id and the teacher's cached transcript key."""
        return self.all(
            """select r.id run_id, r.runner_model, r.transfer_set_hash, c.case_id, c.teacher_key
               from run_cases c join runs r on r.id = c.run_id
               where r.original_hash = ? and c.status = 'judged' order by r.id desc""",
            [original_hash],
        )


def _new_id(table: Table) -> int:
    """The id of the row an insert just added (sqlite-utils leaves it None only for an ignored one)."""
    assert table.last_pk is not None
    return table.last_pk


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)


# sqlite's words for "this path cannot hold an abeq database" (as opposed to a bug in abeq)
_BAD_DB = {
    "SQLITE_NOTADB",
    "SQLITE_CANTOPEN",
    "SQLITE_READONLY",
    "SQLITE_PERM",
    "SQLITE_CORRUPT",
    "SQLITE_IOERR",
    "SQLITE_AUTH",
}
_BAD_DB_TEXT = ("not a database", "unable to open", "readonly", "malformed", "disk i/o error")
_DB_HINT = "Point --db (or $ABEQ_DB) at an abeq database, or at a new file in a folder you can write."


def open_store(path: str | None = None) -> Store:
    """The Store at `path` (default: $ABEQ_DB or ./abeq.db), or an InputError naming the path when it
    cannot be a database (a folder, unwritable, not sqlite)."""
    path = db_path(path)
    if Path(path).is_dir():
        raise InputError("--db is a folder, not a database file", path=path, hint=_DB_HINT)
    if Path(path).exists() and not os.access(path, os.R_OK | os.W_OK):
        raise InputError("cannot read and write this database file", path=path, hint=_DB_HINT)
    folder = Path(path).parent
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):  # sqlite writes its -wal/-shm files here
        raise InputError(f"the database's folder {folder} is not writable", path=path, hint=_DB_HINT)
    try:
        return Store(path)
    except OSError as e:  # its folder could not be created
        raise InputError(
            f"cannot create the database's folder ({e.strerror or e}: {e.filename})", path=path, hint=_DB_HINT
        ) from None
    except sqlite3.DatabaseError as e:
        problem = database_problem(e, path)
        if problem is not None:
            raise problem from None
        name, text = getattr(e, "sqlite_errorname", None), str(e).lower()
        if name in _BAD_DB or (name is None and any(t in text for t in _BAD_DB_TEXT)):
            raise InputError(
                f"cannot use this file as the database ({e})", path=path, hint=_DB_HINT
            ) from None
        raise


def quick_check(path: str) -> str:
    """What sqlite's `PRAGMA quick_check` says of the file (read only), in a line: "ok" when sound."""
    try:
        conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True, timeout=5)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
        finally:
            conn.close()
    except sqlite3.Error as e:
        return str(e)
    return "; ".join(str(r) for r in rows)[:300]


def database_problem(e: BaseException, path: str | None) -> InputError | None:
    """A user's message for a sqlite error that is the file's or the disk's doing, not abeq's: a
    full disk (what finished is kept), a damaged file (with what quick_check finds)."""
    if not isinstance(e, sqlite3.DatabaseError):
        return None
    name, text = getattr(e, "sqlite_errorname", None) or "", str(e).lower()
    where = path or db_path(None)
    if name == "SQLITE_FULL" or "disk is full" in text or "disk full" in text:
        return InputError(
            "the disk (or the database's size limit) is full, so the database could not be written; "
            "every result written before is kept",
            path=where,
            hint="Free some space, then run the same command again (a run resumes: `abeq history` "
            "lists it, `abeq resume ID` continues it), making only the calls it has not made.",
        )
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or "malformed" in text or "not a database" in text:
        found = quick_check(where) if Path(where).is_file() else "the file is missing"
        return InputError(
            f"the database is damaged ({e}); sqlite's quick_check says: {found}",
            path=where,
            hint="Restore it from a copy, or use a new --db (try `sqlite3 FILE .recover` to save "
            "what is left).",
        )
    return None


def existing_store(path: str | None = None) -> Store:
    """open_store, for commands that read what runs left: refused when there is no database yet."""
    if not Path(db_path(path)).exists():
        raise InputError("no database here", path=db_path(path), hint="Pass --db, or run `abeq run` first.")
    return open_store(path)
