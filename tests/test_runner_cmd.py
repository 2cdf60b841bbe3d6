"""Any agent CLI as the runner (`--runner-cmd`), with a stand-in agent script that acts on the
document it finds (tests/agents/changelog_agent.py) and logs each invocation."""

import asyncio
import json
import os
import shlex
import sys
import time

import pytest
from conftest import EXAMPLE, ROOT, run_argv

from abeq.cli import main
from abeq.execution.runners.agent_cmd import RunnerCommandError, command_env, invoke, read_report
from abeq.execution.runners.modes import RunnerMode
from abeq.models import scripted
from abeq.schemas import NOT_REPORTED

AGENT = ROOT / "tests" / "agents" / "changelog_agent.py"
AGENTS_MD = ROOT / "abeq" / "examples" / "agents-md"


def agent(log, *flags) -> str:
    return shlex.join([sys.executable, str(AGENT), "--log", str(log), *flags])


def abeq_run(
    tmp_path, candidate, cmd, *extra, original=EXAMPLE / "SKILL.md", ts=EXAMPLE / "transfer-set.json"
):
    out = {"out": tmp_path / "report.json", "record": tmp_path / "record.json"}
    args = run_argv(*extra, db=tmp_path / "abeq.db", original=original, candidate=candidate, transfer_set=ts,
                    runner_model=None, runner_cmd=cmd, judge_model="scripted/rules", **out)  # fmt: skip
    return main(args), json.loads((tmp_path / "record.json").read_text())


def invocations(log) -> list[list[str]]:
    return [ln.split("\t") for ln in log.read_text().splitlines()] if log.exists() else []


def test_lossy_fails_faithful_passes_and_the_teacher_is_invoked_once(tmp_path):
    log = tmp_path / "calls.log"
    code, record = abeq_run(tmp_path, EXAMPLE / "candidate-lossy.md", agent(log))
    assert code == 1 and record["report"]["summary"]["regressions"] == 7
    assert len(invocations(log)) == 14  # teacher and candidate, 7 cases each
    # the skill is where an agent looks for it, under its front-matter name
    assert {rel for _, variant, rel in invocations(log)} == {".claude/skills/release-notes/SKILL.md"}
    assert record["run"]["runner_mode"] == "command" and record["run"]["runner_command"] == agent(log)
    assert record["run"]["prompts"][0].startswith("runner-command@")  # the prompt the command read
    # a file the agent wrote shows in the record, the ticket ids the lossy candidate kept with it
    case = next(c for c in record["cases"] if c["case_id"] == "happy-1")
    teacher, cand = (case["observed"][arm]["workspace_changes"][0] for arm in ("original", "candidate"))
    assert teacher["path"] == cand["path"] == "CHANGELOG.md" and teacher["status"] == "added"
    assert "DATA-882" in cand["diff"] and "DATA-882" not in teacher["diff"]

    code, record = abeq_run(tmp_path, EXAMPLE / "candidate-faithful.md", agent(log))
    assert code == 0 and record["report"]["summary"]["equivalents"] == 7
    assert len(invocations(log)) == 21  # round 2: the 7 candidate runs only, no teacher invocation
    code, _ = abeq_run(tmp_path, EXAMPLE / "candidate-faithful.md", agent(log))
    assert code == 0 and len(invocations(log)) == 21  # an identical re-run invokes nothing


def test_an_instruction_file_is_placed_at_the_root_under_its_own_name(tmp_path):
    log = tmp_path / "calls.log"
    code, _ = abeq_run(
        tmp_path,
        AGENTS_MD / "AGENTS.compressed.md",
        agent(log),
        original=AGENTS_MD / "AGENTS.md",
        ts=AGENTS_MD / "transfer-set.json",
    )
    assert code in (0, 1)
    assert {(variant, rel) for _, variant, rel in invocations(log)} == {("instruction-file", "AGENTS.md")}


