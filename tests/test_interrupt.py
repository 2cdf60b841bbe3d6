"""`abeq run` and Ctrl-C / SIGTERM, as a user meets them: no model call after the signal (counted at
a loopback server in its own process), exit 130, the run marked interrupted, and the same command
(or `abeq resume RUN_ID`) resumes it without repeating a finished call."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import zygote
from conftest import ROOT

from abeq.testing.process import LoopbackProcess
from abeq.testing.synthetic import example_run_args as cli_args
from abeq.testing.synthetic import write_set


def _ok_calls(db) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
            return c.execute("select count(*) from calls where cached = 0 and ok = 1").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


@pytest.mark.parametrize("sig, resume", [(signal.SIGINT, "same command"), (signal.SIGTERM, "abeq resume")])
def test_a_signal_stops_the_calls_exits_130_and_the_run_resumes(tmp_path, sig, resume):
    n = 4
    ts, db = write_set(tmp_path / "set.json", n), tmp_path / "abeq.db"
    with LoopbackProcess(latency=1.0) as srv:
        # one call at a time: right after a request arrives, the next can only start a second later,
        # so every request the server sees after the signal would be one the signal failed to stop
        cmd = [
            sys.executable,
            "-m",
            "abeq",
            *cli_args(ts, db, srv.url, "candidate-faithful.md", "--concurrency", "1", "--allow-thin"),
        ]
        proc = zygote.popen(cmd, cwd=str(ROOT), stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 90
        while _ok_calls(db) < 4 and time.time() < deadline:  # case 1 judged, case 2's teacher run done
            time.sleep(0.05)
        seen = srv.stats()["requests"]
        while srv.stats()["requests"] == seen and time.time() < deadline:  # the next call just went out
            time.sleep(0.01)
        at_signal = srv.stats()["requests"]
        assert proc.poll() is None, proc.communicate()[1]
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert "resume" in err
        time.sleep(1.5)  # a call started after the signal would have arrived by now
        after = srv.stats()
        assert after["requests"] == at_signal  # no call after the signal
        assert after["ok"] == at_signal - 1  # the one in flight was dropped, not awaited
        with sqlite3.connect(db) as c:
            (status,) = c.execute("select status from runs").fetchone()
            kept = c.execute("select count(*) from calls where cached = 0 and ok = 1").fetchone()[0]
        assert status == "interrupted" and kept == at_signal - 1

        srv.reset()
        if resume == "abeq resume":  # by its id, with the settings stored with it
            cmd = [sys.executable, "-m", "abeq", "resume", "1", "--db", str(db), "--quiet"]
        done = zygote.run(cmd, cwd=str(ROOT), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert srv.stats()["requests"] == 3 * n - kept  # nothing finished is asked again
    with sqlite3.connect(db) as c:
        assert c.execute("select count(*), min(status) from runs").fetchone() == (1, "finished")
