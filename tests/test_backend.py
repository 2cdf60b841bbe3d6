"""The store's interfaces (abeq/results/store/backend.py): the store is its parts, each implementing
one interface; callers reach the parts, never SQL; the engine runs against whatever ResultCache it
is given."""

import ast
import re
import sqlite3
from pathlib import Path

from abeq.execution.engine import Engine
from abeq.results.store import backend
from abeq.results.store.store import Store

ROOT = Path(__file__).resolve().parent.parent
# the store: the only modules that may speak SQL
BACKEND = {
    f"abeq/results/store/{m}.py"
    for m in (
        "store",
        "connection",
        "migrations",
        "inputs",
        "runlog",
        "cached",
        "ledger",
        "calibrations",
        "mutations",
        "assignments",
        "postgres",  # the PostgreSQL connection (a team's store)
        "copy",  # `abeq db copy`: every table, from one backend to the other
        "merge",  # `abeq db merge`: shards' stores into one
    )
}
PARTS = {
    "inputs": backend.Inputs,
    "log": backend.RunLog,
    "cache": backend.ResultCache,
    "ledger": backend.Ledger,
    "calibrations": backend.Calibrations,
    "mutations": backend.Mutations,
    "assignments": backend.Assignments,
}
SQL_CALLS = {"execute", "executemany", "executescript", "query"}  # sqlite3's and sqlite-utils' own
SQL_MODULES = {"sqlite3", "sqlite_utils"}


def _methods(protocol: type) -> set[str]:
    return {n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")}


def _sql_words() -> re.Pattern:
    """A string that names a table of abeq's schema as SQL does (after from, join, into, update or
    table): the tables are read from a freshly migrated store, so a new table is covered too."""
    store = Store(memory=True)
    tables = [t for t in store.sql.db.table_names() if not t.startswith("_")]
    store.close()
    assert "run_cases" in tables and "overrides" in tables
    names = "|".join(sorted(tables, key=len, reverse=True))
    return re.compile(rf"\b(from|join|into|update|table)\s+[\"']?({names})\b", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings (prose about a table may name it)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def sql_outside_the_backend(files: list[Path], root: Path = ROOT) -> list[str]:
    """Where a file outside the backend speaks SQL: imports sqlite3 or sqlite-utils, calls a
    database's execute/query, or holds an SQL statement over one of abeq's tables."""
    words, found = _sql_words(), []
    for path in files:
        rel = path.relative_to(root).as_posix()
        if rel in BACKEND:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Import) and {a.name.split(".")[0] for a in node.names} & SQL_MODULES:
                found.append(f"{where} imports {', '.join(a.name for a in node.names)}")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in SQL_MODULES:
                found.append(f"{where} imports from {node.module}")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in SQL_CALLS
            ):
                found.append(f"{where} calls .{node.func.attr}()")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if words.search(node.value):
                    found.append(f"{where} holds SQL: {node.value.strip()[:60]!r}")
    return found


def _library_files() -> list[Path]:
    """abeq itself, the desk's pages and app.py, the benchmarks (the tests may read the file)."""
    files = [
        *sorted((ROOT / "abeq").rglob("*.py")),
        *sorted((ROOT / "desk_pages").glob("*.py")),
        ROOT / "app.py",
        *sorted((ROOT / "bench").rglob("*.py")),
    ]
    return [f for f in files if f.is_file()]  # the desk's pages may live inside abeq/


def test_no_module_outside_the_stores_backend_issues_sql():
    assert sql_outside_the_backend(_library_files()) == []


