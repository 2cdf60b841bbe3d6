"""The sqlite store: migrations on a blank file, WAL, foreign keys, and the override audit trail."""

import sqlite3

import pytest

from abeq.results.migrations import migrations
from abeq.results.store import Store


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
    with pytest.raises(sqlite3.IntegrityError):
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
    ],
)
def test_each_typed_row_names_its_tables_columns(tmp_path, table, row_type):
    """The typed rows the store returns say what the migrated table holds: no column missing from
    the type, none in the type that the table lacks (beyond values the store adds when it reads)."""
    from abeq.results import rows

    path = tmp_path / "t.db"
    Store(str(path)).close()
    cols = {r[1] for r in sqlite3.connect(path).execute(f"pragma table_info({table})")}
    keys = set(getattr(rows, row_type).__annotations__)  # a TypedDict's own and its bases' keys
    added_on_read = {"RunRow": {"stored_status"}, "OverrideRow": {"carried_from"}}
    assert cols == keys - added_on_read.get(row_type, set())