def test_a_changed_command_version_is_a_cache_miss(tmp_path):
    log = tmp_path / "calls.log"
    abeq_run(tmp_path, EXAMPLE / "candidate-lossy.md", agent(log))
    abeq_run(tmp_path, EXAMPLE / "candidate-lossy.md", agent(log), "--runner-cmd-version", "agent 2.0")
    assert len(invocations(log)) == 28


def test_without_a_self_report_the_fields_say_not_reported_and_the_files_decide(tmp_path):
    log = tmp_path / "calls.log"
    code, record = abeq_run(tmp_path, EXAMPLE / "candidate-lossy.md", agent(log, "--no-report"))
    case = next(c for c in record["cases"] if c["case_id"] == "happy-1")
    assert set(case["observed"]["original"]["not_reported"]) == {
        "output_produced", "steps_followed_skipped", "ambiguities", "improvisation", "wanted_to_deviate",
        "gates_hit",
    }  # fmt: skip
    # the ticket ids left in the candidate's CHANGELOG.md are a lost behaviour, seen in the files alone
    verdict = next(c for c in record["report"]["cases"] if c["case_id"] == "happy-1")
    assert code == 1 and verdict["verdict"] == "candidate-regressed"
    assert "CHANGELOG.md" in verdict["behaviour_delta"]
    judge_reads = [
        h["messages"][1]["content"]
        for h in scripted.model("rules").history
        if "original_run" in str(h["messages"])
    ]
    assert judge_reads and all('"ambiguities": "not reported"' in j for j in judge_reads)


def test_a_failing_command_errors_the_case_and_is_never_cached(tmp_path):
    log = tmp_path / "calls.log"
    code, record = abeq_run(tmp_path, EXAMPLE / "candidate-lossy.md", agent(log, "--fail"))
    assert code == 3 and record["report"]["summary"]["pass"] is False and len(record["errors"]) == 7
    assert "exited with status 1" in record["errors"][0]["error"]
    n = len(invocations(log))
    code, record = abeq_run(tmp_path, EXAMPLE / "candidate-lossy.md", agent(log, "--fail"))
    assert code == 3 and record["run"]["calls_cached"] == 0 and len(invocations(log)) >= n + 7


def test_a_run_whose_command_failed_on_one_case_resumes_with_only_that_case(tmp_path):
    log, flag = tmp_path / "calls.log", tmp_path / "broken"
    flag.touch()
    cmd = agent(log, "--fail-case", "edge-1", "--fail-while", str(flag))
    code, record = abeq_run(tmp_path, EXAMPLE / "candidate-lossy.md", cmd)
    assert code == 3 and [e["case_id"] for e in record["errors"]] == ["edge-1"]
    before = invocations(log)
    flag.unlink()  # the agent works again: the same command resumes the run
    code, record = abeq_run(tmp_path, EXAMPLE / "candidate-lossy.md", cmd)
    assert code == 1 and not record["errors"]
    again = invocations(log)[len(before) :]
    assert {case for case, _, _ in again} == {"edge-1"} and len(again) <= 2


def test_a_command_that_overruns_is_killed_with_everything_it_started(tmp_path):
    pidfile = tmp_path / "child.pid"
    cmd = f"sleep 60 & echo $! > {pidfile}; sleep 60"
    t0 = time.monotonic()
    with pytest.raises(RunnerCommandError, match="timed out"):
        asyncio.run(invoke(cmd, str(tmp_path), "", command_env(RunnerMode(), {}), timeout=1.0))
    assert time.monotonic() - t0 < 20
    child = int(pidfile.read_text())
    time.sleep(0.2)
    assert not os.path.exists(f"/proc/{child}") or "Z" in open(f"/proc/{child}/stat").read().split()[2]


