"""PostgreSQL as a store, for a team sharing one: `--db postgresql://user:pass@host/db` (or $ABEQ_DB).

PgConnection is a connection.SqlConnection (`one`, `all`, `insert`, `update`, `execute`, `tx`,
`batch`, `exclusive`, ...) over a pool of psycopg 3 connections shared by every Store of the process
opened on one URL, so the same `Sql*` parts run over it as over a sqlite file. Their SQL is written
once, in the portable subset both speak; what differs is bridged here: `?` and `?N` parameters,
sqlite's INSERT OR REPLACE / OR IGNORE (ON CONFLICT on the primary key), an aggregate
`sum(boolean)` (sqlite sums comparisons as 0/1), numeric sums read back as floats, a row's version
(`xmin`), the exclusive lock (an advisory one). Values are bound on the client (psycopg's
ClientCursor) so a value compares as sqlite's loose types do.

The schema is migrations.py's one ordered list, applied here through `_Schema` (the three table
operations the steps use), each step recorded in `_abeq_migrations`, under an advisory lock so two
processes opening a new database at once apply it once. The password of a URL, and any
`*password*` option (libpq's `sslpassword`), is shown nowhere: `path` (what messages and pages show)
is the URL with them replaced.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from ...errors import InputError
from ...timestamps import now

P = ParamSpec("P")
T = TypeVar("T")
SCHEMES = ("postgresql://", "postgres://")
MIGRATIONS_TABLE = "_abeq_migrations"
_LOCK_MIGRATE, _LOCK_EXCLUSIVE = 0x40_ABE0, 0x40_ABE1  # advisory lock ids (any fixed numbers)
_TYPES = {str: "text", int: "integer", float: "double precision", bytes: "bytea"}
_HINT = "Check the URL (postgresql://user:password@host:port/database) and that the server is up."


def is_url(db: object) -> bool:
    """True for a PostgreSQL connection URL (as opposed to a sqlite file's path)."""
    return isinstance(db, str) and db.startswith(SCHEMES)


# libpq's secret options in a URL's query: `password`, `sslpassword`, and any other whose name holds
# "password" (a future option, a proxy's own): each value is hidden wherever the URL is shown
_SECRET_OPTION = re.compile(r"(?i)(^|&)([^&=]*password[^&=]*)=([^&]*)")


def redacted(url: str) -> str:
    """The URL with its password and every *password* option's value replaced: what may be shown or
    stored."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        cred, host = netloc.rsplit("@", 1)
        if ":" in cred:
            cred = cred.split(":", 1)[0] + ":***"
        netloc = f"{cred}@{host}"
    query = _SECRET_OPTION.sub(r"\1\2=***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def secrets(url: str) -> list[str]:
    """Every secret a URL carries, as written and as libpq reads it (percent-decoded): the user's
    password and each *password* option's value, so redaction can hide them wherever they turn up."""
    parts = urlsplit(url)
    raw = [parts.netloc.rsplit("@", 1)[0].partition(":")[2] if "@" in parts.netloc else ""]
    raw += [m.group(3) for m in _SECRET_OPTION.finditer(parts.query)]
    found = {v for r in raw if r for v in (r, unquote(r))}
    return sorted(found, key=lambda v: (-len(v), v))  # longest first: one may hold another


def hide_secrets(text: str, url: str) -> str:
    """`text` (a server's or driver's message) with every secret of `url` replaced."""
    for value in secrets(url):
        text = text.replace(value, "***")
    return text


# seconds to wait for the server before saying it cannot be reached (a URL's own connect_timeout wins)
CONNECT_TIMEOUT = 5
_pools: dict[str, Any] = {}
_pools_lock = threading.Lock()


def _configure(conn) -> None:
    from psycopg.types.numeric import FloatLoader

    conn.adapters.register_loader("numeric", FloatLoader)  # sum() of integers: an int8 or numeric


def _pool(url: str):
    """The process's pool for this URL (opened once: a Store is opened per page load and thread)."""
    with _pools_lock:
        pool = _pools.get(url)
        if pool is None:
            import psycopg
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool

            # one connection first, with a short timeout: a server that is down or refuses the
            # password is one line within seconds, not a pool retrying (and logging) for 15 s
            timeout: dict[str, Any] = {} if "connect_timeout" in url else {"connect_timeout": CONNECT_TIMEOUT}
            try:
                psycopg.connect(url, **timeout).close()
            except psycopg.Error as why:
                said = " ".join(t.strip() for t in hide_secrets(str(why), url).splitlines() if t.strip())
                raise InputError(
                    f"cannot reach the PostgreSQL store ({said})",
                    path=redacted(url),
                    hint=_HINT,
                ) from None
            pool = ConnectionPool(
                url,
                min_size=1,
                max_size=8,
                kwargs={
                    "autocommit": True,
                    "row_factory": dict_row,
                    "cursor_factory": psycopg.ClientCursor,
                    **timeout,
                },
                configure=_configure,
                open=False,
                name="abeq",
            )
            try:
                pool.open(wait=True, timeout=15)
            except Exception as e:  # psycopg_pool's PoolTimeout hides the server's reason: ask once
                pool.close()
                reason = str(e)
                try:
                    psycopg.connect(url, **timeout).close()
                except psycopg.Error as why:
                    reason = str(why)
                text = hide_secrets(reason, url).strip()
                raise InputError(
                    f"cannot reach the PostgreSQL store ({text})", path=redacted(url), hint=_HINT
                ) from None
            _pools[url] = pool
        return pool


def close_pools() -> None:
    """Close every pool this process opened (the end of a test session; a CLI exits anyway)."""
    with _pools_lock:
        for pool in _pools.values():
            pool.close()
        _pools.clear()


_NUMBERED = re.compile(r"\?(\d+)")


def _translate(sql: str, params: Iterable) -> tuple[str, Any]:
    """sqlite's parameters (`?` in order, `?N` by position) as psycopg's (`%s`, `%(pN)s`)."""
    values = [_value(v) for v in params]
    sql = sql.replace("%", "%%")
    if _NUMBERED.search(sql):
        return _NUMBERED.sub(r"%(p\1)s", sql), {f"p{i + 1}": v for i, v in enumerate(values)}
    return sql.replace("?", "%s"), values


def _value(v: Any) -> Any:
    if isinstance(v, bool):  # sqlite stores a bool as 0/1 in an integer column; so does abeq's schema here
        return int(v)
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, default=repr)  # as sqlite-utils stores them
    return v


