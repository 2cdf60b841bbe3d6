"""Issue 49 items 1-4: an agent can finish the loop through the MCP tools — the report says why a
case stays regressed (a gate it stops at, cases not run, errors), a run that will not finish by
itself says what to do, the same call twice is one run, the allowed models are listed, and every
argument error speaks the CLI's language. Through the official SDK client, in process."""

import asyncio
import sqlite3
import threading

from test_mcp import RUN, call, confirm, finished, project, session  # noqa: F401

from abeq.agents.server import build
from abeq.agents.tools import Tools
from abeq.execution.bounds import Bounds


def test_the_report_carries_what_the_cli_report_does_and_says_it_in_words(project, scripted_model):  # noqa: F811
    confirm(project)

    async def calls(client):
        _, _, started = await call(client, "run", {**RUN, "runner_model": "scripted/rules"})
        await finished(client, started["run_id"])
        return await call(client, "report", {"run_id": started["run_id"]})

    error, text, s = session(project, calls)
    assert not error
    # report.json's own keys, as `abeq run --out` writes them
    assert {"cases", "summary", "errors", "gate_truncated"} <= set(s["report"])
    assert s["report"]["gate_truncated"]  # the example's edge-2 stops at the gate in Review and handoff
    for t in s["report"]["gate_truncated"]:
        assert f"{t['case_id']} stops at the gate in {t['section']!r}" in text
        assert "never reached" in text


def test_an_interrupted_run_says_how_to_resume_and_its_report_says_what_was_not_run(project):  # noqa: F811
    confirm(project)

    async def start(client):
        _, _, started = await call(client, "run", {**RUN, "runner_model": "scripted/rules"})
        return (await finished(client, started["run_id"]))["run_id"]

    run_id = session(project, start)
    db = sqlite3.connect(project / "abeq.db")
    db.execute("update runs set status = 'interrupted', finished_at = null")
    db.execute(
        "update run_cases set status = 'pending', verdict = null where run_id = ? and case_id in "
        "(select case_id from run_cases where run_id = ? limit 3)",
        (run_id, run_id),
    )
    db.commit()

    async def read(client):  # a new server: the process that owned the run is gone
        return await call(client, "run_status", {"run_id": run_id}), await call(
            client, "report", {"run_id": run_id}
        )

    (_, status_text, status), (_, report_text, report) = session(project, read)
    assert status["status"] == "interrupted" and not status["finished"]
    assert "call run with the same arguments to resume" in status["next_step"]
    assert "next: " in status_text
    assert len(report["not_run"]) == 3 and not report["passed"]
    assert "not run: 3 case(s)" in report_text and "resume" in report_text


def test_a_run_whose_every_call_failed_is_failed_not_finished(project, scripted_model):  # noqa: F811
    confirm(project)

    def broken(prompt, messages, schema):
        raise RuntimeError("the provider is down")

    scripted_model.runner.handle(broken)

    async def calls(client):
        _, _, started = await call(client, "run", {**RUN, "runner_model": "scripted/rules", "max_retries": 0})
        return await finished(client, started["run_id"])

    s = session(project, calls)
    assert s["status"] == "failed" and s["error"] and "resume" in s["next_step"]


def test_the_same_call_twice_while_the_run_goes_on_is_one_run(project, monkeypatch):  # noqa: F811
    confirm(project)
    gate = threading.Event()
    real = Tools._work

    def held(self, prepared, run_id, on_progress):
        gate.wait(30)
        real(self, prepared, run_id, on_progress)

    monkeypatch.setattr(Tools, "_work", held)
    args = {**RUN, "runner_model": "scripted/rules"}

    async def calls(client):
        _, _, a = await call(client, "run", args)
        _, text, b = await call(client, "run", args)
        gate.set()
        await finished(client, a["run_id"])
        return a, b, text

    a, b, text = session(project, calls)
    assert a["run_id"] == b["run_id"] and "already running" in text
    runs = sqlite3.connect(project / "abeq.db").execute("select count(*) from runs").fetchone()[0]
    assert runs == 1