def test_only_allowed_environment_variables_reach_the_command(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-allowed")
    monkeypatch.setenv("MY_PRIVATE_TOKEN", "do-not-pass")
    env = command_env(RunnerMode(kind="command", command="env"), {"ABEQ_CASE_ID": "c1"})
    out, _, _ = asyncio.run(invoke("env", str(tmp_path), "", env, timeout=10))
    # passed by name (what the command printed of its value is redacted before abeq keeps it)
    assert "OPENAI_API_KEY=[redacted]" in out and "ABEQ_CASE_ID=c1" in out
    assert "MY_PRIVATE_TOKEN" not in out
    env = command_env(RunnerMode(kind="command", command="env", env=("MY_PRIVATE_TOKEN",)), {})
    out, _, _ = asyncio.run(invoke("env", str(tmp_path), "", env, timeout=10))
    assert "MY_PRIVATE_TOKEN=[redacted]" in out


def test_claude_codes_json_output_gives_the_self_report_and_the_cost():
    answer = (
        "Done.\n```json\n"
        + json.dumps({"self_report": {"output_produced": "notes", "steps_followed_skipped": "all",
                                      "ambiguities": "none", "improvisation": "none",
                                      "wanted_to_deviate": "none", "gates_hit": []}})
        + "\n```"
    )  # fmt: skip
    stdout = json.dumps(
        {
            "type": "result",
            "result": answer,
            "total_cost_usd": 0.0123,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    )
    report, missing, facts = read_report(stdout)
    assert report.output_produced == "notes" and missing == [] and facts["total_cost_usd"] == 0.0123


def test_a_partial_self_report_marks_only_the_missing_fields():
    report, missing, _ = read_report(
        'text\n{"self_report": {"output_produced": "x", "ambiguities": ["a", "b"]}}'
    )
    assert report.output_produced == "x" and report.ambiguities == "a\nb"
    assert report.improvisation == NOT_REPORTED and report.gates_hit == []
    assert "gates_hit" in missing and "output_produced" not in missing


def test_a_key_the_agent_prints_or_writes_is_never_stored(tmp_path, monkeypatch):
    key = "sk-abeq-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    cmd = "printenv OPENAI_API_KEY; printenv OPENAI_API_KEY > leaked.txt"
    code, record = abeq_run(tmp_path, EXAMPLE / "candidate-lossy.md", cmd)
    case = record["cases"][0]
    assert case["observed"]["original"]["workspace_changes"][0]["path"] == "leaked.txt"
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("abeq.db*"))
    assert key.encode() not in stored and key not in json.dumps(record)
    assert b"[redacted]" in stored


@pytest.mark.parametrize(
    "flags, needle",
    [
        (["--runner-mode", "command"], "needs a command"),
        (["--runner-mode", "tools", "--runner-cmd", "true"], "runner mode is 'tools'"),
        (["--runner-mode", "tools", "--runner-model", "local/smollm2"], "cannot call tools"),
    ],
)
def test_a_runner_mode_that_cannot_run_is_refused_before_anything_is_stored(tmp_path, capsys, flags, needle):
    db = tmp_path / "abeq.db"
    args = ["run", "--original", str(EXAMPLE / "SKILL.md"),
            "--candidate", str(EXAMPLE / "candidate-lossy.md"),
            "--transfer-set", str(EXAMPLE / "transfer-set.json"), "--confirm",
            "--judge-model", "scripted/rules", "--db", str(db), *flags]  # fmt: skip
    assert main(args) == 2 and needle in capsys.readouterr().err and not db.exists()


@pytest.mark.slow
def test_the_embedded_judge_reads_workspace_changes_and_gives_a_valid_verdict(store, example, tmp_path):
    """The judge prompt with workspace changes and "not reported" self-reports, on the real model
    (one case, a terse agent: the prompt stays short on a shared 2-core machine)."""
    from conftest import with_cases

    from abeq.execution.engine import Engine, RunConfig
    from abeq.models import ModelSpec
    from abeq.results.reports.report import build_report
    from abeq.schemas import Report

    mode = RunnerMode(kind="command", command=agent(tmp_path / "calls.log", "--no-report"))
    judge = ModelSpec(name="local/smollm2", max_tokens=600)
    cfg = RunConfig(judge=judge, mode=mode, allow_thin=True, concurrency=2)
    rr = build_report(store, Engine(store, example["original"], example["lossy"],
                                    with_cases(example, example["ts"].cases[:1]), cfg).run())  # fmt: skip
    Report.model_validate(rr.report)
    assert len(rr.report["cases"]) + len(rr.errors) == 1 and len(invocations(tmp_path / "calls.log")) == 2
    for c in rr.report["cases"]:
        assert (c["behaviour_delta"] == "") == (c["verdict"] == "equivalent")


def test_a_resumed_run_keeps_its_runner_mode():
    from abeq.execution.config import RunConfig
    from abeq.results.store.store import dumps

    cfg = RunConfig(mode=RunnerMode(kind="command", command="agent --x", command_version="v2", env=("A",)))
    back = RunConfig.from_settings(json.loads(dumps(cfg.settings())))
    assert back.mode == cfg.mode and back.key_parts() == cfg.key_parts()
    assert "mode" not in RunConfig().settings()  # a chat run's stored settings are what they were


def test_a_failing_agent_says_why_from_its_stdout_and_what_it_spent(tmp_path):
    """Claude Code writes its error to stdout and leaves stderr empty; the failed run was billed."""
    result = {"type": "result", "subtype": "error_max_turns", "is_error": True, "total_cost_usd": 0.0123,
              "usage": {"input_tokens": 1700, "output_tokens": 18}, "session_id": "s",
              "errors": ["Reached maximum number of turns (1)"]}  # fmt: skip
    (tmp_path / "out.jsonl").write_text(
        json.dumps({"type": "system", "subtype": "init"}) + "\n" + json.dumps(result)
    )
    with pytest.raises(RunnerCommandError) as e:
        asyncio.run(invoke("cat out.jsonl; exit 1", str(tmp_path), "", command_env(RunnerMode(), {}), 10))
    assert "status 1: error_max_turns: Reached maximum number of turns (1)" in e.value.message
    assert e.value.usage == {"prompt_tokens": 1700, "completion_tokens": 18, "cost": 0.0123}


def test_a_command_cancelled_in_flight_leaves_no_unretrieved_exception(tmp_path):
    """Its other arm failed, or Ctrl-C: the command is stopped and asyncio has nothing to complain of."""
    import gc

    complaints = []

    async def go():
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: complaints.append(ctx))
        task = asyncio.ensure_future(invoke("sleep 30", str(tmp_path), "", command_env(RunnerMode(), {}), 60))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        gc.collect()
        await asyncio.sleep(0.1)

    asyncio.run(go())
    assert complaints == []