class _Table:
    """What a migration step asks of one table (sqlite-utils' Table: create, create_index, add_column)."""

    def __init__(self, run: Callable[[str], None], name: str):
        self.run, self.name = run, name

    def create(self, columns: dict, pk: Any = None, foreign_keys: Iterable = ()) -> None:
        refs = {c: (t, oc) for c, t, oc in foreign_keys}
        cols = []
        for col, kind in columns.items():
            if pk == col and kind is int:
                cols.append(f'"{col}" integer generated by default as identity primary key')
                continue
            ref = f' references "{refs[col][0]}" ("{refs[col][1]}")' if col in refs else ""
            cols.append(f'"{col}" {_TYPES[kind]}{" primary key" if pk == col else ""}{ref}')
        if isinstance(pk, tuple):
            cols.append(f"primary key ({', '.join(f'{c!r}'.replace(chr(39), chr(34)) for c in pk)})")
        self.run(f'create table "{self.name}" ({", ".join(cols)})')

    def create_index(self, columns: list[str], unique: bool = False) -> None:
        name = f"idx_{self.name}_{'_'.join(columns)}"
        cols = ", ".join(f'"{c}"' for c in columns)
        self.run(f'create {"unique " if unique else ""}index "{name}" on "{self.name}" ({cols})')

    def add_column(self, name: str, kind: type, not_null_default: Any = None) -> None:
        extra = ""
        if not_null_default is not None:
            extra = " not null default " + (
                f"'{not_null_default}'" if isinstance(not_null_default, str) else str(not_null_default)
            )
        self.run(f'alter table "{self.name}" add column "{name}" {_TYPES[kind]}{extra}')