def test_the_allowed_models_are_listed_where_an_agent_reads_them(project):  # noqa: F811
    async def calls(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        refused = await call(client, "run", {**RUN, "runner_model": "openai/gpt-4o"})
        return client.server_capabilities, tools, refused

    server = build(Bounds.started_in(project, db=str(project / "abeq.db"), models=("scripted/*",)))
    from mcp import Client

    async def go():
        async with Client(server) as client:
            return await calls(client), client

    (_, tools, (error, text, _)), _ = asyncio.run(go())
    said = tools["run"].input_schema["properties"]["runner_model"]["description"]
    assert "scripted/* (e.g. scripted/rules)" in said and "local/smollm2, is not allowed" in said
    assert "default: local/smollm2" not in said
    assert error and "scripted/* (e.g. scripted/rules)" in text
    from abeq.agents.server import instructions

    assert "scripted/*" in instructions(Bounds.started_in(project, models=("scripted/*",)))


def test_argument_errors_speak_the_cli_language(project):  # noqa: F811
    confirm(project)

    async def calls(client):
        misspelt = {k: v for k, v in RUN.items() if k != "transfer_set"} | {
            "transfer_sett": RUN["transfer_set"]
        }
        return (
            await call(client, "run", {**misspelt, "runner_model": "scripted/rules"}),
            await call(client, "run", {**RUN, "runner_model": "scripted/rules", "judge_samples": "many"}),
            await call(client, "run_status", {"run_id": "x1"}),
            await call(client, "run_status", {"run_id": "1"}),
        )

    (e1, t1, _), (e2, t2, _), (e3, t3, _), (_, t4, _) = session(project, calls)
    assert e1 and "unknown argument: 'transfer_sett' (did you mean 'transfer_set'?)" in t1
    assert e2 and "argument --judge-samples: expected a whole number, got 'many'" in t2
    assert e3 and "argument --run-id: expected a whole number, got 'x1'" in t3
    assert "pydantic" not in t1 + t2 + t3
    assert "no run 1" in t4  # digits read as a number, as for every other number


def test_mutate_answers_at_once_and_mutate_status_follows_it(project, monkeypatch):  # noqa: F811
    confirm(project)
    gate = threading.Event()
    from abeq.mutation.run import PreparedMutation

    real = PreparedMutation.run

    def held(self, *a, **k):
        gate.wait(30)
        return real(self, *a, **k)

    monkeypatch.setattr(PreparedMutation, "run", held)
    args = {"original": "SKILL.md", "transfer_set": "transfer-set.json", "runner_model": "scripted/rules",
            "section": ["Writing each entry"]}  # fmt: skip

    async def calls(client):
        _, _, started = await call(client, "mutate", args)
        _, _, during = await call(client, "mutate_status", {"mutation_id": started["mutation_id"]})
        gate.set()
        while True:
            _, text, s = await call(client, "mutate_status", {"mutation_id": started["mutation_id"]})
            if s["finished"] or s["error"]:
                break
            await asyncio.sleep(0.2)
        _, _, again = await call(client, "mutate", args)
        return started, during, s, text, again

    started, during, done, text, again = session(project, calls)
    assert started["status"] == "started" and during["status"] == "running" and not during["finished"]
    assert done["result"]["killed"] == 1 and "score 1.00" in text
    assert again["status"] == "finished" and again["result"]["score"] == 1.0  # the same test: no call


def test_with_wait_the_sdks_progress_callback_gets_every_case(project):  # noqa: F811
    confirm(project)
    seen: list[tuple[float, float | None]] = []

    async def progress(done, total, message):
        seen.append((done, total))

    async def calls(client):
        args = {**RUN, "runner_model": "scripted/rules"}
        answered = await client.call_tool("run", {**args, "wait": True}, progress_callback=progress)
        return answered.structured_content

    done = session(project, calls)
    assert "finished" in done["message"]
    assert [d for d, _ in seen if d] == [float(n) for n in range(1, 8)] and seen[-1] == (7.0, 7.0)
