"""--fail-fast: no new case starts once one is judged regressed; the rest are reported "not run
(stopped early)", never as errors or verdicts; exit 1; the same command without it runs the rest."""

import json
import sqlite3
import xml.etree.ElementTree as ET

import pytest

from abeq.cli import main
from abeq.execution.failfast import FailFast
from abeq.testing.loopback import LoopbackServer
from abeq.testing.synthetic import example_run_args as cli
from abeq.testing.synthetic import write_set
from abeq.vocab import NOT_RUN_STAGE, REGRESSED


def made(db, kind: str) -> int:
    with sqlite3.connect(db) as c:
        return c.execute("select count(*) from calls where cached = 0 and kind = ?", [kind]).fetchone()[0]


@pytest.mark.parametrize("latency", [0.0, 0.02])
def test_a_failing_60_case_round_stops_after_few_candidate_calls_and_the_rest_run_later(tmp_path, latency):
    ts, db, out = write_set(tmp_path / "set.json", 60), tmp_path / "abeq.db", tmp_path / "r.json"
    junit, record = tmp_path / "j.xml", tmp_path / "rec.json"
    with LoopbackServer(latency=latency) as srv:
        args = cli(ts, db, srv.url, "candidate-lossy.md", "--concurrency", "4", "--out", str(out))
        code = main([*args, "--fail-fast", "--junit", str(junit), "--record", str(record)])
        rep = json.loads(out.read_text())
        assert code == 1
        assert made(db, "runner-candidate") <= 16
        not_run = [e for e in rep["errors"] if e["stage"] == NOT_RUN_STAGE]
        assert len(not_run) >= 44 and len(not_run) == len(rep["errors"])  # nothing else errored
        assert len(rep["cases"]) + len(not_run) == 60 and rep["summary"]["regressions"] >= 1
        first = rep["stopped_early"]["after_case"]
        assert rep["stopped_early"]["not_run"] == len(not_run)
        assert {c["case_id"]: c["verdict"] for c in rep["cases"]}[first] == REGRESSED
        assert all(first in e["error"] and "--fail-fast" in e["error"] for e in not_run)
        suite = ET.parse(junit).getroot()
        assert suite.get("skipped") == str(len(not_run)) and suite.get("errors") == "0"
        assert json.loads(record.read_text())["run"]["stopped_early"]["after_case"] == first

        # the same command without --fail-fast resumes that run and runs only what was not run
        before = srv.stats["requests"]
        assert main(args) == 1
        rep2 = json.loads(out.read_text())
        assert rep2["errors"] == [] and len(rep2["cases"]) == 60 and "stopped_early" not in rep2
        assert srv.stats["requests"] - before == 3 * len(not_run)
    with sqlite3.connect(db) as c:
        assert c.execute("select count(*), min(status) from runs").fetchone() == (1, "finished")


def test_a_passing_round_with_fail_fast_runs_every_case(tmp_path):
    ts, db, out = write_set(tmp_path / "set.json", 12), tmp_path / "abeq.db", tmp_path / "r.json"
    with LoopbackServer() as srv:
        code = main([*cli(ts, db, srv.url, "candidate-faithful.md", "--fail-fast"), "--out", str(out)])
    rep = json.loads(out.read_text())
    assert code == 0 and len(rep["cases"]) == 12 and rep["errors"] == [] and "stopped_early" not in rep


def test_one_case_at_a_time_stops_right_after_the_first_regression(store, example, scripted_cfg):
    from abeq.execution.engine import Engine
    from abeq.results.reports.report import build_report, exit_code

    cfg = scripted_cfg(concurrency=1, fail_fast=True)
    rr = build_report(store, Engine(store, example["original"], example["lossy"], example["ts"], cfg).run())
    assert len(rr.report["cases"]) == 1 and len(rr.not_run) == 6 and not rr.failed
    assert rr.run["status"] == "stopped" and exit_code(rr) == 1
    assert store.log.call_stats(rr.run["id"])["made"] == 3


def test_with_k_samples_a_majority_of_regressed_samples_stops_before_the_last_one():
    ff = FailFast(True, 4)
    ff.sample("a", REGRESSED, 3)
    assert not ff.stopped
    ff.sample("b", REGRESSED, 3)  # another case's sample: not a's majority
    ff.sample("a", "equivalent", 3)
    assert not ff.stopped
    ff.sample("a", REGRESSED, 3)
    assert ff.after == "a"
    off = FailFast(False, 4)
    off.sample("a", REGRESSED, 1)
    assert not off.stopped  # without --fail-fast nothing ever stops


def test_resuming_a_stopped_run_with_its_own_settings_runs_what_it_did_not_start(store, example):
    from abeq.api import prepare_run, resume_run

    prepared = prepare_run(
        example["original"],
        example["lossy"],
        example["ts"],
        runner_model="scripted/rules",
        store=store,
        concurrency=1,
        fail_fast=True,
    )
    rr = prepared.run()
    assert len(rr.not_run) == 6 and rr.run["status"] == "stopped"
    again = resume_run(prepared.run_id, store).run()  # fail-fast is not a stored setting
    assert again.run["id"] == prepared.run_id and not again.errors and len(again.report["cases"]) == 7
    assert again.run["status"] == "finished" and again.stopped_early() is None
