"""Issue 49 item 7: a team store that cannot be reached says so in one line within seconds (no pool
retrying for 15 s, no repeated driver lines), and `abeq runs` lists the runs of a store, those made
without --review too."""

from __future__ import annotations

import json
import logging
import socket
import time
from urllib.parse import urlsplit

import pytest

from abeq.cli import main


def _open(url: str, caplog) -> tuple[str, float]:
    """Open the store at `url` as every command does: its message, and how long opening took (the
    process's start is left out: on a loaded machine it is most of a command's time)."""
    from abeq.errors import InputError
    from abeq.results.store.store import open_store

    t = time.monotonic()
    with caplog.at_level(logging.INFO), pytest.raises(InputError) as e:
        open_store(url)
    return e.value.render(), time.monotonic() - t


def test_a_wrong_password_is_one_message_within_seconds(pg_db, caplog):
    pw = urlsplit(pg_db).password
    said, took = _open(pg_db.replace(pw, "not-the-password"), caplog)
    assert took < 5, took
    assert "password authentication failed" in said and pw not in said
    assert not [r for r in caplog.records if r.name.startswith("psycopg")]  # no pool retrying, logging


def test_a_server_that_is_down_is_one_message_within_seconds(caplog):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    said, took = _open(f"postgresql://abeq:pw@127.0.0.1:{port}/abeq", caplog)
    assert took < 5, took
    assert "cannot reach the PostgreSQL store" in said
    assert not [r for r in caplog.records if r.name.startswith("psycopg")]


def test_runs_lists_every_run_with_and_without_a_review(run_args, tmp_path, capsys):
    db = str(tmp_path / "abeq.db")
    assert main(run_args(db=db)) in (0, 1)
    assert main(run_args(db=db, review="tour")) in (0, 1)
    capsys.readouterr()
    assert main(["runs", "--db", db, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["run"] for r in rows] == [2, 1]  # newest first
    assert [r["review"] for r in rows] == ["tour", None]
    assert rows[0]["original"].endswith("SKILL.md") and rows[0]["status"] == "finished"
    assert main(["runs", "--db", db, "--review", "tour"]) == 0
    out = capsys.readouterr().out
    assert "tour" in out and "(no review)" not in out
    assert main(["runs", "--db", db, "--review", "nope"]) == 2
    assert "no review named 'nope'" in capsys.readouterr().err
