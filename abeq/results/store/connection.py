"""The connection a store's parts share, and sqlite's: opened, migrated, and written one short
transaction at a time (or a few writes that belong together in one: `batch`).

`SqlConnection` is the seam between the parts and a database. The parts (the `Sql*` classes) write
their SQL once, with sqlite's `?` parameters, in what sqlite and PostgreSQL both speak; whatever
depends on the dialect is the connection's: binding parameters, an upsert or an insert that leaves
an existing row (`insert(replace=, ignore=)`), the id of the row inserted, a row's version
(`row_version`), a lock that other processes' writers wait on (`exclusive`), ids that continue after
copied rows (`ids_follow`), and whether a call is a round trip to a server (`remote`). sqlite's is
`Connection` below; postgres.PgConnection is PostgreSQL's.

A sqlite connection belongs to one thread (open one per thread); WAL lets readers and a writer work
at once."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, ParamSpec, Protocol, TypeVar

from sqlite_utils import Database

from ...files import check_database_file
from .migrations import migrations

P = ParamSpec("P")
T = TypeVar("T")
# values sqlite takes as they are; anything else is converted as sqlite-utils converts it
_AS_IS = frozenset({str, int, float, bool, bytes, type(None)})


def _create_private(path: str) -> None:
    """A new database file readable by its owner only (0600): it holds transcripts, workspace files
    and runner output. sqlite gives the -wal and -shm files the database file's permissions."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600))
    except FileExistsError:
        pass  # an existing database (or one another process just made) keeps its permissions


class SqlConnection(Protocol):
    """What a store's parts ask of a connection: sqlite's Connection below or postgres.PgConnection.
    A part asks nothing else, and never which database it is on."""

    path: str
    IntegrityError: type[Exception]
    remote: bool
    """A call is a round trip to a server (the engine makes the run log's off its event loop)."""
    row_version: str
    """An SQL expression, within a query over one table, that changes whenever a row is written."""

    def one(self, sql: str, params: Iterable = ()) -> dict[str, Any] | None: ...

    def all(self, sql: str, params: Iterable = ()) -> list[dict[str, Any]]: ...

    def insert(self, table: str, row: dict, *, replace: bool = False, ignore: bool = False) -> int | None: ...

    def update(self, table: str, where: dict, fields: dict) -> int: ...

    def execute(self, sql: str, params: Iterable = ()) -> int: ...

    def tx(self, fn: Callable[P, T], *a: P.args, **kw: P.kwargs) -> T: ...

    def batch(self) -> AbstractContextManager[None]: ...

    def exclusive(self) -> AbstractContextManager[None]: ...

    def table_names(self) -> list[str]: ...

    def columns(self, table: str) -> list[str]: ...

    def ids_follow(self, table: str) -> None: ...

    def close(self) -> None: ...