class _Schema:
    """The `db` a migration step is given, over one PostgreSQL connection."""

    def __init__(self, conn):
        self.conn = conn

    def table(self, name: str) -> _Table:
        return _Table(lambda sql: self.conn.execute(sql), name)


# sqlite sums a comparison as 0/1 (`sum(status = 'judged')`); PostgreSQL needs an aggregate for it
_PREPARE = """
create or replace function abeq_add_bool(bigint, boolean) returns bigint
    language sql immutable as 'select $1 + coalesce($2::int, 0)';
create or replace aggregate sum(boolean) (sfunc = abeq_add_bool, stype = bigint, initcond = '0');
"""


def migrate(conn) -> None:
    """Apply the pending steps of migrations.py's list, once, whoever else opens the database now."""
    from .migrations import migrations

    if _up_to_date(conn, [m.name for m in migrations._migrations]):
        return  # the common case, one query: a Store is opened per page load and per thread
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(%s)", [_LOCK_MIGRATE])
        conn.execute(
            f'create table if not exists "{MIGRATIONS_TABLE}" (name text primary key, applied_at text)'
        )
        for statement in _PREPARE.strip().split(";\n"):
            conn.execute(statement.strip().rstrip(";"))
        done = {r["name"] for r in conn.execute(f'select name from "{MIGRATIONS_TABLE}"').fetchall()}
        for step in migrations._migrations:
            if step.name in done:
                continue
            step.fn(_Schema(conn))  # type: ignore[arg-type]  # the three operations the steps use
            conn.execute(f'insert into "{MIGRATIONS_TABLE}" values (%s, %s)', [step.name, now()])


def _up_to_date(conn, steps: list[str]) -> bool:
    exists = conn.execute("select to_regclass(%s) t", [f'"{MIGRATIONS_TABLE}"']).fetchone()
    return bool(exists and exists["t"]) and set(steps) <= set(applied(conn))


def applied(conn) -> list[str]:
    """The names of the steps applied to this database."""
    rows = conn.execute(f'select name from "{MIGRATIONS_TABLE}" order by name').fetchall()
    return [r["name"] for r in rows]


