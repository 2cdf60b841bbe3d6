"""Issue 44 items 2, 3 and 5: trusted code never runs where it could read abeq's keys unless the
person said so (--unsandboxed), and its bounds hold as root: processes, disk, and a killed abeq."""

import json
import os
import signal
import subprocess
import sys
import time

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


# ------------------------------------------------------------------------------- bounds as root
FORKS = (
    "import os, time\n"
    "n = 0\n"
    "for _ in range(200):\n"
    "    try:\n"
    "        pid = os.fork()\n"
    "    except OSError:\n"
    "        break\n"
    "    if pid == 0:\n"
    "        time.sleep(1)\n"
    "        os._exit(0)\n"
    "    n += 1\n"
    "return n"
)


@needs_bwrap
def test_forks_are_bounded_even_as_root():
    n = scripts.run("python", FORKS, "", ctx())
    assert n <= scripts.MORE_PROCESSES + 2  # of 200 asked for (as root before: 200)


WRITE_600 = (
    "for i in range(10):\n"
    "    with open(f'f{i}', 'wb') as f:\n"
    "        f.write(b'x' * (60 * 1024 * 1024))\n"
    "return 'wrote 600 MiB'"
)


@needs_bwrap
def test_a_script_writing_600_mib_is_stopped_at_its_folders_total():
    with pytest.raises(scripts.ScriptError, match="256 MiB"):
        scripts.run("python", WRITE_600, "", ctx())


WRITE_80_JS = (
    "const fs = require('fs');\n"
    "for (let i = 0; i < 10; i++) fs.writeFileSync('f' + i, Buffer.alloc(8 * 1024 * 1024, 120));\n"
    "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);\n"
    "return 'wrote 80 MiB'"
)


def test_outside_bubblewrap_the_folders_total_is_watched(monkeypatch):
    monkeypatch.setattr(scripts, "DISK_BYTES", 32 * 1024 * 1024)
    with pytest.raises(scripts.ScriptError, match="32 MiB"):
        scripts.run(
            "javascript", WRITE_80_JS, "", ctx(), sandbox=scripts.Sandbox(use_bwrap=False, unsandboxed=True)
        )


HARNESS = r"""
import subprocess, sys
from abeq.execution.checks import scripts
scripts._bwrap()  # probed before Popen is watched: the pid printed is the script's
real = subprocess.Popen
class Shown(real):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        print(self.pid, flush=True)
subprocess.Popen = Shown
code = (
    "require('child_process').spawn('sleep', ['60']);\n"
    "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);\nreturn 1"
)
box = scripts.Sandbox(use_bwrap=sys.argv[1] == "1", unsandboxed=True)
scripts.run("javascript", code, "", {}, sandbox=box)
"""


def _tree(pid: int) -> set[int]:
    """pid and every process below it, now."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        out.add(p)
        todo += kids.get(p, [])
    return out


def _alive(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("bwrap", [True, False], ids=["bubblewrap", "limits"])
def test_a_killed_abeq_leaves_no_script_behind(bwrap):
    if bwrap and not BWRAP:
        pytest.skip("no working bubblewrap on this machine")
    abeq = subprocess.Popen(
        [sys.executable, "-c", HARNESS, "1" if bwrap else "0"], stdout=subprocess.PIPE, text=True
    )
    pid = int(abeq.stdout.readline())
    time.sleep(1.5)  # the script has started its own child by now
    below = _tree(pid)
    assert len(below) >= 2
    abeq.send_signal(signal.SIGKILL)
    abeq.wait()
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in below) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in below if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    # outside bubblewrap the script dies with abeq; a child it started may outlive it (documented)
    assert not left if bwrap else pid not in left


# ------------------------------------------------------------------------------- the trust file
@pytest.mark.parametrize("kind", ["folder", "malformed", "unreadable"])
def test_a_bad_trust_file_is_exit_2_naming_it(tmp_path, monkeypatch, capsys, kind):
    path = tmp_path / "trust"
    if kind == "folder":
        path.mkdir()
    else:
        path.write_text("{not json" if kind == "malformed" else json.dumps({"trusted": []}))
        path.chmod(0o600)
    if kind == "unreadable":
        if ROOT:
            pytest.skip("root reads any file")
        path.chmod(0)
    monkeypatch.setenv("ABEQ_TRUST_FILE", str(path))
    data = json.loads((EXAMPLE / "transfer-set.json").read_text())
    data["cases"][0]["assertions"].append({"type": "python", "value": "True"})
    ts = tmp_path / "set.json"
    ts.write_text(json.dumps(data))
    argv = ["check-set", "--original", str(EXAMPLE / "SKILL.md"), "--transfer-set", str(ts)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err