class Connection:
    """One sqlite file (or memory), migrated on open; `tx` and `insert` serialise this process's writes.

    The parts of a store use only this class's methods (`one`, `all`, `insert`, `update`, `execute`,
    `tx`, `batch`, `exclusive`), never the sqlite module: postgres.py's PgConnection offers the same
    ones over a PostgreSQL server, so each part's SQL runs on both."""

    IntegrityError: type[Exception] = sqlite3.IntegrityError
    remote = False  # a file in this process
    row_version = "rowid"  # an INSERT OR REPLACE writes a new row, with a new rowid

    def __init__(self, path: str, *, memory: bool = False, shared: bool | None = None):
        self.path = path
        if memory:
            conn = sqlite3.connect(":memory:", check_same_thread=False)
        else:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            check_database_file(self.path, shared)  # planted links, others' files: refused
            _create_private(self.path)
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=30000")
        self.db = Database(conn)
        if not memory:
            self.db.enable_wal()
            conn.execute("PRAGMA synchronous=NORMAL")
        self.write = threading.RLock()  # re-entered by the writes inside a batch()
        self._batching = False
        try:
            with self.write:
                self._migrate()
        except BaseException:
            conn.close()
            raise

    def _migrate(self) -> None:
        """Apply pending migrations holding the write lock from the start.

        Two processes opening a new file at once would otherwise both see the steps as pending;
        the second then fails with "database is locked" (its read snapshot is stale when it comes
        to write, which sqlite reports at once instead of waiting). BEGIN IMMEDIATE waits its turn
        (busy_timeout), then sees what the other process applied.
        """
        self._refuse_newer()
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

    def _refuse_newer(self) -> None:
        """A database a newer abeq migrated has tables this one does not know how to keep right:
        refused, naming the schema step it needs, before anything is read or written."""
        if "_sqlite_migrations" not in self.db.table_names():
            return
        known = {m.name for m in migrations._migrations}
        applied = [
            r[0]
            for r in self.db.conn.execute(
                "select name from _sqlite_migrations where migration_set = ? order by name",
                [migrations.name],
            )
        ]
        newer = [n for n in applied if n not in known]
        if newer:
            from ...errors import InputError

            last = max(known)
            raise InputError(
                f"this database was written by a newer abeq: it has schema step {newer[-1]} and this abeq "
                f"knows steps up to {last}",
                path=self.path,
                hint="Upgrade abeq (pip install -U abeq) to one that has that step, or use another --db.",
            )

    def close(self) -> None:
        self.db.conn.close()

    def table_names(self) -> list[str]:
        return sorted(self.db.table_names())

    def columns(self, table: str) -> list[str]:
        """A table's columns in order."""
        return [c.name for c in self.db.table(table).columns]

    def ids_follow(self, table: str) -> None:
        """New rows' ids continue after the largest (sqlite's rowid does so by itself)."""

    def tx(self, fn: Callable[P, T], *a: P.args, **kw: P.kwargs) -> T:
        """`fn`'s writes in one transaction: its own, or the batch() it is made in."""
        with self.write:
            if self._batching:
                return fn(*a, **kw)
            with self.db.conn:
                return fn(*a, **kw)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """The writes made inside it in one transaction: all of them committed at its end, none if it
        raises. For writes that belong together (a model call's result and its ledger row, a case's
        checks and its verdict): one commit instead of several, and never one without the other.
        Nothing inside may await: the write lock is held throughout."""
        with self.write:
            if self._batching:  # already inside one: it commits the lot
                yield
                return
            self._batching = True
            try:
                with self.db.conn:
                    yield
            finally:
                self._batching = False

    def insert(self, table: str, row: dict, *, replace: bool = False, ignore: bool = False) -> int | None:
        """One row in its own transaction (or its batch's), as a single statement; the new row's
        rowid (its integer `id` where the table has one), None when `ignore` left an existing row.

        For the writes made once per model call: sqlite-utils' `insert` also reads sqlite_master
        three times per row, which was a third of abeq's CPU per call in bench/bench_overhead.py.
        Values are converted exactly as sqlite-utils converts them (plain ones are taken as they are).
        """
        from sqlite_utils.db import jsonify_if_needed

        cols = ", ".join(f'"{c}"' for c in row)
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE" if ignore else "INSERT"
        marks = ", ".join("?" * len(row))
        sql = f'{verb} INTO "{table}" ({cols}) VALUES ({marks})'
        values = [v if type(v) in _AS_IS else jsonify_if_needed(v) for v in row.values()]
        cur = self.tx(self.db.conn.execute, sql, values)
        return cur.lastrowid if cur.rowcount == 1 else None

    def update(self, table: str, where: dict, fields: dict) -> int:
        """Set `fields` on the rows matching every column = value of `where`; how many rows."""
        if not fields:
            return 0
        sets = ", ".join(f'"{k}" = ?' for k in fields)
        cond = " and ".join(f'"{k}" = ?' for k in where)
        from sqlite_utils.db import jsonify_if_needed

        given = [*fields.values(), *where.values()]
        values = [v if type(v) in _AS_IS else jsonify_if_needed(v) for v in given]
        return self.execute(f'update "{table}" set {sets} where {cond}', values)

    def execute(self, sql: str, params: Iterable = ()) -> int:
        """A statement that returns no rows (update, delete), in its own transaction or its batch's;
        how many rows it changed."""
        return self.tx(self.db.conn.execute, sql, list(params)).rowcount

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """One transaction that no other writer (in any process) interleaves with: what is read
        inside it still holds when it writes (a check-then-write, as the ledger's conflict check)."""
        conn = self.db.conn
        with self.write:
            conn.execute("BEGIN IMMEDIATE")
            self._batching = True
            try:
                yield
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            finally:
                self._batching = False

    # rows come back as plain dicts; rows.py declares each table's, and the store's methods say which
    def one(self, sql: str, params: Iterable = ()) -> dict[str, Any] | None:
        rows = self.all(sql, params)
        return rows[0] if rows else None

    def all(self, sql: str, params: Iterable = ()) -> list[dict[str, Any]]:
        """The rows of a query, as sqlite-utils' `query` gives them (duplicate column names made
        unique alike), without the savepoint it wraps around every statement in case one returns no
        rows: abeq asks only queries, several per model call."""
        from sqlite_utils.utils import dedupe_keys

        cursor = self.db.conn.execute(sql, list(params))
        if cursor.description is None:
            raise ValueError(f"not a query (it returns no rows): {sql.split()[0]}")
        keys = dedupe_keys(d[0] for d in cursor.description)
        return [dict(zip(keys, row)) for row in cursor]
