"""The scripted model's replies per purpose: a reply queued for the judge waits for a judge call,
whatever runner calls come first; each purpose keeps its own calls; the rules answer the rest."""

import json

from abeq.prompts import data_block


def ask(model, *blocks):
    user = "\n\n".join(data_block(n, t) for n, t in blocks)
    return model.respond("scripted/rules", [{"role": "user", "content": user}], None)


RUNNER = (("document", "# Steps\n- write a summary"), ("case_input", "notes for 1.0"))
JUDGE = (("original_run", "{}"), ("candidate_run", "{}"))


def test_a_reply_queued_for_the_judge_waits_for_a_judge_call(scripted_model):
    scripted_model.judge.enqueue("judge reply")
    runner_reply = json.loads(ask(scripted_model, *RUNNER))  # the rules, not the judge's reply
    assert runner_reply["self_report"]["steps_followed_skipped"] == "followed: write a summary"
    assert ask(scripted_model, *JUDGE) == "judge reply"
    assert json.loads(ask(scripted_model, *JUDGE))["verdict"]  # the queue is used up: the rules judge
    assert [len(scripted_model.runner.calls), len(scripted_model.judge.calls)] == [1, 2]
    assert [h["purpose"] for h in scripted_model.HISTORY] == ["runner", "judge", "judge"]


def test_the_shared_queue_comes_first_then_the_purposes_handler_then_the_shared_one(scripted_model):
    scripted_model.enqueue("for anyone")
    scripted_model.judge.always("always the judge")
    scripted_model.handler = lambda model, messages, schema: "shared handler"
    assert ask(scripted_model, *JUDGE) == "for anyone"
    assert ask(scripted_model, *JUDGE) == "always the judge"
    assert ask(scripted_model, *RUNNER) == "shared handler"
    scripted_model.runner.handle(lambda model, messages, schema: None)  # None: on to the next answer
    assert ask(scripted_model, *RUNNER) == "shared handler"
    scripted_model.reset()
    assert not scripted_model.judge.calls and scripted_model.judge.handler is None