def test_agent_settings_reach_the_command_and_a_run_says_so(tmp_path, monkeypatch):
    from abeq.execution.runners.agent_cmd import command_notices

    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-sonnet-4-5")
    monkeypatch.setenv("API_TIMEOUT_MS", "60000")
    mode = RunnerMode(kind="command", command="env")
    out, _, _ = asyncio.run(invoke("env", str(tmp_path), "", command_env(mode, {}), timeout=10))
    assert "ANTHROPIC_MODEL=claude-sonnet-4-5" in out and "API_TIMEOUT_MS=60000" in out
    said = " ".join(command_notices(mode))
    assert "ANTHROPIC_MODEL" in said and "no --runner-cmd-version" in said
    named = RunnerMode(kind="command", command="env", command_version="claude-code 2.1.197, sonnet 4.5")
    assert "no --runner-cmd-version" not in " ".join(command_notices(named))


def test_codexs_event_stream_is_read_into_its_actions_and_the_self_report():
    from abeq.execution.runners.agent_streams import read_stream

    final = 'Done.\n{"self_report": {"output_produced": "notes", "gates_hit": []}}'
    command = {"type": "command_execution", "command": "cat AGENTS.md", "aggregated_output": "# Rules\n",
               "exit_code": 0, "status": "completed"}  # fmt: skip
    change = {"type": "file_change", "changes": [{"path": "NOTES.md", "kind": "add"}], "status": "completed"}
    events = [
        {"type": "thread.started", "thread_id": "019a-volatile"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_1", **command}},
        {"type": "item.completed", "item": {"id": "item_2", **change}},
        {"type": "item.completed", "item": {"id": "item_3", "type": "agent_message", "text": final}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 900, "cached_input_tokens": 0, "output_tokens": 40},
        },
    ]
    s = read_stream("\n".join(json.dumps(e) for e in events))
    assert (
        s.kind == "codex-json"
        and s.final == final
        and s.facts == {"usage": {"input_tokens": 900, "output_tokens": 40}}
    )
    assert s.transcript.split("\n\n") == [
        "[command] cat AGENTS.md (exit 0)\n# Rules", "[file change] add NOTES.md", f"[final]\n{final}"
    ]  # fmt: skip
    report, missing, _ = read_report(s.final)
    assert report.output_produced == "notes" and "ambiguities" in missing and "gates_hit" not in missing
    failed = read_stream(json.dumps({"type": "turn.failed", "error": {"message": "stream disconnected"}}))
    assert failed.failure == "stream disconnected"


