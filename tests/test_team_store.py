"""A team's store on PostgreSQL: `--db postgresql://…` reaches the server (never a local file), its
password shows nowhere, and a store copied between backends rebuilds every report byte for byte."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from abeq.cli import main
from abeq.models.http import redact
from abeq.results.store import postgres
from abeq.results.store.store import Store


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


def test_an_sslpassword_shows_in_no_message(pg_db, capsys):
    """A message naming the store (here: no such run) names it without the sslpassword= option's value."""
    key = "client-key-passphrase-" + "k9" * 6
    url = f"{pg_db}?sslpassword={key}"
    assert main(["export", "999", "--db", url]) == 2
    err = capsys.readouterr().err
    assert "no run 999" in err and "sslpassword=***" in err and key not in err


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
    assert postgres.secrets("postgres://h/db?user=ann&password=s3cret") == ["s3cret"]


def test_every_password_option_of_a_url_is_hidden_where_it_is_shown_or_logged():
    """libpq reads sslpassword= (a client key's passphrase) too, and any *password* option is one:
    before, postgres.redacted and the crash log's redactor kept sslpassword= in clear."""
    url = "postgresql://ann:pw-one@h/db?sslmode=verify-full&sslpassword=k3y-two&X_Password_3=th%2Bree"
    assert postgres.redacted(url) == (
        "postgresql://ann:***@h/db?sslmode=verify-full&sslpassword=***&X_Password_3=***"
    )
    assert postgres.secrets(url) == ["th%2Bree", "k3y-two", "pw-one", "th+ree"]
    logged = redact(f"abeq stats --db {url}\nOperationalError: cannot open {url.replace('ann:pw-one@', '')}")
    for value in ("pw-one", "k3y-two", "th%2Bree"):
        assert value not in logged
    assert "sslmode=verify-full&sslpassword=[redacted]" in logged


def test_db_copy_moves_a_store_to_postgresql_and_back_byte_for_byte(pg_db, run_args, tmp_path, capsys):
    """Runs of two rounds with reviewer actions and a re-run from the cache, copied sqlite ->
    PostgreSQL -> sqlite: every export of every run is the same bytes from all three."""
    lite = str(tmp_path / "a.db")
    assert main(run_args(db=lite, candidate="candidate-lossy.md", review="rv")) == 1
    assert main(["override", "1", "happy-1", "--verdict", "equivalent", "--reason", "ok", "--db", lite]) in (
        0,
        2,
    )
    assert main(["agree", "1", "edge-1", "--reviewer", "ann", "--db", lite]) == 0
    assert main(run_args(db=lite, candidate="candidate-faithful.md", review="rv")) == 0
    assert main(run_args(db=lite, candidate="candidate-lossy.md", review="rv")) == 1  # from the cache
    capsys.readouterr()
    assert main(["db", "copy", lite, pg_db]) == 0
    said = capsys.readouterr()
    assert "verified: the report and record of each of 3 runs are byte-identical" in said.out
    assert urlsplit(pg_db).password not in said.out + said.err
    back = str(tmp_path / "back.db")
    assert main(["db", "copy", pg_db, back]) == 0
    for run_id in (1, 2, 3):
        exported = []
        for db in (lite, pg_db, back):
            out = tmp_path / f"{run_id}-{len(exported)}"
            assert main(
                [
                    "export",
                    str(run_id),
                    "--db",
                    db,
                    "--out",
                    f"{out}.json",
                    "--markdown",
                    f"{out}.md",
                    "--csv",
                    f"{out}.csv",
                    "--record",
                    f"{out}.rec.json",
                ]
            ) in (0, 1)
            exported.append(
                [
                    (tmp_path / f"{out.name}{ext}").read_bytes()
                    for ext in (".json", ".md", ".csv", ".rec.json")
                ]
            )
        assert exported[0] == exported[1] == exported[2]
    # a new run on the copy gets a new id (the ids continue), and a copy into a used store is refused
    assert Store(pg_db).log.create_run({"config_key": "k"}) == 4  # type: ignore[typeddict-item]
    assert main(["db", "copy", lite, pg_db]) == 2
    assert "not empty" in capsys.readouterr().err


def test_db_merge_makes_one_whole_run_of_the_shards_sqlite_files(run_args, tmp_path, capsys):
    """Three shards ran into three files (no shared store): merged, the run is finished and its report
    is an unsharded run's; a merge missing a share leaves the run unfinished and says so."""
    shards = [str(tmp_path / f"s{k}.db") for k in (1, 2, 3)]
    for k, db in enumerate(shards, 1):
        assert main(run_args(db=db, candidate="candidate-lossy.md", shard=f"{k}/3")) == 0  # a share: exit 0
    assert (
        main(run_args(db=tmp_path / "whole.db", candidate="candidate-lossy.md", out=tmp_path / "w.json")) == 1
    )
    capsys.readouterr()
    assert main(["db", "merge", str(tmp_path / "part.db"), *shards[:2]]) == 0
    assert "finished: none" in capsys.readouterr().out
    merged = str(tmp_path / "merged.db")
    assert main(["db", "merge", merged, *shards]) == 0
    assert "finished: [1]" in capsys.readouterr().out
    [run] = Store(merged).log.runs()
    assert run["status"] == "finished" and Store(merged).log.made_calls_by_kind(1)["runner-teacher"] == 7
    assert main(["export", "1", "--db", merged, "--out", str(tmp_path / "m.json")]) == 0
    m, w = (json.loads((tmp_path / f).read_text()) for f in ("m.json", "w.json"))
    assert m["summary"] == w["summary"] and [c["verdict"] for c in m["cases"]] == [
        c["verdict"] for c in w["cases"]
    ]
