"""The store: migrations on a blank sqlite file and a blank PostgreSQL database (one list, the same
tables and columns), WAL, foreign keys, the override audit trail; the shared tests run on both."""

import sqlite3

import pytest

from abeq.results.store.migrations import migrations
from abeq.results.store.store import Store


@pytest.fixture
def store(backend_store):
    return backend_store


def test_blank_database_is_migrated_to_the_full_schema(tmp_path):
    path = tmp_path / "new.db"
    Store(str(path)).close()
    conn = sqlite3.connect(path)
    tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
    assert {
        "documents",
        "transfer_sets",
        "reviews",
        "runner_results",
        "judgements",
        "runs",
        "run_cases",
        "overrides",
        "calls",
        "gradings",
        "check_results",
        "workspaces",
        "calibrations",
        "_sqlite_migrations",
    } <= tables
    cols = {r[1] for r in conn.execute("pragma table_info(runner_results)")}
    assert {"mode", "observed"} <= cols
    assert "workspaces" in {r[1] for r in conn.execute("pragma table_info(transfer_sets)")}
    assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"
    applied = [r[0] for r in conn.execute("select name from _sqlite_migrations where migration_set = 'abeq'")]
    assert applied == [m.name for m in migrations._migrations]
    overrides = {r[1]: (r[2], r[3], r[4]) for r in conn.execute("pragma table_info(overrides)")}
    assert overrides == {
        "id": ("INTEGER", 0, None),
        "run_id": ("INTEGER", 0, None),
        "case_id": ("TEXT", 0, None),
        "verdict": ("TEXT", 0, None),
        "judge_verdict": ("TEXT", 0, None),
        "reason": ("TEXT", 0, None),
        "reviewer": ("TEXT", 0, None),
        "created_at": ("TEXT", 0, None),
        "action": ("TEXT", 1, "'override'"),  # m003: rows older than Agree were all overrides
        "seen_id": ("INTEGER", 0, None),
        "seen_verdict": ("TEXT", 0, None),
    }


def test_reopening_applies_nothing_twice(tmp_path):
    path = str(tmp_path / "x.db")
    Store(path).close()
    Store(path).close()
    n = sqlite3.connect(path).execute("select count(*) from _sqlite_migrations").fetchone()[0]
    assert n == len(migrations._migrations)


def test_documents_are_content_addressed(store):
    h1 = store.inputs.put_document("a.md", "same text")
    h2 = store.inputs.put_document("b.md", "same text")
    assert h1 == h2 and store.sql.one("select count(*) n from documents")["n"] == 1


def test_foreign_keys_are_enforced(store):
    with pytest.raises(store.sql.IntegrityError):
        store.ledger.add_override(
            run_id=999, case_id="x", verdict="equivalent", reason="r", reviewer="me", judge_verdict=None
        )


def test_override_needs_a_reason(store):
    from abeq.errors import InputError

    with pytest.raises(InputError):
        store.ledger.add_override(
            run_id=1, case_id="x", verdict="equivalent", reason="  ", reviewer="", judge_verdict=None
        )


def test_runs_carry_their_owner_heartbeat_and_attempt(tmp_path):
    path = tmp_path / "new.db"
    Store(str(path)).close()
    cols = {r[1]: r[2] for r in sqlite3.connect(path).execute("pragma table_info(runs)")}
    assert cols == {
        "id": "INTEGER",
        "review_id": "INTEGER",
        "round": "INTEGER",
        "config_key": "TEXT",
        "original_hash": "TEXT",
        "candidate_hash": "TEXT",
        "transfer_set_hash": "TEXT",
        "runner_model": "TEXT",
        "judge_model": "TEXT",
        "variant": "TEXT",
        "config": "TEXT",
        "status": "TEXT",
        "thin_accepted": "INTEGER",
        "started_at": "TEXT",
        "finished_at": "TEXT",
        "summary": "TEXT",
        "stats": "TEXT",
        "owner": "TEXT",
        "heartbeat_at": "TEXT",
        "cancel_requested_at": "TEXT",
        "attempt_started_at": "TEXT",
        "attempt_first_call": "INTEGER",
        "stopped_after": "TEXT",  # --fail-fast
        "set_confirmed_for_run": "TEXT",  # `abeq run --confirm`: who accepted the set for this run only
    }


def test_the_columns_for_provider_cache_tokens_and_fail_fast(tmp_path):
    path = tmp_path / "new.db"
    Store(str(path)).close()
    conn = sqlite3.connect(path)

    def columns(table):
        return {r[1]: r[2] for r in conn.execute(f"pragma table_info({table})")}

    for table in ("calls", "runner_results", "judgements"):
        assert {"cache_read_tokens": "INTEGER", "cache_write_tokens": "INTEGER"}.items() <= columns(
            table
        ).items()
    assert columns("calls")["cache_saved"] == "REAL" and columns("runs")["stopped_after"] == "TEXT"