def test_a_command_runs_estimate_says_its_spend_comes_later_and_progress_projects_it(tmp_path):
    """The agent's spending is unknowable beforehand; its runs so far project the rest."""
    from abeq.api import prepare_run
    from abeq.execution.estimate import describe_estimate

    result = {"type": "result", "subtype": "success", "result": "done", "total_cost_usd": 0.01,
              "usage": {"input_tokens": 100, "output_tokens": 10}}  # fmt: skip
    cmd = f"echo {shlex.quote(json.dumps(result))}"
    docs = (EXAMPLE / "SKILL.md", EXAMPLE / "candidate-lossy.md", EXAMPLE / "transfer-set.json")
    prepared = prepare_run(*docs, judge_model="scripted/rules", store=str(tmp_path / "abeq.db"), confirm=True,
                           runner_cmd=cmd, runner_cmd_version="v1", concurrency=1)  # fmt: skip
    said = describe_estimate(prepared.estimate(), 7)
    assert len(said) == 1 and "14 runs of the runner command" in said[0]
    assert "known only once it has run" in said[0] and "unknown" not in said[0]
    seen = []
    prepared.run(on_progress=seen.append)
    projections = [
        (p["runner_done"], p["runner_projected"]) for p in seen if p["runner_projected"] is not None
    ]
    done, projected = projections[0]
    assert projected == round(0.01 * (14 - done), 4) and projections[-1][1] == 0.0
    prepared.store.close()


def test_claude_codes_stream_is_read_into_its_tool_calls_in_order():
    from abeq.execution.runners.agent_streams import read_stream

    final = 'Done.\n{"self_report": {"output_produced": "notes"}}'
    use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "./SKILL.md"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "# Skill"}
    events = [
        {"type": "system", "subtype": "init", "session_id": "s1", "uuid": "u0", "tools": ["Read"]},
        {"type": "assistant", "message": {"content": [use]}, "session_id": "s1", "uuid": "u1"},
        {"type": "user", "message": {"content": [result]}, "session_id": "s1", "uuid": "u2"},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": final}]}, "uuid": "u3"},
        {"type": "result", "subtype": "success", "result": final, "duration_ms": 337, "session_id": "s1",
         "total_cost_usd": 0.03, "usage": {"input_tokens": 5436, "output_tokens": 111}},
    ]  # fmt: skip
    s = read_stream("\n".join(json.dumps(e) for e in events))
    assert s.kind == "claude-stream" and s.failure == "" and s.facts["total_cost_usd"] == 0.03
    assert s.transcript.split("\n\n", 2) == [
        '[tool call] Read {"file_path": "./SKILL.md"}', "[tool result]\n# Skill", f"[final]\n{final}"
    ]  # fmt: skip
