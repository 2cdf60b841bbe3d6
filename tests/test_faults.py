"""The fault harness: injected errors, kill -9, hangs, a secret in the environment, two writers at once.

Every run goes over real HTTP to the loopback server (in this process, or in its own process
where a run is killed or two runs race), through the CLI a user would type.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zygote
from conftest import ROOT

from abeq.cli import main
from abeq.testing.loopback import LoopbackServer, _error
from abeq.testing.process import LoopbackProcess  # noqa: E402
from abeq.testing.synthetic import example_run_args as cli_args
from abeq.testing.synthetic import write_set

SECRET = "sk-test-abeq-SECRET-1234567890"


def run_cli(tmp_path: Path, name: str, args: list[str]) -> tuple[int, dict]:
    out = tmp_path / f"{name}.json"
    code = main([*args, "--out", str(out)])
    return code, json.loads(out.read_text())


def integrity(db: Path) -> str:
    with sqlite3.connect(db) as c:
        return c.execute("PRAGMA integrity_check").fetchone()[0]


def verdicts(rep: dict) -> dict:
    return {c["case_id"]: c["verdict"] for c in rep["cases"]}


# ------------------------------------------------------------------ injected 429/500 and malformed replies
@pytest.mark.parametrize("candidate", ["candidate-faithful.md", "candidate-lossy.md"])
def test_injected_faults_end_every_case_judged_as_the_judge_said_or_errored(tmp_path, candidate):
    ts = write_set(tmp_path / "set.json", 100)
    with LoopbackServer() as clean:
        clean_code, clean_rep = run_cli(
            tmp_path,
            "clean",
            cli_args(ts, tmp_path / "clean.db", clean.url, candidate, "--concurrency", "16"),
        )
    with LoopbackServer(fail_rate=0.2, malformed_rate=0.1, seed=3) as srv:
        # One retry per call: some calls fail twice in a row, so some cases must end errored.
        code, rep = run_cli(
            tmp_path,
            "faulty",
            cli_args(
                ts, tmp_path / "faulty.db", srv.url, candidate, "--concurrency", "16", "--max-retries", "1"
            ),
        )
        st = srv.stats
    assert clean_rep["errors"] == [] and len(clean_rep["cases"]) == 100
    assert st["fail_429"] and st["fail_500"] and st["malformed"]
    errored = {e["case_id"]: e for e in rep["errors"]}
    assert set(verdicts(rep)) | set(errored) == set(verdicts(clean_rep)) and not set(verdicts(rep)) & set(
        errored
    )
    assert errored and all(e["error"] and e["stage"] in ("runner", "judge") for e in errored.values())
    # A judged case carries the verdict the judge gave on clean replies: faults never become verdicts.
    assert all(v == verdicts(clean_rep)[cid] for cid, v in verdicts(rep).items())
    assert rep["summary"]["pass"] is False and code == 3


def test_every_equivalent_verdict_is_in_a_stored_judge_reply(tmp_path):
    ts = write_set(tmp_path / "set.json", 30)
    db = tmp_path / "abeq.db"
    with LoopbackServer(fail_rate=0.2, malformed_rate=0.3, seed=5) as srv:
        run_cli(tmp_path, "r", cli_args(ts, db, srv.url, "candidate-faithful.md", "--max-retries", "1"))
    with sqlite3.connect(db) as c:
        rows = c.execute(
            "select rc.verdict, j.raw from run_cases rc join judgements j "
            "on j.key = json_extract(rc.judge_keys, '$[0]') where rc.status = 'judged'"
        ).fetchall()
    assert rows and all(json.loads(raw)["verdict"] == verdict for verdict, raw in rows)


# ------------------------------------------------------------------ kill -9 and resume
def test_kill_minus_9_then_the_same_command_resumes_without_repeating_finished_calls(tmp_path):
    n = 40
    ts, db = write_set(tmp_path / "set.json", n), tmp_path / "abeq.db"
    with LoopbackProcess(latency=0.2) as srv:
        cmd = [
            sys.executable,
            "-m",
            "abeq",
            *cli_args(ts, db, srv.url, "candidate-lossy.md", "--concurrency", "4"),
            "--out",
            str(tmp_path / "r.json"),
        ]
        proc = zygote.popen(cmd, cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            if db.exists() and _count(db, "select count(*) from calls where cached = 0 and ok = 1") >= 30:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        finished, last_call = _keys(db), _count(db, "select max(id) from calls")
        assert 30 <= len(finished) < 3 * n
        srv.reset()
        assert (
            zygote.run(cmd, cwd=str(ROOT), capture_output=True, timeout=120).returncode == 1
        )  # lossy regresses
        assert srv.stats()["requests"] == 3 * n - len(finished)
    with sqlite3.connect(db) as c:
        made = [k for (k,) in c.execute("select key from calls where id > ? and cached = 0", [last_call])]
        runs = c.execute("select count(*), min(status) from runs").fetchone()
    assert len(made) == 3 * n - len(finished) and not set(made) & finished
    assert runs == (1, "finished")  # the same run, resumed
    rep = json.loads((tmp_path / "r.json").read_text())
    assert len(rep["cases"]) == n and rep["errors"] == []
    assert integrity(db) == "ok"


def _count(db: Path, sql: str) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as c:
            return c.execute(sql).fetchone()[0]
    except sqlite3.OperationalError:  # tables not created yet
        return 0


def _keys(db: Path) -> set[str]:
    with sqlite3.connect(db) as c:
        return {k for (k,) in c.execute("select key from runner_results union select key from judgements")}


# ------------------------------------------------------------------ timeouts
def test_a_model_that_never_answers_is_cut_off_and_retried_and_the_run_ends(tmp_path):
    ts, db = write_set(tmp_path / "set.json", 10), tmp_path / "abeq.db"
    with LoopbackServer(hang_rate=0.2, seed=2) as srv:
        t = time.perf_counter()
        code, rep = run_cli(
            tmp_path,
            "r",
            cli_args(
                ts,
                db,
                srv.url,
                "candidate-faithful.md",
                "--timeout",
                "1",
                "--concurrency",
                "8",
                "--max-retries",
                "6",
            ),
        )
        elapsed = time.perf_counter() - t
        st = srv.stats
    # Every hung request was cut off and asked again: all 30 calls were answered in the end.
    assert st["hang"] > 0 and st["ok"] == 30 and st["requests"] == 30 + st["hang"]
    assert code == 0 and len(rep["cases"]) == 10 and elapsed < 60


def test_a_model_that_always_hangs_errors_with_the_reason(tmp_path):
    ts, db = write_set(tmp_path / "set.json", 7), tmp_path / "abeq.db"
    with LoopbackServer(hang_rate=1.0) as srv:
        code, rep = run_cli(
            tmp_path,
            "r",
            cli_args(ts, db, srv.url, "candidate-faithful.md", "--timeout", "1", "--max-retries", "1"),
        )
    assert code == 3 and rep["cases"] == [] and len(rep["errors"]) == 7
    assert all("Timeout" in e["error"] and "2 attempt(s)" in e["error"] for e in rep["errors"])


# ------------------------------------------------------------------ a secret in the environment
class EchoKeyServer(LoopbackServer):
    """Answers every chat request 401 with the Authorization header in the error body."""

    async def _chat(self, request):
        self._decide()
        self._count("error")
        return _error(
            401,
            f"Incorrect API key provided: {request.headers.get('Authorization', '')}",
            "invalid_request_error",
            "invalid_api_key",
        )


def _exports(tmp_path: Path, stem: str) -> list[str]:
    return [
        "--record",
        str(tmp_path / f"{stem}.record.json"),
        "--markdown",
        str(tmp_path / f"{stem}.md"),
        "--csv",
        str(tmp_path / f"{stem}.csv"),
        "--junit",
        str(tmp_path / f"{stem}.xml"),
    ]


def _leaks(tmp_path: Path, captured: str) -> list[str]:
    found = [p.name for p in tmp_path.iterdir() if p.is_file() and SECRET.encode() in p.read_bytes()]
    return found + (["stderr/stdout"] if SECRET in captured else [])


@pytest.mark.parametrize("transport", ["fast", "litellm"])
def test_an_api_key_in_the_environment_is_stored_printed_and_exported_nowhere(
    tmp_path, monkeypatch, capfd, transport
):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ABEQ_TRANSPORT", transport)
    ts = write_set(tmp_path / "set.json", 12)
    db = tmp_path / "abeq.db"
    with LoopbackServer(fail_rate=0.3, malformed_rate=0.2, seed=1) as srv:
        main(
            [
                *cli_args(ts, db, srv.url, "candidate-lossy.md", "--max-retries", "1"),
                "--out",
                str(tmp_path / "a.json"),
                *_exports(tmp_path, "a"),
            ]
        )
    with EchoKeyServer() as echo:
        # Not quiet: the progress bar, the budget line and one line per errored case go to stderr.
        code = main(
            [
                *cli_args(
                    ts, db, echo.url, "candidate-faithful.md", "--max-retries", "0", "--fresh", quiet=False
                ),
                "--out",
                str(tmp_path / "b.json"),
                *_exports(tmp_path, "b"),
            ]
        )
        requests = echo.stats["requests"]
    with sqlite3.connect(db) as c:
        run_id = c.execute("select max(id) from runs").fetchone()[0]
    main(
        ["export", str(run_id), "--db", str(db), "--out", str(tmp_path / "c.json"), *_exports(tmp_path, "c")]
    )
    rep = json.loads((tmp_path / "b.json").read_text())
    out, err = capfd.readouterr()
    assert requests > 0 and code == 3 and len(rep["errors"]) == 12
    assert "[redacted]" in rep["errors"][0]["error"] and "error: case" in err  # echoed, cut out, printed
    assert _leaks(tmp_path, out + err) == []


# ------------------------------------------------------------------ two writers on one database
def test_two_runs_on_one_database_at_once_both_complete_and_nothing_is_lost(tmp_path):
    n = 40
    ts, db = write_set(tmp_path / "set.json", n), tmp_path / "abeq.db"
    with LoopbackProcess(latency=0.02) as srv:
        procs = {
            c: zygote.popen(
                [
                    sys.executable,
                    "-m",
                    "abeq",
                    *cli_args(ts, db, srv.url, c, "--concurrency", "8"),
                    "--out",
                    str(tmp_path / f"{c}.json"),
                ],
                cwd=str(ROOT),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for c in ("candidate-faithful.md", "candidate-lossy.md")
        }
        results = {c: (p.wait(120), p.stderr.read()) for c, p in procs.items()}
    assert results["candidate-faithful.md"][0] == 0, results["candidate-faithful.md"][1]
    assert results["candidate-lossy.md"][0] == 1, results["candidate-lossy.md"][1]
    for c in procs:
        rep = json.loads((tmp_path / f"{c}.json").read_text())
        assert len(rep["cases"]) == n and rep["errors"] == []
    with sqlite3.connect(db) as conn:
        per_run = conn.execute(
            "select run_id, count(*) from run_cases where status = 'judged' group by run_id"
        ).fetchall()
    assert sorted(k for _, k in per_run) == [n, n]
    assert integrity(db) == "ok"
