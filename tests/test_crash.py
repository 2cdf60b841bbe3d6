"""An unexpected error is not a regression: exit 4 and one line naming the crash log, never exit 1."""

import os
import subprocess
import sys

import zygote
from conftest import EXAMPLE, ROOT

from abeq.cli import main

MUTATE = [
    "mutate",
    "--original",
    str(EXAMPLE / "SKILL.md"),
    "--transfer-set",
    str(EXAMPLE / "transfer-set.json"),
]


def _broken_mutation(monkeypatch, tmp_path):
    """What a wheel without abeq/mutation/ did: `abeq mutate` fails on an import."""
    monkeypatch.setitem(sys.modules, "abeq.mutation.run", None)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("ABEQ_DEBUG", raising=False)
    return MUTATE + ["--runner-model", "scripted/rules", "--confirm", "--db", str(tmp_path / "a.db")]


def test_a_crash_exits_4_and_says_where_the_traceback_went(monkeypatch, tmp_path, capsys):
    assert main(_broken_mutation(monkeypatch, tmp_path)) == 4
    err = capsys.readouterr().err
    (log,) = (tmp_path / "state" / "abeq" / "crashes").glob("crash-*.log")
    lines = err.strip().splitlines()
    assert lines[-1].startswith("abeq: unexpected error (ModuleNotFoundError") and str(log) in lines[-1]
    assert "Traceback" not in err  # the details are in the file, not on the screen
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "abeq mutate --original" in text
    assert log.stat().st_mode & 0o077 == 0  # paths and inputs in it: the user's alone


def test_abeq_debug_prints_the_traceback_too(monkeypatch, tmp_path, capsys):
    argv = _broken_mutation(monkeypatch, tmp_path)
    monkeypatch.setenv("ABEQ_DEBUG", "1")
    assert main(argv) == 4
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "unexpected error" in err.splitlines()[-1]


def test_a_crash_log_holds_no_secret(monkeypatch, tmp_path, capsys):
    argv = _broken_mutation(monkeypatch, tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-crash-0123456789abcdef0123456789")
    monkeypatch.setattr(
        "abeq.cli._crash.traceback.format_exception", lambda *a: ["sk-test-crash-0123456789abcdef0123456789"]
    )
    assert main(argv) == 4
    (log,) = (tmp_path / "state" / "abeq" / "crashes").glob("crash-*.log")
    assert "sk-test-crash" not in log.read_text() + capsys.readouterr().err


def test_a_closed_pipe_is_not_a_crash(tmp_path):
    """`abeq check-set … | head -0`: the reader is gone before abeq writes; no crash log, exit 141."""
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONPATH": str(ROOT)}
    argv = [
        "check-set",
        "--original",
        str(EXAMPLE / "SKILL.md"),
        "--transfer-set",
        str(EXAMPLE / "transfer-set.json"),
    ]
    proc = zygote.popen(
        [sys.executable, "-m", "abeq", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 141 and not (tmp_path / "state").exists(), err
    assert "Traceback" not in err and "Exception ignored" not in err


def test_a_crash_log_holds_no_password_option_of_a_store_url(monkeypatch, tmp_path, capsys):
    """The command line is in the log: a --db URL's sslpassword= (or any *password*) option is not.
    Before, sslpassword= was written in clear (only user:password@ was redacted)."""
    argv = _broken_mutation(monkeypatch, tmp_path)
    key = "client-key-passphrase-" + "z3" * 6
    argv[argv.index("--db") + 1] = f"postgresql://ann@127.0.0.1:1/team?sslpassword={key}&password=pw-{key}"
    assert main(argv) == 4
    (log,) = (tmp_path / "state" / "abeq" / "crashes").glob("crash-*.log")
    text = log.read_text()
    assert "--db postgresql://ann@127.0.0.1:1/team?sslpassword=[redacted]&password=[redacted]" in text
    assert key not in text + capsys.readouterr().err
