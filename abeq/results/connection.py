"""The one sqlite connection a store's parts share: opened, migrated, and written one short
transaction at a time (or a few writes that belong together in one: `batch`). A connection belongs
to one thread (open one per thread); WAL lets readers and a writer work at once."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from sqlite_utils import Database

from ..files import check_database_file
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


class Connection:
    """One sqlite file (or memory), migrated on open; `tx` and `insert` serialise this process's writes."""

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
            from ..errors import InputError

            last = max(known)
            raise InputError(
                f"this database was written by a newer abeq: it has schema step {newer[-1]} and this abeq "
                f"knows steps up to {last}",
                path=self.path,
                hint="Upgrade abeq (pip install -U abeq) to one that has that step, or use another --db.",
            )

    def close(self) -> None:
        self.db.conn.close()

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

    def insert(self, table: str, row: dict, *, replace: bool = False) -> None:
        """One row in its own transaction (or its batch's), as a single statement.

        For the writes made once per model call: sqlite-utils' `insert` also reads sqlite_master
        three times per row, which was a third of abeq's CPU per call in bench/bench_overhead.py.
        Values are converted exactly as sqlite-utils converts them (plain ones are taken as they are).
        """
        from sqlite_utils.db import jsonify_if_needed

        cols = ", ".join(f'"{c}"' for c in row)
        sql = (
            f'INSERT {"OR REPLACE " if replace else ""}INTO "{table}" ({cols}) '
            f"VALUES ({', '.join('?' * len(row))})"
        )
        values = [v if type(v) in _AS_IS else jsonify_if_needed(v) for v in row.values()]
        self.tx(self.db.conn.execute, sql, values)

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
