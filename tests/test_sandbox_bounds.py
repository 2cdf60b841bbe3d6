"""Issue 44 item 2: trusted code never runs where it could read abeq's keys unless the person said
so (--unsandboxed)."""

import json
import os

import pytest
from conftest import EXAMPLE

from abeq.cli import main
from abeq.execution.checks import scripts

KEY = "sk-proj-" + "K" * 40  # shaped like an OpenAI key
ROOT = os.geteuid() == 0
BWRAP = scripts.sandbox_level() == "bubblewrap"
needs_bwrap = pytest.mark.skipif(not BWRAP, reason="no working bubblewrap on this machine")
# reads the environment of the process that started it (abeq) and hands it back reversed, so that
# no redaction of the key as such can catch it: the attack of issue 44
STEAL_JS = (
    "const fs = require('fs');\n"
    "let e = '';\n"
    "try { e = fs.readFileSync('/proc/' + process.ppid + '/environ', 'utf8'); } catch (x) { e = 'denied'; }\n"
    "e = e.split('\\0').filter((v) => v.startsWith('OPENAI_API_KEY=') || v === 'denied').join(' ');\n"
    "return {pass: true, reason: e.split('').reverse().join('')};"
)


def ctx():
    return {"prompt": "", "vars": {}, "test": {}, "config": {}, "providerResponse": {}}


@pytest.fixture
def no_bwrap(tmp_path, monkeypatch):
    """A machine where bubblewrap fails (a `bwrap` that exits 1 first on PATH)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    scripts._probe.cache_clear()
    scripts._bwrap.cache_clear()
    yield
    monkeypatch.undo()
    scripts._probe.cache_clear()
    scripts._bwrap.cache_clear()


@pytest.fixture
def stealing_set(tmp_path):
    data = json.loads((EXAMPLE / "transfer-set.json").read_text())
    data["cases"] = data["cases"][:1]
    data["cases"][0]["assertions"].append({"type": "javascript", "value": STEAL_JS})
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data, indent=2))
    return path


def run(tmp_path, ts, *extra):
    return main(
        [
            "run",
            "--original",
            str(EXAMPLE / "SKILL.md"),
            "--candidate",
            str(EXAMPLE / "candidate-faithful.md"),
        ]
        + ["--transfer-set", str(ts), "--db", str(tmp_path / "abeq.db"), "--confirm", "--quiet"]
        + [
            "--runner-model",
            "scripted/rules",
            "--record",
            str(tmp_path / "record.json"),
            "--allow-thin",
            *extra,
        ]
    )


def test_without_a_sandbox_trusted_code_is_refused_naming_bubblewrap(
    tmp_path, stealing_set, no_bwrap, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert run(tmp_path, stealing_set, "--trust-code") == 2
    err = capsys.readouterr().err
    assert "without a sandbox" in err and "apt-get install bubblewrap" in err and "--unsandboxed" in err
    assert not (tmp_path / "record.json").exists()


@pytest.mark.skipif(
    not ROOT, reason="as a user, unsandboxed code can read that user's processes (documented)"
)
def test_unsandboxed_as_root_the_script_is_nobody_and_reads_no_key(
    tmp_path, stealing_set, no_bwrap, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    run(tmp_path, stealing_set, "--trust-code", "--unsandboxed")
    err = capsys.readouterr().err
    assert "UNSANDBOXED" in err
    record = (tmp_path / "record.json").read_text()
    assert KEY[::-1] not in record and KEY not in record
    assert "deined" in record


def test_a_script_cannot_run_without_a_sandbox_unless_allowed(no_bwrap):
    with pytest.raises(scripts.ScriptError, match="was not run: bubblewrap .* cannot make a sandbox"):
        scripts.run("javascript", "true", "", ctx())
