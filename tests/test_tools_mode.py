"""The tools runner mode: the model acts through function calls on a copy of the case's workspace,
on the scripted model and through the loopback HTTP server (both transports)."""

import json

import pytest
from conftest import ROOT, with_cases

from abeq import sets
from abeq.documents import load_document
from abeq.errors import InputError
from abeq.execution.engine import Engine
from abeq.execution.runners.modes import RunnerMode
from abeq.execution.runners.tools import NOT_AVAILABLE
from abeq.models import ModelSpec
from abeq.results.reports.record import run_record
from abeq.results.reports.report import build_report
from abeq.testing.loopback import LoopbackServer

AGENTS_MD = ROOT / "abeq" / "examples" / "agents-md"
TOOLS = RunnerMode(kind="tools")


def run(store, original, candidate, ts, cfg):
    run_id = Engine(store, original, candidate, ts, cfg).run()
    return build_report(store, run_id), store.log.call_stats(run_id)


def observed(store, key) -> dict:
    return json.loads(store.cache.runner_result(key)["observed"])


def test_tools_mode_catches_the_lossy_candidate_and_passes_the_faithful(store, example, scripted_cfg):
    rr, first = run(store, example["original"], example["lossy"], example["ts"], scripted_cfg(mode=TOOLS))
    assert rr.report["summary"]["regressions"] == 7 and all(
        "ticket" in c["behaviour_delta"] for c in rr.report["cases"]
    )
    rr, second = run(store, example["original"], example["faithful"], example["ts"], scripted_cfg(mode=TOOLS))
    assert rr.report["summary"] == {"pass": True, "regressions": 0, "divergences": 0, "equivalents": 7}
    assert first["teacher_made"] == 7 and second["teacher_made"] == 0
    teacher = store.cache.runner_result(rr.rows[0].teacher_key)
    assert (
        teacher["mode"] == "tools" and "read_file" in teacher["transcript"]
    )  # the tool trace is the transcript
    seen = observed(store, rr.rows[0].teacher_key)
    tools = [s["tool"] for s in seen["tool_trace"]]
    assert tools[:2] == ["list_files", "read_file"] and "write_file" in tools
    assert [c["path"] for c in seen["workspace_changes"]] == ["CHANGELOG.md"]


def test_a_chat_run_and_a_tools_run_are_cached_apart(store, example, scripted_cfg):
    run(store, example["original"], example["lossy"], example["ts"], scripted_cfg())
    _, stats = run(store, example["original"], example["lossy"], example["ts"], scripted_cfg(mode=TOOLS))
    assert stats["cached"] == 0


def agents_md(store, scripted_cfg, **case_update):
    original = load_document(AGENTS_MD / "AGENTS.md")
    ts = sets.load(AGENTS_MD / "transfer-set.json")
    cases = [c.model_copy(update=case_update) for c in ts.cases]
    ts = sets.confirm(ts.model_copy(update={"cases": cases}), original.hash)
    cfg = scripted_cfg(mode=TOOLS, variant="instruction-file")
    return run(store, original, load_document(AGENTS_MD / "AGENTS.compressed.md"), ts, cfg)


def test_a_write_in_the_instruction_file_variant_is_refused_and_recorded(store, scripted_cfg):
    rr, _ = agents_md(store, scripted_cfg)
    seen = observed(store, rr.rows[0].teacher_key)
    writes = [s for s in seen["tool_trace"] if s["tool"] == "write_file"]
    assert writes and all(s.get("refused") and "read-only" in s["result"] for s in writes)
    assert "workspace_changes" not in seen  # nothing was written
    assert "(REFUSED)" in store.cache.runner_result(rr.rows[0].teacher_key)["transcript"]


def test_run_command_answers_from_the_cases_scripted_outputs(store, scripted_cfg):
    from abeq.schemas import CommandOutput

    rr, _ = agents_md(
        store, scripted_cfg, command_outputs=[CommandOutput(pattern=r"make test\b", output="41 passed")]
    )
    trace = observed(store, rr.rows[0].teacher_key)["tool_trace"]
    answers = {s["arguments"]["command"]: s["result"] for s in trace if s["tool"] == "run_command"}
    assert answers["make test"] == "exit code 0\n41 passed" and answers["make lint"] == NOT_AVAILABLE


