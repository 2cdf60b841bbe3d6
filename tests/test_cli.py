"""The CLI: exit codes, reports on disk, and the bad-input matrix (exit 2, nothing stored)."""

import gc
import json
import shutil
import subprocess
import sys

import jsonschema
import pytest
from conftest import EXAMPLE

from abeq.cli import main
from abeq.schemas import ReportFile


def args(tmp_path, **over):
    a = {
        "--original": str(EXAMPLE / "SKILL.md"),
        "--candidate": str(EXAMPLE / "candidate-lossy.md"),
        "--transfer-set": str(EXAMPLE / "transfer-set.json"),
        "--runner-model": "scripted/rules",
        "--db": str(tmp_path / "abeq.db"),
    }
    a.update(over)
    out = ["run"]
    for k, v in a.items():
        out += [k] if v is True else [k, v]
    return out


def test_run_writes_the_report_and_exits_1_on_regression(tmp_path):
    out = tmp_path / "report.json"
    code = main(args(tmp_path, **{"--confirm": True, "--out": str(out), "--quiet": True}))
    assert code == 1
    rep = json.loads(out.read_text())
    assert rep["summary"]["regressions"] == 7 and rep["errors"] == []
    # the published schema, closed: nothing undeclared (tests/test_report_file.py)
    jsonschema.validate(rep, ReportFile.model_json_schema(by_alias=True))


def test_run_exits_0_when_faithful(tmp_path):
    code = main(
        args(
            tmp_path,
            **{
                "--candidate": str(EXAMPLE / "candidate-faithful.md"),
                "--confirm": True,
                "--out": str(tmp_path / "r.json"),
                "--quiet": True,
            },
        )
    )
    assert code == 0


def test_unconfirmed_set_is_refused_without_confirm(tmp_path, capsys):
    assert main(args(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "not confirmed" in err and "--confirm" in err
    assert not (tmp_path / "abeq.db").exists()


def _bad(tmp_path, name, content: bytes):
    p = tmp_path / name
    p.write_bytes(content)
    return str(p)


def _case_set(**change):
    ts = json.loads((EXAMPLE / "transfer-set.json").read_text())
    ts["cases"][1].update(change)
    return json.dumps(ts).encode()


BAD = {
    "missing original": ("--original", None, "not found"),
    "empty document": ("--original", ("SKILL.md", b"  \n"), "empty"),
    "binary document": ("--candidate", ("c.md", b"abc\x00\x01\x02"), "binary"),
    "non-utf8 document": ("--candidate", ("c.md", "café".encode("latin-1")), "UTF-8"),
    "huge document": ("--original", ("big.md", b"x" * 300_000), "limit"),
    "malformed json": ("--transfer-set", ("ts.json", b'{"cases": [ {"id": "a",'), "malformed JSON"),
    "duplicate ids": ("--transfer-set", ("ts.json", _case_set(id="happy-1")), "duplicate case id 'happy-1'"),
    "unknown type": ("--transfer-set", ("ts.json", _case_set(type="nasty")), "type"),
    "missing input": ("--transfer-set", ("ts.json", _case_set(input="")), "input"),
    "unknown field": ("--transfer-set", ("ts.json", _case_set(colour="red")), "colour"),
    "empty set": ("--transfer-set", ("ts.json", b'{"cases": []}'), "no cases"),
}


@pytest.mark.parametrize("label", list(BAD))
def test_bad_input_exits_2_names_the_file_and_stores_nothing(tmp_path, capsys, label):
    flag, content, needle = BAD[label]
    # An existing database must come out byte for byte the same.
    db = tmp_path / "abeq.db"
    main(args(tmp_path, **{"--confirm": True, "--quiet": True, "--out": str(tmp_path / "r.json")}))
    # the run's sqlite connection is freed by the garbage collector (sqlite3 keeps a reference
    # cycle), and its close checkpoints the WAL into the file: let that happen before the snapshot
    gc.collect()
    before = db.read_bytes()
    path = str(tmp_path / "nope.md") if content is None else _bad(tmp_path, *content)
    code = main(args(tmp_path, **{flag: path, "--confirm": True, "--quiet": True}))
    err = capsys.readouterr().err
    assert code == 2
    assert path in err and needle.lower() in err.lower()
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 3
    assert db.read_bytes() == before


def test_help_is_fast_and_lists_commands():
    out = subprocess.run([sys.executable, "-m", "abeq", "--help"], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0 and "run" in out.stdout and "check-set" in out.stdout
    # litellm must not be imported just to print help.
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, abeq.cli; abeq.cli.build_parser(); print('litellm' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert probe.stdout.strip() == "False"


def test_every_command_and_option_has_help():
    parser = __import__("abeq.cli", fromlist=["build_parser"]).build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    one_line = {h.dest: h.help for h in sub._choices_actions}
    for name, p in sub.choices.items():
        assert one_line.get(name), f"{name} has no one-line help"
        for action in p._actions:
            if action.dest != "help":
                assert action.help, (
                    f"abeq {name} {'/'.join(action.option_strings) or action.dest} has no help"
                )


CONSOLE_SCRIPT = shutil.which("abeq", path=str(__import__("pathlib").Path(sys.executable).parent))


@pytest.mark.skipif(
    CONSOLE_SCRIPT is None, reason="the abeq console script is not installed beside this Python"
)
def test_console_script_exit_code(tmp_path):
    exe = CONSOLE_SCRIPT
    out = subprocess.run(
        [exe, *args(tmp_path, **{"--quiet": True})], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2 and "not confirmed" in out.stderr
