"""The store: documents, transfer sets, reviews, runs, cached model results, reviewer actions,
calibrations, mutation tests and case assignments, in a sqlite file or a team's PostgreSQL database.

A Store is its parts (backend.py names each part's interface): `inputs` (inputs.py), `log`
(runlog.py), `cache` (cached.py), `ledger` (ledger.py), `calibrations`, `mutations` and
`assignments`, the same `Sql*` classes whichever the database, all over one connection that knows
its database (connection.py's for a file: opened, migrated, one short transaction per write or one
`batch`; postgres.py's for a postgresql:// URL). Callers reach a part by its name and issue no SQL;
every statement abeq runs is in these modules. A sqlite connection belongs to one thread (open one
per thread); WAL lets readers and a writer work at once.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

# by full name: `from . import` would read this package's __init__, which re-exports Store from here
import abeq.results.store.backend as backend
import abeq.results.store.postgres as postgres

from ...errors import InputError
from .assignments import SqlAssignments
from .cached import SqlResultCache
from .calibrations import SqlCalibrations
from .connection import Connection, SqlConnection
from .inputs import SqlInputs
from .ledger import SqlLedger
from .mutations import SqlMutations
from .runlog import SqlRunLog

DEFAULT_DB = "abeq.db"


def db_path(path: str | None = None) -> str:
    return path or os.environ.get("ABEQ_DB") or DEFAULT_DB


def db_shown(path: str | None = None) -> str:
    """db_path() as a page or message may show it: a PostgreSQL URL without its password."""
    where = db_path(path)
    return postgres.redacted(where) if postgres.is_url(where) else where


class Store:
    """A sqlite file (or memory) or a PostgreSQL database, and the parts over its one connection
    (`sql`); implements backend.Backend. Each attribute is typed with its interface, so mypy holds
    every caller to what the interface offers, not to what the `Sql*` class happens to have."""

    def __init__(self, path: str | None = None, *, memory: bool = False):
        memory = memory or path == ":memory:"  # sqlite's own name for a database in memory: no file
        where = ":memory:" if memory else db_path(path)
        self.url = where  # how to open it again (a PostgreSQL URL keeps its password here only)
        self.sql: SqlConnection
        if postgres.is_url(where):
            self.sql = postgres.PgConnection(where)
        else:
            self.sql = Connection(where, memory=memory)
        self.path = self.sql.path  # what messages and pages show: a URL without its password
        self.inputs: backend.Inputs = SqlInputs(self.sql)
        self.log: backend.RunLog = SqlRunLog(self.sql)
        self.cache: backend.ResultCache = SqlResultCache(self.sql)
        self.ledger: backend.Ledger = SqlLedger(self.sql)
        self.calibrations: backend.Calibrations = SqlCalibrations(self.sql)
        self.mutations: backend.Mutations = SqlMutations(self.sql)  # `abeq mutate`'s tests
        self.assignments: backend.Assignments = SqlAssignments(self.sql)  # cases shared out

    def close(self) -> None:
        self.sql.close()


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


def exists(path: str | None = None) -> bool:
    """Whether there is a store at `path` to read (a PostgreSQL URL names a server's: asked on open)."""
    where = db_path(path)
    return postgres.is_url(where) or Path(where).is_file()


def open_store(path: str | None = None) -> Store:
    """The Store at `path` (default: $ABEQ_DB or ./abeq.db; a postgresql:// URL is a team's server),
    or an InputError naming the path when it cannot be a database (a folder, unwritable, not sqlite,
    a server that does not answer)."""
    path = db_path(path)
    if postgres.is_url(path):
        return Store(path)
    _no_other_url(path)
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


def _no_other_url(path: str) -> None:
    """A URL of another kind of server is refused (it would otherwise become a local file's path)."""
    if re.match(r"^[a-z][a-z0-9+.-]*://", path, re.I) and not postgres.is_url(path):
        raise InputError(
            f"{path.split('://')[0]}:// is not a store abeq can open",
            path=postgres.redacted(path),
            hint="Give a sqlite file's path or a postgresql://user:password@host/database URL.",
        )


def existing_store(path: str | None = None) -> Store:
    """open_store, for commands that read what runs left: refused when there is no database yet."""
    _no_other_url(db_path(path))
    if not postgres.is_url(db_path(path)) and not Path(db_path(path)).exists():
        raise InputError("no database here", path=db_path(path), hint="Pass --db, or run `abeq run` first.")
    return open_store(path)
