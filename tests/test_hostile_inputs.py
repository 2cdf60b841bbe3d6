"""What a stranger's set, database or agent can throw at abeq ends in a message, not a traceback,
and nothing secret or raw reaches a file or a screen (issue 33, items 5 and 6)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import time

import pytest
from conftest import DESK_APP, EXAMPLE

from abeq.cli import main
from abeq.errors import InputError
from abeq.execution.runners.agent_cmd import RunnerCommandError, command_env, invoke
from abeq.execution.runners.modes import RunnerMode
from abeq.models.http import redact
from abeq.results.store.store import Store
from abeq.untrusted import csv_report_cell, md_escape


def check_set(*extra: str) -> list[str]:
    return ["check-set", "--original", str(EXAMPLE / "SKILL.md"), *extra]


# ------------------------------------------------------------------ JSON abeq cannot hold
def test_a_4400_digit_integer_in_a_json_set_is_named(tmp_path, capsys):
    data = json.loads((EXAMPLE / "transfer-set.json").read_text())
    text = json.dumps(data).replace('"cases"', '"n": ' + "9" * 4400 + ', "cases"', 1)
    p = tmp_path / "set.json"
    p.write_text(text)
    assert main(check_set("--transfer-set", str(p))) == 2
    err = capsys.readouterr().err
    assert str(p) in err and "number too long" in err


def test_a_lone_surrogate_in_a_set_or_an_assertions_file_is_named(tmp_path, capsys):
    data = json.loads((EXAMPLE / "transfer-set.json").read_text())
    text = json.dumps(data).replace('"input": "', '"input": "\\ud800 ', 1)
    (tmp_path / "set.json").write_text(text)
    assert main(check_set("--transfer-set", str(tmp_path / "set.json"))) == 2
    assert "\\ud800" in capsys.readouterr().err
    a = tmp_path / "assertions.json"
    a.write_text('["keeps the \\udc00 list", "fine"]')
    argv = ["compare", "--task", str(EXAMPLE / "SKILL.md"), "--a", str(EXAMPLE / "SKILL.md")]
    argv += ["--b", str(EXAMPLE / "candidate-lossy.md"), "--assertions", str(a), "--model", "scripted/rules"]
    assert main([*argv, "--out", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert str(a) in err and "half of a character" in err and "Traceback" not in err


def test_a_lone_surrogate_a_model_replies_is_replaced_before_anything_holds_it():
    assert redact('an "\ud800" half') == 'an "\ufffd" half'
    assert redact("plain ascii") == "plain ascii"


# ------------------------------------------------------------------ names a browser sends
@pytest.mark.parametrize("name", ["..", "a\x00b.yaml", "", "."])
def test_an_upload_named_dot_dot_or_with_nul_is_refused(name):
    from abeq.desk.editor import import_uploads

    config = b"prompts: ['{{q}}']\ntests:\n  - vars: {q: hi}\n"
    with pytest.raises(InputError, match="cannot be a file's"):
        import_uploads({"promptfooconfig.yaml": config, name: b"x"}, "promptfooconfig.yaml", "detect", "h")


def test_an_absolute_promptfoo_glob_is_followed_and_named(tmp_path, capsys):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "abs").mkdir()
    (tmp_path / "abs" / "t.yaml").write_text("- vars: {q: hello}\n  assert: [{type: contains, value: hi}]\n")
    cfg = tmp_path / "cfg" / "promptfooconfig.yaml"
    cfg.write_text(f"prompts: ['x {{{{q}}}}']\ntests: file://{tmp_path}/abs/*.yaml\n")
    out = tmp_path / "set.json"
    assert main(["import-set", str(cfg), "--out", str(out), "--default-type", "happy"]) == 0
    assert "outside the config's project" in capsys.readouterr().err and out.exists()


# ------------------------------------------------------------------ the database
def test_a_full_disk_says_so_and_leaves_the_run_resumable(tmp_path, monkeypatch, capsys, run_args):
    from abeq.results.store import connection

    db = tmp_path / "abeq.db"
    Store(str(db)).close()
    opened = connection.Connection.__init__

    def small_disk(self, *a, **kw):  # sqlite's own SQLITE_FULL, as a full disk gives it
        opened(self, *a, **kw)
        pages = self.db.conn.execute("pragma page_count").fetchone()[0]
        self.db.conn.execute(f"pragma max_page_count = {pages + 3}")

    monkeypatch.setattr(connection.Connection, "__init__", small_disk)
    argv = run_args(runner_model="scripted/rules", db=str(db))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is full" in err and str(db) in err and "Traceback" not in err
    monkeypatch.setattr(connection.Connection, "__init__", opened)
    assert main(argv) in (0, 1)  # space again: the same command resumes the run it left
    store = Store(str(db))
    assert [r["status"] for r in store.log.runs()] == ["finished"]


def test_a_damaged_database_is_checked_and_named(tmp_path, capsys):
    db = tmp_path / "abeq.db"
    Store(str(db)).close()
    with open(db, "r+b") as f:
        f.seek(4096 * 2)
        f.write(os.urandom(4096 * 3))
    assert main(["history", "example", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and "quick_check" in err and str(db) in err


def test_a_database_from_a_newer_abeq_is_refused_with_the_step_it_needs(tmp_path, capsys):
    db = tmp_path / "abeq.db"
    Store(str(db)).close()
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "insert into _sqlite_migrations (migration_set, name, applied_at) values "
            "('abeq', 'm099_from_the_future', '2030-01-01')"
        )
    conn.close()
    before = db.read_bytes()
    assert main(["history", "example", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "newer abeq" in err and "m099_from_the_future" in err
    assert db.read_bytes() == before


# ------------------------------------------------------------------ secrets by shape
def test_pgp_keys_aws_secrets_and_url_passwords_are_redacted():
    pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGXyz\n=ab12\n-----END PGP PRIVATE KEY BLOCK-----"
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    text = (
        f"key:\n{pgp}\nthen\n[default]\naws_secret_access_key = {aws}\n"
        f'{{"SecretAccessKey": "{aws}"}}\nsee https://bob:hunter2@example.com/x and '
        "postgres://app:s3cr%40t@db:5432/app; a plain http://example.com/a@b stays"
    )
    out = redact(text)
    assert "lQOYBGXyz" not in out and aws not in out and "hunter2" not in out and "s3cr" not in out
    assert "aws_secret_access_key = [redacted]" in out and "https://bob:[redacted]@example.com" in out
    assert "http://example.com/a@b stays" in out and out.endswith("stays")


# ------------------------------------------------------------------ raw escapes
def test_escape_bytes_never_reach_markdown_or_a_report_csv_raw():
    hostile = "\x1b]0;pwned\x07\x1b[2Jok\x9b31m"
    for out in (md_escape(hostile), md_escape(hostile, one_line=True), csv_report_cell(hostile)):
        assert not any(c in out for c in "\x1b\x07\x9b") and "x1b" in out


def test_exports_of_a_run_hold_no_raw_escape(tmp_path, run_args):
    db = tmp_path / "abeq.db"
    assert main(run_args(runner_model="scripted/rules", db=str(db))) in (0, 1)
    store = Store(str(db))
    note = "see \x1b]52;c;ZXZpbA==\x07 \x1b[31mred\x9b0m"  # a reviewer's note pasted from a terminal
    store.ledger.add_override(1, "edge-1", "candidate-regressed", note, "ann\x1b[2J", "candidate-regressed")
    store.close()
    md, csv = tmp_path / "r.md", tmp_path / "r.csv"
    assert main(["export", "1", "--db", str(db), "--markdown", str(md), "--csv", str(csv)]) in (0, 1)
    for f in (md, csv):
        data = f.read_text()
        assert "red" in data and not any(c in data for c in "\x1b\x07\x9b"), f.name


# ------------------------------------------------------------------ what a command leaves behind
def test_a_child_that_called_setsid_does_not_outlive_the_time_limit(tmp_path):
    """It left the command's process group, but not the environment mark abeq gave the command."""
    beat, pid = tmp_path / "beat", tmp_path / "pid"
    loop = f"echo $$ > {pid}; while :; do date +%s%N > {beat}; sleep 0.05; done"
    cmd = f"setsid sh -c '{loop}' </dev/null >/dev/null 2>&1 & sleep 30"
    try:
        with pytest.raises(RunnerCommandError, match="timed out"):
            asyncio.run(invoke(cmd, str(tmp_path), "", command_env(RunnerMode(), {}), timeout=1.0))
        time.sleep(0.3)
        first = beat.read_text()
        time.sleep(0.5)
        assert beat.read_text() == first  # nothing writes it any more
    finally:  # on old code: stop what it left
        try:
            os.kill(int(pid.read_text()), signal.SIGKILL)
        except (OSError, ValueError):
            pass


