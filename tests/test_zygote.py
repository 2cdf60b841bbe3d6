"""tests/zygote.py forks the tests' abeq processes from a warm one: each forked child must behave as the
same command exec'd does (arguments, working folder, environment, streams, exit status, signals, the
interpreter's exit), and a real `abeq run` must give the same report either way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import zygote
from conftest import run_argv

HERE = Path(__file__).resolve().parent


def _both(what: str, tmp_path: Path, **kw) -> list[subprocess.CompletedProcess]:
    """`python -m zygote_probe what`, exec'd then forked, in `tmp_path` with PROBE and PYTHONPATH set."""
    args = [sys.executable, "-m", "zygote_probe", what]
    env = {**os.environ, "PROBE": "p-value", "PYTHONPATH": str(HERE)}
    out = []
    for make in (subprocess.Popen, zygote._Forked):
        with make(args, cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE, text=True) as p:  # fmt: skip
            o, e = p.communicate("from stdin\n" if what == "echo" else "", timeout=60)
        out.append(subprocess.CompletedProcess(args, p.returncode, o, e))
    return out


def _said(done: subprocess.CompletedProcess) -> tuple[dict, list[str]]:
    first, *rest = done.stdout.splitlines()
    said = json.loads(first)
    said.pop("pid"), said.pop("random")
    return said, rest


@pytest.mark.parametrize("what", ["echo", "exit3", "exit-text", "raise", "thread", "unflushed", "interrupt"])
def test_a_forked_process_is_the_exec_d_one(what, tmp_path):
    execd, forked = _both(what, tmp_path)
    assert forked.returncode == execd.returncode, (what, forked.stderr, execd.stderr)
    assert _said(forked) == _said(execd)
    assert forked.stderr == execd.stderr  # tracebacks, the SystemExit text, atexit's line
    said, _ = _said(forked)
    assert said["probe"] == "p-value" and said["cwd"] == str(tmp_path) and said["main"] == "__main__"
    assert said["pythonpath_first"] == str(HERE)
    if what == "echo":
        assert said["stdin"] == "from stdin\n"
    expected = {"exit3": 3, "exit-text": 1, "raise": 1, "interrupt": -signal.SIGINT}.get(what, 0)
    assert forked.returncode == expected


# SIGINT ends a Python process by KeyboardInterrupt unless its parent ignored SIGINT when it started
# it (xdist's workers do): either way the forked child must do what the exec'd one does.
_INTERRUPTED = "ignored" if signal.getsignal(signal.SIGINT) == signal.SIG_IGN else -signal.SIGINT


@pytest.mark.parametrize(
    "what,sig,code",
    [
        ("wait", signal.SIGTERM, -signal.SIGTERM),
        ("wait", signal.SIGKILL, -signal.SIGKILL),
        ("wait", signal.SIGINT, _INTERRUPTED),
        ("sigterm-handler", signal.SIGTERM, 5),
    ],
)
def test_a_signal_ends_a_forked_process_as_it_ends_an_exec_d_one(what, sig, code, tmp_path):
    args = [sys.executable, "-m", "zygote_probe", what]
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    for make in (subprocess.Popen, zygote._Forked):
        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
        with make(args, cwd=tmp_path, env=env, **pipes) as p:
            assert p.stdout.readline() and p.stdout.readline() == "waiting\n"
            assert p.poll() is None
            p.send_signal(sig)
            try:
                got = p.wait(timeout=10 if code == "ignored" else 30)
            except subprocess.TimeoutExpired:
                got = "ignored"
                p.kill()
            assert got == code, make


def test_each_forked_child_is_a_process_of_its_own(tmp_path):
    args = [sys.executable, "-m", "zygote_probe", "exit0"]
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    seen = [
        json.loads(zygote._Forked(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE).communicate()[0])
        for _ in range(2)
    ]
    pids = {s["pid"] for s in seen}
    assert len(pids) == 2 and os.getpid() not in pids and zygote._the_zygote().proc.pid not in pids
    assert seen[0]["random"] != seen[1]["random"]  # reseeded in each child