@pytest.mark.parametrize(
    "table,row_type",
    [
        ("documents", "DocumentRow"),
        ("reviews", "ReviewRow"),
        ("runs", "RunRow"),
        ("run_cases", "RunCaseRow"),
        ("runner_results", "RunnerResultRow"),
        ("judgements", "JudgementRow"),
        ("gradings", "GradingRow"),
        ("check_results", "CheckResultRow"),
        ("overrides", "OverrideRow"),
        ("calibrations", "CalibrationRow"),
        ("assignments", "AssignmentRow"),
    ],
)
def test_each_typed_row_names_its_tables_columns(store, table, row_type):
    """The typed rows the store returns say what the migrated table holds: no column missing from
    the type, none in the type that the table lacks (beyond values the store adds when it reads)."""
    from abeq.results.store import rows

    cols = set(store.sql.columns(table))
    keys = set(getattr(rows, row_type).__annotations__)  # a TypedDict's own and its bases' keys
    added_on_read = {"RunRow": {"stored_status"}, "OverrideRow": {"carried_from"}}
    assert cols == keys - added_on_read.get(row_type, set())


def test_both_backends_apply_the_one_list_of_migrations_alike(tmp_path, pg_db):
    """A blank PostgreSQL database gets every step of migrations.py, recorded, and the same tables
    with the same columns in the same order as a blank sqlite file."""
    from abeq.results.store import postgres

    lite, pg = Store(str(tmp_path / "x.db")), Store(pg_db)
    own = {"_sqlite_migrations", postgres.MIGRATIONS_TABLE}
    tables = [t for t in lite.sql.table_names() if t not in own]
    assert tables == [t for t in pg.sql.table_names() if t not in own] and "run_cases" in tables
    for t in tables:
        assert lite.sql.columns(t) == pg.sql.columns(t), t
    steps = [r["name"] for r in pg.sql.all(f"select name from {postgres.MIGRATIONS_TABLE} order by name")]
    assert steps == [m.name for m in migrations._migrations]
    Store(pg_db).close()  # reopening applies nothing twice
    assert len(pg.sql.all(f"select name from {postgres.MIGRATIONS_TABLE}")) == len(steps)


def test_the_same_sql_reads_alike_on_both_backends(store):
    """A run with cases, calls and reviewer actions: the counts, sums and stamps the report reads."""
    from abeq.results.store.rows import RunRow

    doc = store.inputs.put_document("a.md", "text")
    run_id = store.log.create_run(
        RunRow(review_id=None, round=1, config_key="k", original_hash=doc, candidate_hash=doc)  # type: ignore[typeddict-item]
    )
    store.log.add_pending_cases(run_id, ["c1", "c2", "c3"])
    before = store.log.report_stamp(run_id)
    store.log.put_run_case(
        {"run_id": run_id, "case_id": "c1", "position": 0, "status": "judged", "verdict": "equivalent"}
    )
    store.log.log_call(
        {
            "run_id": run_id,
            "case_id": "c1",
            "kind": "runner-teacher",
            "model": "m",
            "key": "x",
            "cached": 0,
            "ok": 1,
            "prompt_tokens": 3,
            "completion_tokens": 4,
            "cost": 0.5,
        }
    )
    assert store.log.case_counts(run_id) == {"total": 3, "done": 1, "judged": 1, "errors": 0}
    assert store.log.report_stamp(run_id) != before
    sums = store.log.call_stats(run_id)
    assert (sums["made"], sums["teacher_made"], sums["cost"], sums["prompt_tokens"]) == (1, 1, 0.5, 3)
    assert store.log.call_progress(run_id)["runner"] == 1
    stamp = store.log.report_stamp(run_id)
    assert store.log.mark_not_run(run_id, "not-run", "stop", "stopped") == 2
    assert store.log.report_stamp(run_id) != stamp  # the cases alone changed
    first = store.ledger.add_override(run_id, "c1", "regressed", "lost a step", "ann", "equivalent")
    assert (
        store.ledger.add_override(run_id, "c1", "equivalent", "", "bo", "equivalent", action="agree") > first
    )
    assert store.ledger.reviewed(run_id)["c1"]["reviewer"] == "bo"
    assert [r["reviewer"] for r in store.ledger.override_history(run_id, "c1")] == ["ann", "bo"]
    assert store.ledger.aa_counts() == [] and store.ledger.check_witness_counts() == []


def test_a_call_claimed_by_a_live_run_is_refused_a_dead_runs_is_taken(store):
    """A claim on a runner call: a live run's holds (another run waits), the run's own is taken again,
    a released one is free, and one whose run's process died goes to the first run that asks."""
    import subprocess
    import sys

    from abeq.results.store.liveness import owner_id
    from abeq.results.store.rows import RunRow

    doc = store.inputs.put_document("a.md", "text")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead_owner = f"{owner_id().rpartition(':')[0]}:{gone.pid}"
    a, b, c = (
        store.log.create_run(
            RunRow(review_id=None, round=1, config_key=k, original_hash=doc, candidate_hash=doc)  # type: ignore[typeddict-item]
        )
        for k in "abc"
    )
    for run in (a, b):
        store.log.claim_run(run, owner_id())
    store.log.claim_run(c, dead_owner)
    assert store.cache.claim("k1", a, owner_id())
    assert not store.cache.claim("k1", b, owner_id())  # a runs: b waits for its result
    assert store.cache.claim("k1", a, owner_id())  # its own
    store.cache.release("k1", b)  # not b's to release
    assert not store.cache.claim("k1", b, owner_id())
    store.cache.release("k1", a)
    assert store.cache.claim("k1", b, owner_id())
    assert store.cache.claim("k2", c, dead_owner)
    assert store.cache.claim("k2", a, owner_id())  # c's process is gone: a takes it over
    assert not store.cache.claim("k2", b, owner_id())
    assert store.sql.one("select run_id from claims where key = ?", ["k2"])["run_id"] == a