# ------------------------------------------------------------------ two desks, one set
def test_a_desk_saving_over_a_set_changed_elsewhere_is_warned_and_loses_nothing(db):
    from streamlit.testing.v1 import AppTest

    desks = []
    for _ in range(2):
        app = AppTest.from_file(str(DESK_APP), default_timeout=60)
        app.run()
        app.switch_page("desk_pages/2_transfer_set.py").run()
        desks.append(app)
    a, b = desks
    v0 = Store(db).inputs.review("example")["transfer_set_hash"]
    b_edit = {"edited_rows": {1: {"input": "B's edit"}}, "added_rows": [], "deleted_rows": []}
    a_edit = {"edited_rows": {0: {"input": "A's edit"}}, "added_rows": [], "deleted_rows": []}
    b.session_state[f"ts_editor_{v0}"] = b_edit
    b.run()
    a.session_state[f"ts_editor_{v0}"] = a_edit
    a.run()
    next(x for x in a.button if x.label == "Save edits").click().run()
    v1 = Store(db).inputs.review("example")["transfer_set_hash"]
    assert v1 != v0 and Store(db).inputs.transfer_set(v1).cases[0].input == "A's edit"

    b.run()  # B's next redraw: its edits are still there, and it is told
    assert any("saved elsewhere" in w.value for w in b.warning)
    assert any(w.value.startswith("Unsaved edits") for w in b.warning)
    save = next(x for x in b.button if x.label == "Save edits")
    assert save.disabled  # not over A's change without a word
    b.checkbox(key="ts_over_theirs").check().run()
    next(x for x in b.button if x.label == "Save edits").click().run()
    v2 = Store(db).inputs.review("example")["transfer_set_hash"]
    assert v2 not in (v0, v1) and Store(db).inputs.transfer_set(v2).cases[1].input == "B's edit"