def test_a_forked_child_that_execs_python_m_streamlit_goes_on_in_place(tmp_path):
    """`abeq app` becomes its Streamlit server by exec'ing `python -m streamlit run …`; forked, that is run
    in the same process (no fresh interpreter) and must look as the exec does: the same output and exit
    status, and the atexit handler given before the exec never runs."""
    execd, forked = _both("exec", tmp_path)
    assert forked.returncode == execd.returncode == 0, (forked.stderr, execd.stderr)
    assert _said(forked) == _said(execd)
    assert _said(forked)[1] == [f"Streamlit, version {version('streamlit')}"]
    assert forked.stderr == execd.stderr == ""  # "atexit ran" only where the probe was not replaced


def test_only_python_m_abeq_or_streamlit_is_forked():
    assert zygote.forks([sys.executable, "-m", "abeq", "run"]) == "abeq"
    assert zygote.forks([sys.executable, "-m", "streamlit", "run", "x.py"]) == "streamlit"
    assert zygote.forks(["/other/python", "-m", "abeq"]) is None  # e.g. the wheel's own venv
    assert zygote.forks([sys.executable, "-c", "print(1)"]) is None
    assert zygote.forks(f"{sys.executable} -m abeq") is None


def test_a_forked_abeq_run_reports_what_an_exec_d_one_does(tmp_path):
    """The real command: the same example run, exec'd and forked, into two stores: the same exit
    status, the same report but for when it ran, the same output."""
    reports = []
    for i, make in enumerate((subprocess.Popen, zygote._Forked)):
        out = tmp_path / f"r{i}.json"
        argv = run_argv(db=tmp_path / f"s{i}.db", candidate="candidate-lossy.md", out=out)
        with make([sys.executable, "-m", "abeq", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                  text=True) as p:  # fmt: skip
            o, e = p.communicate(timeout=300)
        assert p.returncode == 1, e  # the lossy candidate regresses: the gate fails
        reports.append((json.loads(out.read_text()), o))
    (a, out_a), (b, out_b) = reports
    assert a["cases"] == b["cases"] and a["summary"] == b["summary"]
    assert out_a.replace(str(tmp_path / "r0.json"), "R") == out_b.replace(str(tmp_path / "r1.json"), "R")


def test_a_process_with_its_own_interpreter_settings_is_exec_d(tmp_path):
    """PYTHONWARNINGS (like PYTHONHASHSEED, PYTHONDEVMODE) acts when the interpreter starts, so a child
    that sets another value than the zygote's is exec'd: a warning it asks to see is shown."""
    args = [sys.executable, "-m", "zygote_probe", "resource-warning"]
    for warnings, shown in (("default", True), (None, False)):
        env = {**os.environ, "PYTHONPATH": str(HERE)}
        env.pop("PYTHONWARNINGS", None)
        if warnings:
            env["PYTHONWARNINGS"] = warnings
        p = zygote._Forked(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0 and ("probe resource warning" in err) is shown, err
        assert (p._conn is None) is shown  # exec'd when it must be, forked otherwise


def test_no_abeq_module_reads_the_environment_when_it_is_imported():
    """The zygote imports abeq under its own environment and its children inherit those modules, so a
    setting read at import would be the zygote's, not the child's. Every read is made when a command
    runs (inside a function): none at a module's or a class's top level."""
    import ast

    def reads_env(node: ast.AST) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(sub, ast.Attribute) and sub.attr in ("environ", "getenv", "environb"):
                return True
        return False

    def top_level(body):
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if isinstance(stmt, ast.ClassDef):
                yield from top_level(stmt.body)
            else:
                yield stmt

    found = []
    for path in sorted((HERE.parent / "abeq").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        found += [f"{path.relative_to(HERE.parent)}:{s.lineno}" for s in top_level(tree.body) if reads_env(s)]
    assert found == []
