"""The desk tells the truth about runs (AppTest): a run left by a dead process is interrupted, is
listed with its models and settings and resumes with them; a running run reads as running on
Review, not as a failed one; progress counts calls."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import EXAMPLE

from abeq.api import prepare_run, resume_run
from abeq.desk import worker
from abeq.errors import InputError
from abeq.models import scripted
from abeq.results.store.liveness import owner_id
from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run


def dead_owner() -> str:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return f"{owner_id().rpartition(':')[0]}:{p.pid}"


def interrupted_run(db: str, judged: int = 2) -> int:
    """A run of the example review that a process started, finished `judged` cases of, then died in."""
    store = Store(db)
    seen = {"n": 0}

    def die_after(model, messages, schema):
        if "original_run" in messages[1]["content"]:
            seen["n"] += 1
            if seen["n"] > judged:
                raise SystemExit("the process died")
        return None

    scripted.model("rules").handler = die_after
    prepared = prepare_run(
        EXAMPLE / "SKILL.md",
        EXAMPLE / "candidate-lossy.md",
        EXAMPLE / "transfer-set.json",
        runner_model="scripted/rules",
        store=store,
        confirm=True,
        review="example",
        concurrency=1,
        judge_samples=1,
    )
    with pytest.raises(SystemExit):
        prepared.run()
    scripted.forget()
    store.log.update_run(prepared.run_id, owner=dead_owner(), status="running")  # as the dead process left it
    return prepared.run_id


def test_a_run_whose_process_died_is_listed_as_interrupted_and_resumes_with_its_settings(app, db):
    run_id = interrupted_run(db)
    assert Store(db).log.run(run_id)["status"] == "interrupted"
    app.switch_page("desk_pages/3_run.py").run()
    text = " ".join(m.value for m in app.markdown) + " ".join(c.value for c in app.caption)
    assert f"Run {run_id}" in text and "interrupted" in text and "2 of 7 cases done" in text
    assert "runner scripted/rules" in text and "concurrency 1" in text  # its own settings, before Resume
    app.text_input(key="runner_model").input("local/smollm2").run()  # the form's models are not used
    app.button(key=f"resume_{run_id}").click().run()
    assert not app.exception
    assert worker.wait(run_id, 120)
    store = Store(db)
    assert store.log.run(run_id)["status"] == "finished" and len(store.log.runs()) == 1
    assert {r["model"] for r in store.sql.all("select distinct model from calls")} == {"scripted/rules"}
    assert store.log.call_progress(run_id, store.log.run(run_id)["attempt_first_call"])["cached"] >= 2 * 3


def test_resume_refuses_a_finished_or_running_run(db):
    run_id = interrupted_run(db)
    store = Store(db)
    store.log.claim_run(run_id, owner_id())  # alive: this process
    with pytest.raises(InputError, match="still running"):
        resume_run(run_id, store)
    store.log.update_run(run_id, status="finished")
    with pytest.raises(InputError, match="has finished"):
        resume_run(run_id, store)


def test_an_api_base_with_credentials_is_stored_without_them(db):
    from abeq.execution.engine import Engine, RunConfig
    from abeq.models import ModelSpec

    store = Store(db)
    spec = ModelSpec(name="openai/x", api_base="https://user:s3cret-pass@gw.example/v1?key=k-123")
    ex = prepare_run(
        EXAMPLE / "SKILL.md",
        EXAMPLE / "candidate-lossy.md",
        EXAMPLE / "transfer-set.json",
        confirm=True,
        store=store,
    ).engine
    eng = Engine(store, ex.original, ex.candidate, ex.ts, RunConfig(runner=spec, judge=spec))
    run_id = eng.prepare()
    row = store.sql.one("select * from runs where id = ?", [run_id])
    assert "s3cret" not in json.dumps(row) and "k-123" not in json.dumps(row)
    assert json.loads(row["config"])["settings"]["runner"]["api_base"] == "https://gw.example/v1"
    store.log.claim_run(run_id, dead_owner())
    with pytest.raises(InputError, match="credentials"):
        resume_run(run_id, store)


def test_review_says_running_not_fail_while_a_run_runs(app, db):
    store = Store(db)
    run_id = synthetic_run(store, 6, review="live", error_every=0)
    for cid in ("case-0004", "case-0005"):  # not done yet
        store.log.put_run_case(
            {"run_id": run_id, "case_id": cid, "position": int(cid[-1]), "status": "pending"}
        )
    store.log.claim_run(run_id, owner_id())  # this process runs it, beating
    app.run()
    app.sidebar.selectbox(key="review_id").select(store.inputs.review("live")["id"]).run()
    app.switch_page("desk_pages/4_review.py").run()
    assert not app.exception
    marks = [m.value for m in app.markdown]
    assert any("running" in m for m in marks) and not any("FAIL" in m for m in marks)
    assert any(c.value == "running — 4 of 6 judged" for c in app.caption)
    assert {m.label: m.value for m in app.metric}["Errored"] == "0"
    assert "case-0004" not in app.selectbox(key="review_case").options

    store.log.update_run(
        run_id, owner=dead_owner()
    )  # its process died: now the pending cases are what's missing
    app.run()
    # interrupted: what was judged stands, the two cases never judged are not run, not errors
    assert any(c.value == "interrupted: 4 of 6 judged, 2 not run" for c in app.caption)
    assert not any("FAIL" in m.value for m in app.markdown)
    assert {m.label: m.value for m in app.metric}["Errored"] == "0"
    assert {m.label: m.value for m in app.metric}["Not run"] == "2"


def test_run_page_counts_calls(app, db):
    run_id = interrupted_run(db)
    store = Store(db)
    store.log.update_run(run_id, status="cancelled")
    app.switch_page("desk_pages/3_run.py").run()
    m = {x.label: x.value for x in app.metric}
    # the dead attempt: case 1 and 2 judged (6 calls), case 3's two runs, then the 3rd judgement died
    assert m["Runner calls"] == "6/14" and m["Judge calls"] == "2/7" and m["Cases done"] == "2/7"
    assert any("finished and are kept" in c.value for c in app.caption)


def test_a_tools_run_resumes_as_a_tools_run(db):
    """The runner mode is one of a run's settings: resuming a tools run continues that run in tools
    mode (it once came back as a new chat run)."""
    store = Store(db)
    docs = (EXAMPLE / "SKILL.md", EXAMPLE / "candidate-lossy.md", EXAMPLE / "transfer-set.json")
    first = prepare_run(*docs, runner_model="scripted/rules", store=store, confirm=True, runner_mode="tools")
    store.log.update_run(first.run_id, status="cancelled")
    again = resume_run(first.run_id, store)
    assert again.run_id == first.run_id and again.engine.cfg.mode.kind == "tools"
    rr = again.run()
    assert rr.run["status"] == "finished" and not rr.errors
    assert {r["mode"] for r in store.sql.db.query("select mode from runner_results")} == {"tools"}
