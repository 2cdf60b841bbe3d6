"""Files abeq writes land where the user meant, as regular files of theirs (issue 33, item 3): no
write through a link another user planted, nor into their FIFO, nor over their file; a database
someone else owns or can write is refused unless --db-shared."""

from __future__ import annotations

import os
import threading

import pytest

from abeq.calibration.suite import load_suite, write_suite
from abeq.cli import main, write_output
from abeq.errors import InputError
from abeq.results.store.store import Store, open_store

OTHER = 65534  # nobody: another user, as far as ownership goes
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def planted_link(link, target):
    link.symlink_to(target)
    if os.geteuid() == 0:
        os.lchown(link, OTHER, OTHER)


def test_a_dangling_link_at_db_is_not_followed(tmp_path):
    elsewhere = tmp_path / "theirs" / "collected.db"
    elsewhere.parent.mkdir()
    link = tmp_path / "abeq.db"
    planted_link(link, elsewhere)
    with pytest.raises(InputError, match="link"):
        open_store(str(link))
    assert not elsewhere.exists()
    mine = tmp_path / "mine.db"
    mine.symlink_to(tmp_path / "nowhere.db")  # even the user's own: sqlite would create it over there
    with pytest.raises(InputError, match="does not exist"):
        Store(str(mine))
    assert not (tmp_path / "nowhere.db").exists()


@as_root
def test_a_database_another_user_made_is_refused_unless_shared(tmp_path, capsys):
    db = tmp_path / "abeq.db"
    Store(str(db)).close()
    os.chmod(db, 0o666)
    os.chown(db, OTHER, OTHER)
    assert main(["history", "example", "--db", str(db)]) == 2
    assert "owned by another user" in capsys.readouterr().err
    assert main(["history", "example", "--db", str(db), "--db-shared"]) in (0, 2)
    assert "owned by another user" not in capsys.readouterr().err


def test_a_database_others_can_write_is_refused(tmp_path, monkeypatch):
    db = tmp_path / "abeq.db"
    Store(str(db)).close()
    os.chmod(db, 0o666)
    with pytest.raises(InputError, match="written by others"):
        Store(str(db))
    monkeypatch.setenv("ABEQ_DB_SHARED", "1")
    Store(str(db)).close()


def test_out_never_writes_into_a_fifo(tmp_path):
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # someone listening: a write would not block
    try:
        with pytest.raises(InputError, match="not a regular file"):
            write_output(str(fifo), "every transcript")
        assert os.read(reader, 100) == b""
    finally:
        os.close(reader)


def test_stdout_and_dev_null_still_work(tmp_path, capsys):
    write_output("-", "to stdout")
    write_output("/dev/stdout", "again")
    write_output(os.devnull, "discarded")
    assert capsys.readouterr().out == "to stdout\nagain\n"


@as_root
def test_out_does_not_replace_another_users_file_or_follow_their_link(tmp_path):
    theirs = tmp_path / "theirs.json"
    theirs.write_text("theirs")
    os.chown(theirs, OTHER, OTHER)
    with pytest.raises(InputError, match="owned by another user"):
        write_output(str(theirs), "mine")
    secret = tmp_path / "root-only"
    secret.write_text("keep")
    os.chmod(secret, 0o600)
    planted_link(tmp_path / "report.json", secret)
    with pytest.raises(InputError, match="symbolic link owned by another user"):
        write_output(str(tmp_path / "report.json"), "mine")
    assert theirs.read_text() == "theirs" and secret.read_text() == "keep"


@as_root
def test_write_suite_does_not_follow_a_planted_link(tmp_path):
    secret = tmp_path / "root-only"
    secret.write_text("keep")
    out = tmp_path / "suite"
    out.mkdir()
    planted_link(out / "suite.json", secret)
    with pytest.raises(InputError, match="symbolic link"):
        write_suite(load_suite(), out)
    assert secret.read_text() == "keep"


def test_a_suite_written_over_a_links_name_replaces_the_link_not_its_target(tmp_path):
    """A link planted at the temporary or final name is never opened: the new file is renamed over it."""
    out = tmp_path / "suite"
    write_suite(load_suite(), out)
    assert load_suite(out).pairs == load_suite().pairs


def test_concurrent_writes_never_leave_half_a_file(tmp_path):
    target = tmp_path / "out.json"
    texts = [str(i) * 200_000 for i in range(4)]
    threads = [threading.Thread(target=write_output, args=(str(target), t)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_text() in texts