def test_the_step_budget_ends_the_run_with_a_self_report(store, example, scripted_cfg):
    ts = with_cases(example, example["ts"].cases[:1])
    # one step: the first turn asks for two calls (list the files, read the document); the second
    # is refused, then tools are withdrawn (tool_choice "none") and the model must report
    cfg = scripted_cfg(mode=RunnerMode(kind="tools", max_steps=1), allow_thin=True)
    rr, _ = run(store, example["original"], example["lossy"], ts, cfg)
    assert rr.rows[0].status == "judged"
    trace = observed(store, rr.rows[0].teacher_key)["tool_trace"]
    assert [s.get("refused", False) for s in trace] == [False, True] and "budget" in trace[1]["result"]


def test_the_embedded_model_is_refused_for_tools_mode(example):
    from abeq.api import prepare_run

    with pytest.raises(InputError, match="cannot call tools"):
        prepare_run(example["original"], example["lossy"], example["ts"], runner_model="local/smollm2",
                    judge_model="scripted/rules", runner_mode="tools", store=":memory:")  # fmt: skip


@pytest.mark.parametrize("transport", ["fast", "litellm"])
def test_tools_mode_over_the_loopback_http_server(store, example, scripted_cfg, monkeypatch, transport):
    monkeypatch.setenv("ABEQ_TRANSPORT", transport)
    with LoopbackServer() as srv:
        spec = ModelSpec(name="openai/scripted", api_base=srv.url)
        cfg = scripted_cfg(runner=spec, judge=spec, mode=TOOLS)
        rr, _ = run(store, example["original"], example["lossy"], example["ts"], cfg)
        stats = srv.stats
    assert rr.report["summary"]["regressions"] == 7 and not rr.errors
    # every turn of every tools-mode run went over HTTP (a run's attempts are its turns)
    turns = store.sql.one(
        "select sum(attempts) n from calls where run_id = ? and cached = 0", [rr.run["id"]]
    )["n"]
    assert stats["ok"] == turns and turns >= 7 * 2 * 2 + 7  # list+read, (write,) self-report; judge
    seen = observed(store, rr.rows[0].candidate_key)
    assert [c["path"] for c in seen["workspace_changes"]] == ["CHANGELOG.md"]
    record = run_record(store, rr)
    assert (
        record["run"]["runner_mode"] == "tools" and record["cases"][0]["observed"]["candidate"]["tool_trace"]
    )


def test_an_invalid_final_reply_is_re_asked(store, example, scripted_cfg):
    from abeq.models import scripted

    scripted.model("rules").enqueue(
        "I am done, no JSON here."
    )  # one arm's first turn: shown its error, asked again
    ts = with_cases(example, example["ts"].cases[:1])
    rr, _ = run(store, example["original"], example["lossy"], ts, scripted_cfg(mode=TOOLS, allow_thin=True))
    assert rr.rows[0].status == "judged"
    assert any(
        "That was not a valid final reply" in str(h["messages"]) for h in scripted.model("rules").history
    )


def test_a_runner_that_never_reports_is_an_error_not_a_verdict(store, example, scripted_cfg, monkeypatch):
    from abeq.models import scripted

    runner = '<data name="document_path">'
    scripted.model("rules").handler = lambda m, msgs, s: "no JSON" if runner in str(msgs) else None
    ts = with_cases(example, example["ts"].cases[:1])
    rr, _ = run(store, example["original"], example["lossy"], ts, scripted_cfg(mode=TOOLS, allow_thin=True))
    assert rr.rows[0].status == "error" and "no valid self-report" in rr.errors[0]["error"]
    assert rr.report["summary"]["pass"] is False


def test_the_estimate_of_a_tools_run_says_its_ceiling(example, monkeypatch, capsys):
    """A tools-mode runner run is a conversation of many turns: the estimate says what the mode's
    limits allow, priced, besides the one-turn-a-run figures; a chat run's estimate has no such line."""
    from abeq.api import prepare_run
    from abeq.cli.run import print_estimate
    from abeq.models import price

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    kw = dict(runner_model="openai/gpt-4o-mini", store=":memory:", confirm=True)
    docs = (example["original"], example["lossy"], example["ts"])
    tools = prepare_run(*docs, runner_mode="tools", **kw)
    est = tools.estimate()
    assert est["tools_max_turns"] == 14 * (TOOLS.max_steps + 1)
    assert est["tools_max_tokens"] == 14 * TOOLS.max_tokens
    judge_only = est["tools_max_cost"] - price("openai/gpt-4o-mini", est["tools_max_tokens"], 0)
    assert 0 < judge_only < est["est_cost"] < est["tools_max_cost"]
    print_estimate(tools)
    assert f"could reach {est['tools_max_turns']:,} turns" in capsys.readouterr().err
    chat = prepare_run(*docs, **kw)
    print_estimate(chat)
    assert "tools_max_turns" not in chat.estimate() and "tools mode" not in capsys.readouterr().err
