"""A team's store on PostgreSQL: `--db postgresql://…` reaches the server (never a local file), its
password shows nowhere, and a store copied between backends rebuilds every report byte for byte."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from abeq.cli import main
from abeq.results import postgres
from abeq.results.store import Store


def _everything_stored(url: str) -> str:
    """Every value of every table of the store, as text."""
    s = Store(url)
    return json.dumps([s.sql.all(f'select * from "{t}"') for t in s.sql.table_names()], default=str)


def test_a_postgresql_url_is_the_server_not_a_local_folder(pg_db, run_args, tmp_path, monkeypatch, capsys):
    """Before, `--db postgresql://…` made a sqlite file under ./postgresql: and the team shared nothing."""
    monkeypatch.chdir(tmp_path)
    assert main(run_args(db=pg_db, out=tmp_path / "r.json")) == 0
    assert not (tmp_path / "postgresql:").exists() and not list(tmp_path.glob("postgres*"))
    runs = Store(pg_db).log.runs()
    assert len(runs) == 1 and runs[0]["status"] == "finished"
    monkeypatch.setenv("ABEQ_DB", pg_db)  # the environment's store, for a command without --db
    capsys.readouterr()
    assert main(["export", str(runs[0]["id"])]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((tmp_path / "r.json").read_text())


def test_the_password_shows_nowhere(pg_db, run_args, tmp_path, capsys):
    pw = urlsplit(pg_db).password
    assert pw and len(pw) > 12
    rec = tmp_path / "rec.json"
    assert main(run_args(db=pg_db, out=tmp_path / "r.json", record=rec, quiet=False)) == 0
    assert main(["export", "1", "--db", pg_db, "--markdown", str(tmp_path / "r.md")]) == 0
    assert main(["stats", "--db", pg_db, "--json"]) == 0
    said = capsys.readouterr()
    for text in (
        said.out,
        said.err,
        rec.read_text(),
        (tmp_path / "r.json").read_text(),
        _everything_stored(pg_db),
    ):
        assert pw not in text
    assert pw not in Store(pg_db).path and "***" in Store(pg_db).path
    # a wrong password: refused in one message that names the server without either password
    wrong = pg_db.replace(pw, "not-the-" + pw[:6])
    assert main(["stats", "--db", wrong]) == 2
    err = capsys.readouterr().err
    assert "PostgreSQL" in err and pw not in err and pw[:6] not in err and "***" in err


def test_tls_and_other_options_pass_through(pg_db):
    """A URL's query (sslmode=…, sslrootcert=…) reaches libpq as it is: here the loopback server has
    no TLS, so sslmode=require is refused by it, and sslmode=disable connects."""
    assert Store(pg_db + "?sslmode=disable&application_name=abeq-test").log.runs() == []
    with pytest.raises(Exception, match="SSL"):
        Store(pg_db + "?sslmode=require")


@pytest.mark.parametrize("db", ["mysql://root:hunter2secret@db.example/abeq", "https://example.com/abeq.db"])
def test_a_url_of_another_kind_is_refused(db, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["stats", "--db", db]) == 2
    err = capsys.readouterr().err
    assert "is not a store abeq can open" in err and "hunter2secret" not in err
    assert list(tmp_path.iterdir()) == []


def test_redacted_hides_the_password_wherever_the_url_holds_it():
    assert postgres.redacted("postgresql://ann:s3cret@h:5432/db?sslmode=verify-full") == (
        "postgresql://ann:***@h:5432/db?sslmode=verify-full"
    )
    assert (
        postgres.redacted("postgres://h/db?user=ann&password=s3cret")
        == "postgres://h/db?user=ann&password=***"
    )
    assert postgres.password("postgres://h/db?user=ann&password=s3cret") == "s3cret"
