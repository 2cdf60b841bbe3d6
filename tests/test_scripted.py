"""The scripted model's replies per purpose: a reply queued for the judge waits for a judge call,
whatever runner calls come first; each purpose keeps its own calls; the rules answer the rest."""

import json
import subprocess
import sys
import types

from conftest import ROOT

from abeq.models import scripted
from abeq.prompts import data_block


def ask(model, *blocks):
    user = "\n\n".join(data_block(n, t) for n, t in blocks)
    return model.respond("rules", [{"role": "user", "content": user}], None)["content"]


RUNNER = (("document", "# Steps\n- write a summary"), ("case_input", "notes for 1.0"))
JUDGE = (("original_run", "{}"), ("candidate_run", "{}"))


def test_a_reply_queued_for_the_judge_waits_for_a_judge_call(scripted_model):
    scripted_model.judge.enqueue("judge reply")
    runner_reply = json.loads(ask(scripted_model, *RUNNER))  # the rules, not the judge's reply
    assert runner_reply["self_report"]["steps_followed_skipped"] == "followed: write a summary"
    assert ask(scripted_model, *JUDGE) == "judge reply"
    assert json.loads(ask(scripted_model, *JUDGE))["verdict"]  # the queue is used up: the rules judge
    assert [len(scripted_model.runner.calls), len(scripted_model.judge.calls)] == [1, 2]
    assert [h["purpose"] for h in scripted_model.history] == ["runner", "judge", "judge"]


def test_the_shared_queue_comes_first_then_the_purposes_handler_then_the_shared_one(scripted_model):
    scripted_model.enqueue("for anyone")
    scripted_model.judge.always("always the judge")
    scripted_model.handler = lambda model, messages, schema: "shared handler"
    assert ask(scripted_model, *JUDGE) == "for anyone"
    assert ask(scripted_model, *JUDGE) == "always the judge"
    assert ask(scripted_model, *RUNNER) == "shared handler"
    scripted_model.runner.handle(lambda model, messages, schema: None)  # None: on to the next answer
    assert ask(scripted_model, *RUNNER) == "shared handler"
    scripted.forget()  # what the next test sees: new instances
    fresh = scripted.model("rules")
    assert fresh is not scripted_model and not fresh.judge.calls and fresh.judge.handler is None


def test_each_scripted_model_keeps_its_own_state(scripted_model):
    other = scripted.model("other")
    scripted_model.judge.enqueue("for rules only")
    assert ask(other, *JUDGE) != "for rules only" and ask(scripted_model, *JUDGE) == "for rules only"
    assert len(other.history) == 1 and len(scripted_model.history) == 1


def test_the_rules_are_the_instances_own(scripted_model):
    """The provider knows no prompt: an instance may answer by other rules than abeq's own."""
    echo = types.SimpleNamespace(
        read=lambda messages, tools: types.SimpleNamespace(purpose=None),
        reply=lambda prompt, messages, schema, tools, tool_choice: {"content": messages[-1]["content"]},
    )
    mine = scripted.install("echo", rules=echo)
    assert ask(mine, *RUNNER).startswith("<") and scripted.model("echo") is mine
    assert json.loads(ask(scripted_model, *RUNNER))["transcript"]  # abeq's rules, by default


def test_the_scripted_provider_answers_abeqs_prompts_without_the_test_helpers():
    """The rules that read abeq's prompts are the library's (the scripted provider's own): a fresh
    process that asks `scripted/rules` as a runner and a judge loads no module of abeq.testing
    (issue 48: the provider loaded abeq.testing.scripted_rules by name, a cycle no import showed)."""
    probe = (
        "import json, sys\n"
        "from abeq.models import scripted\n"
        "from abeq.prompts import data_block\n"
        "def ask(*blocks):\n"
        "    user = '\\n\\n'.join(data_block(n, t) for n, t in blocks)\n"
        "    reply = scripted.model('rules').respond('rules', [{'role': 'user', 'content': user}], None)\n"
        "    return reply['content']\n"
        f"runner = json.loads(ask(*{RUNNER!r}))\n"
        f"judge = json.loads(ask(*{JUDGE!r}))\n"
        "print(json.dumps([runner['self_report']['steps_followed_skipped'], 'verdict' in judge,\n"
        "                  sorted(m for m in sys.modules if m.startswith('abeq.testing'))]))\n"
    )
    got = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout) == ["followed: write a summary", True, []]
