"""The progress line fits where it is printed: redrawn in place in a terminal, plain and sparse in a log."""

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import zygote
from conftest import ROOT, run_argv

from abeq.cli._progress import LOG_GAP, Bar, describe, is_terminal

COLS = 100


def progress(done, total=10, **extra):
    return {"done": done, "total": total, "runner_done": 2 * done, "runner_needed": 2 * total,
            "judge_done": done, "judge_needed": total, "cached": 0, "failed_calls": 0,
            "elapsed": float(done), "eta": 3.0, **extra}  # fmt: skip


def abeq_stderr(argv, tmp_path, terminal: bool, **env) -> bytes:
    """What `abeq ARGV` writes to stderr: a pseudo-terminal COLS wide, or a pipe."""
    env = {**{k: v for k, v in os.environ.items() if k != "CI"}, "PYTHONPATH": str(ROOT), **env}
    cmd = [sys.executable, "-m", "abeq", *argv]
    if not terminal:
        done = zygote.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, timeout=300)
        return done.stderr
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, COLS, 0, 0))
    proc = zygote.popen(cmd, stdout=subprocess.DEVNULL, stderr=follower, env=env, cwd=tmp_path)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(300)
    os.close(leader)
    return out


def test_in_a_terminal_the_line_is_redrawn_with_a_real_carriage_return(tmp_path):
    err = abeq_stderr(run_argv(db=tmp_path / "a.db", quiet=False), tmp_path, terminal=True).decode()
    assert "\\x0d" not in err  # the old bar's frames came out escaped, four characters each
    frames = [f for f in err.replace("\r\n", "\n").split("\r") if f.startswith("[")]
    assert frames and "7/7 cases" in frames[-1]
    assert all(len(f.split("\n")[0]) < COLS for f in frames)  # never wraps, so \r redraws all of it


def test_piped_it_is_plain_lines_and_few(tmp_path):
    err = abeq_stderr(run_argv(db=tmp_path / "a.db", quiet=False), tmp_path, terminal=False).decode()
    assert "\r" not in err
    lines = [line for line in err.splitlines() if line.startswith("progress: ")]
    assert lines and "7/7 cases" in lines[-1]
    took = float(re.search(r" · (\d+)s", lines[-1]).group(1))
    assert len(lines) <= 2 + took / LOG_GAP  # the first, the last, and at most one per LOG_GAP between


def test_ci_and_dumb_terminals_get_the_log_lines_even_on_a_terminal(monkeypatch):
    leader, follower = pty.openpty()
    with open(follower, "w") as terminal:
        monkeypatch.delenv("CI", raising=False)
        monkeypatch.setenv("TERM", "xterm")
        assert is_terminal(terminal)
        monkeypatch.setenv("CI", "true")
        assert not is_terminal(terminal) and not Bar(False, stream=terminal).terminal
        monkeypatch.setenv("CI", "false")
        assert is_terminal(terminal)
        monkeypatch.setenv("TERM", "dumb")
        assert not is_terminal(terminal)
    os.close(leader)
    assert not is_terminal(io.StringIO())


def test_a_log_line_comes_every_tenth_or_while_quiet_at_most_every_few_seconds():
    out, now = io.StringIO(), [0.0]
    bar = Bar(False, stream=out, clock=lambda: now[0], terminal=False)
    times = []
    for i in range(1, 101):  # 100 steps of 1%, half a second apart
        now[0] = i * 0.5
        before = out.getvalue().count("\n")
        bar(progress(i, total=100))
        if out.getvalue().count("\n") > before:
            times.append(now[0])
    gaps = [b - a for a, b in zip(times, times[1:-1])]  # the last line always comes
    assert all(g >= LOG_GAP for g in gaps) and 8 <= len(times) <= 12
    assert "progress: 100%" in out.getvalue().splitlines()[-1] and "\r" not in out.getvalue()

    slow, now[0] = io.StringIO(), 0.0  # a step of 1% a minute: a line anyway, each time
    bar = Bar(False, stream=slow, clock=lambda: now[0], terminal=False)
    for i in range(1, 4):
        now[0] = i * 60.0
        bar(progress(i, total=100))
    assert slow.getvalue().count("\n") == 3


def test_untrusted_text_in_the_line_stays_escaped_in_a_terminal_and_a_log():
    sneaky = progress(3, throttle="rate limited \x1b]52;c;cGF3bmVk\x07 by \r\x1b[2Kprovider")
    assert "\\x1b]52;c;cGF3bmVk\\x07 by \\x0d\\x1b[2K" in describe(sneaky)
    for terminal in (True, False):
        out = io.StringIO()
        bar = Bar(False, stream=out, terminal=terminal)
        bar(progress(1))
        bar(sneaky)
        bar.close()
        text = out.getvalue()
        assert "\x1b" not in text and "\x07" not in text  # never sent raw, cut or not
        assert text.count("\r") == (text.count("\r[") if terminal else 0)  # only the redraws


def test_quiet_draws_nothing():
    out = io.StringIO()
    Bar(True, stream=out, terminal=True)(progress(10))
    assert out.getvalue() == ""