def test_the_sql_check_finds_each_way_of_issuing_sql(tmp_path):
    cases = {
        "a.py": 'def f(store):\n    return store.sql.all("select case_id from calls where run_id = 1")\n',
        "b.py": "import sqlite3\n",
        "c.py": "from sqlite_utils import Database\n",
        "d.py": 'def f(conn):\n    conn.execute("pragma x")\n',
        "e.py": 'Q = """select\n  (select coalesce(max(id), 0) from overrides)"""\n',
        "ok.py": '"""Reads what the ledger holds from overrides."""\nLABEL = "Select a run from the list"\n',
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    found = sql_outside_the_backend(sorted(tmp_path.glob("*.py")), tmp_path)
    assert sorted({f.split(":")[0] for f in found}) == ["a.py", "b.py", "c.py", "d.py", "e.py"]


def test_each_part_of_the_store_implements_its_interface(store):
    for name, protocol in PARTS.items():
        assert isinstance(getattr(store, name), protocol), name
    assert set(backend.Backend.__annotations__) == {"path", *PARTS}


def test_the_store_has_no_forwarding_methods():
    """A part's methods are reached through the part (`store.ledger.add_override`), never through
    the store: the store's own public names are its parts, where it lives, and close."""
    of_parts = set().union(*map(_methods, PARTS.values()))
    assert of_parts & set(dir(Store)) == set()
    own = {n for n, v in vars(Store).items() if callable(v) and not n.startswith("_")}
    assert own == {"close"}


def test_the_interfaces_name_every_public_method_of_the_sql_parts(store):
    """What an interface lists is all a caller can reach: no part offers a method
    its interface does not list (mypy holds the signatures: the parts are typed by them)."""
    for name, protocol in PARTS.items():
        part = type(getattr(store, name))
        public = {n for n, v in vars(part).items() if callable(v) and not n.startswith("_")}
        assert public == _methods(protocol), name


def test_a_review_made_by_another_process_meanwhile_is_updated_not_refused(tmp_path):
    path = str(tmp_path / "r.db")
    a, b = Store(path), Store(path)
    real, asked = b.inputs.review, []

    def stale(name):  # b looked before a's insert landed
        asked.append(name)
        return None if len(asked) == 1 else real(name)

    b.inputs.review = stale
    rid = a.inputs.upsert_review("demo", None, None, "skill")
    assert b.inputs.upsert_review("demo", None, None, "instruction-file") == rid
    a.close()
    b.close()
    assert sqlite3.connect(path).execute("select variant from reviews").fetchall() == [("instruction-file",)]


class SpyCache:
    """A ResultCache over another one (the report reads results from the store) that tells what it
    was asked to store."""

    def __init__(self, inner):
        self.inner, self.puts = inner, []

    def runner_result(self, key):
        return self.inner.runner_result(key)

    def first_runner_result(self, keys):
        return self.inner.first_runner_result(keys)

    def put_runner_result(self, row):
        self.puts.append("runner")
        self.inner.put_runner_result(row)

    def judgement(self, key):
        return self.inner.judgement(key)

    def judgements(self, keys):
        return self.inner.judgements(keys)

    def put_judgement(self, row):
        self.puts.append("judge")
        self.inner.put_judgement(row)

    def grading(self, key):
        return self.inner.grading(key)

    def put_grading(self, row):
        self.puts.append("grading")
        self.inner.put_grading(row)

    def gate_section(self, runner_key):
        return self.inner.gate_section(runner_key)

    def claim(self, key, run_id, owner):
        return self.inner.claim(key, run_id, owner)

    def release(self, key, run_id):
        self.inner.release(key, run_id)

    def end_claims(self, run_id, owner):
        self.inner.end_claims(run_id, owner)


def test_the_engine_caches_in_the_result_cache_it_is_given(store, example, scripted_cfg):
    cache = SpyCache(store.cache)
    assert isinstance(cache, backend.ResultCache)
    ex = example
    Engine(store, ex["original"], ex["lossy"], ex["ts"], scripted_cfg(), cache=cache).run()
    assert sorted(cache.puts) == ["judge"] * 7 + ["runner"] * 14  # every result made went through it
    made = store.log.call_stats(1)["made"]
    run_id = Engine(store, ex["original"], ex["lossy"], ex["ts"], scripted_cfg(), cache=cache).run()
    assert len(cache.puts) == 21  # the rerun is served by the spy
    assert store.log.call_stats(run_id)["cached"] == 21 and store.log.call_stats(run_id)["made"] == 0
    assert made == 21


PART_MODULES = ("inputs", "runlog", "cached", "ledger", "calibrations", "mutations", "assignments")


def test_the_parts_ask_their_connection_only_what_sql_connection_lists():
    """The `Sql*` parts run unchanged over sqlite and PostgreSQL: what differs is the connection's to
    offer, so a part reads nothing of it beyond the seam, and nothing that says which database it
    is (runlog.py once branched on `sql.dialect`)."""
    from abeq.results.store.connection import Connection, SqlConnection
    from abeq.results.store.postgres import PgConnection

    seam = {n for n in dir(SqlConnection) if not n.startswith("_")} | set(SqlConnection.__annotations__)
    asked: dict[str, set[str]] = {}
    for m in PART_MODULES:
        tree = ast.parse((ROOT / "abeq/results/store" / f"{m}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and (
                (isinstance(node.value, ast.Name) and node.value.id == "sql")
                or (isinstance(node.value, ast.Attribute) and node.value.attr == "sql")
            ):
                asked.setdefault(node.attr, set()).add(m)
    assert "one" in asked and "insert" in asked  # the walk finds what the parts ask
    assert {a: ms for a, ms in asked.items() if a not in seam} == {}
    assert not {a for a in seam if "dialect" in a or "sqlite" in a or "postgres" in a}
    for conn in (Connection, PgConnection):  # each member a class offers (path and the error: set on open)
        assert {n for n in seam if not hasattr(conn, n)} <= {"path", "IntegrityError"}, conn.__name__