def create_database(url: str, name: str, template: str | None = None) -> str:
    """A new database on the server at `url` (a copy of `template`: fast); its URL."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'create database "{name}"' + (f' template "{template}"' if template else ""))
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


class PgConnection:
    """A PostgreSQL database as the store's parts use a connection (connection.Connection's methods).

    Each thread has its own transaction: `tx`, `batch` and `exclusive` hold one pooled connection
    for their writes; a read outside them takes any (autocommit)."""

    remote = True
    row_version = "xmin::text::bigint"  # the transaction that last wrote the row (an update is in place)

    def __init__(self, url: str):
        import psycopg

        self.url, self.path = url, redacted(url)
        from ...models.http import keep_secret

        for value in secrets(url):  # whatever abeq prints or stores from now on is redacted of them
            keep_secret(value)
        self.IntegrityError: type[Exception] = psycopg.IntegrityError
        self.pool = _pool(url)
        self._local = threading.local()
        self._columns: dict[str, list[str]] = {}
        self._pks: dict[str, list[str]] = {}
        with self.pool.connection() as conn:
            try:
                migrate(conn)
            except psycopg.Error as e:
                text = hide_secrets(str(e), url)
                raise InputError(
                    f"cannot prepare the PostgreSQL store ({text})", path=self.path, hint=_HINT
                ) from None

    def close(self) -> None:
        """Nothing to close: the pool is the process's (close_pools ends it)."""

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
        else:
            with self.pool.connection() as conn:
                yield conn

    @contextmanager
    def batch(self) -> Iterator[None]:
        """The writes made inside it in one transaction: all committed at its end, none if it raises."""
        if getattr(self._local, "conn", None) is not None:  # already inside one: it commits the lot
            yield
            return
        with self.pool.connection() as conn:
            self._local.conn = conn
            try:
                with conn.transaction():
                    yield
            finally:
                self._local.conn = None

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """One transaction no other `exclusive` one (in any process) interleaves with."""
        with self.batch():
            self.execute_raw("select pg_advisory_xact_lock(%s)", [_LOCK_EXCLUSIVE])
            yield

    def tx(self, fn: Callable[P, T], *a: P.args, **kw: P.kwargs) -> T:
        with self.batch():
            return fn(*a, **kw)

    def execute_raw(self, sql: str, params: Any = None) -> Any:
        with self._conn() as conn:
            return conn.execute(sql, params)

    def execute(self, sql: str, params: Iterable = ()) -> int:
        q, p = _translate(sql, params)
        with self._conn() as conn:
            return conn.execute(q, p).rowcount

    def all(self, sql: str, params: Iterable = ()) -> list[dict[str, Any]]:
        q, p = _translate(sql, params)
        with self._conn() as conn:
            cur = conn.execute(q, p)
            if cur.description is None:
                raise ValueError(f"not a query (it returns no rows): {sql.split()[0]}")
            return cur.fetchall()

    def one(self, sql: str, params: Iterable = ()) -> dict[str, Any] | None:
        rows = self.all(sql, params)
        return rows[0] if rows else None

    def columns(self, table: str) -> list[str]:
        """A table's columns in order (read once per connection object)."""
        if table not in self._columns:
            rows = self.all(
                "select column_name from information_schema.columns where table_name = ? "
                "and table_schema = current_schema() order by ordinal_position",
                [table],
            )
            self._columns[table] = [r["column_name"] for r in rows]
        return self._columns[table]

    def ids_follow(self, table: str) -> None:
        """New rows' ids continue after the largest (rows copied in kept their own ids)."""
        self.all(
            f"select setval(pg_get_serial_sequence(?, 'id'), coalesce(max(id), 1), max(id) is not null) "
            f'from "{table}"',
            [f'"{table}"'],
        )

    def _pk(self, table: str) -> list[str]:
        """A table's primary key columns (read once per connection object: an upsert asks each time)."""
        if table not in self._pks:
            self._pks[table] = self._read_pk(table)
        return self._pks[table]

    def _read_pk(self, table: str) -> list[str]:
        rows = self.all(
            """select a.attname from pg_index i
               join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
               where i.indrelid = ?::regclass and i.indisprimary""",
            [f'"{table}"'],
        )
        return [r["attname"] for r in rows]

    def insert(self, table: str, row: dict, *, replace: bool = False, ignore: bool = False) -> int | None:
        """One row; its `id` where the table has one (else 0), None when `ignore` left an existing row.
        `replace` replaces the whole row, as sqlite's INSERT OR REPLACE does (unnamed columns empty)."""
        cols = ", ".join(f'"{c}"' for c in row)
        sql = f'insert into "{table}" ({cols}) values ({", ".join("?" * len(row))})'
        if replace:
            pk = self._pk(table)
            others = [c for c in self.columns(table) if c not in pk]
            sets = ", ".join(f'"{c}" = excluded."{c}"' for c in others)
            sql += f" on conflict ({', '.join(pk)}) do update set {sets}"
        elif ignore:
            sql += " on conflict do nothing"
        has_id = "id" in self.columns(table)
        if has_id:
            sql += " returning id"
        q, p = _translate(sql, row.values())
        with self._conn() as conn:  # one statement: atomic without a transaction round trip of its own
            cur = conn.execute(q, p)
            if has_id:
                got = cur.fetchone()
                return got["id"] if got else None
            return 0 if cur.rowcount == 1 or replace else None

    def update(self, table: str, where: dict, fields: dict) -> int:
        if not fields:
            return 0
        sets = ", ".join(f'"{k}" = ?' for k in fields)
        cond = " and ".join(f'"{k}" = ?' for k in where)
        return self.execute(f'update "{table}" set {sets} where {cond}', [*fields.values(), *where.values()])

    def table_names(self) -> list[str]:
        rows = self.all(
            "select table_name from information_schema.tables where table_schema = current_schema() "
            "and table_type = 'BASE TABLE' order by table_name"
        )
        return [r["table_name"] for r in rows]
