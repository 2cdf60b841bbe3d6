"""What the desk pages show, computed without Streamlit: the view-model functions in abeq/desk take
the store, ids and choices and return what a page lays out."""

from __future__ import annotations

import sys

from abeq import sets as transferset
from abeq.desk import run_vm
from abeq.desk.queries import Progress


def doc_row(doc) -> dict:
    return {"name": doc.name, "content": doc.text, "hash": doc.hash}


# ---------------------------------------------------------------- Run
def test_the_run_page_and_the_cli_say_the_same_estimate(example, store, scripted_cfg, capsys):
    from abeq.api import prepare_run
    from abeq.cli.run import print_estimate

    cfg = scripted_cfg(aa=True, judge_samples=2)
    said = run_vm.estimate_lines(
        store, doc_row(example["original"]), doc_row(example["lossy"]), example["ts"], cfg
    )
    assert said[0].startswith("This run: at most 42 model calls (21 runner, 21 judge, A/A replays included; ")
    prepared = prepare_run(
        example["original"], example["lossy"], example["ts"], runner="scripted/rules", store=store, aa=True,
        judge_samples=2,
    )  # fmt: skip
    print_estimate(prepared)
    assert said[0] in capsys.readouterr().err


def test_an_unconfirmed_set_is_estimated_in_calls_and_refused(example):
    ts = transferset.load(example["dir"] / "transfer-set.json")  # as read: never confirmed
    state: dict = {}
    run_vm.restore_settings(state)
    state["variant"] = "skill"
    cfg = run_vm.run_config(state, ts, "example")
    lines = run_vm.estimate_lines(None, doc_row(example["original"]), doc_row(example["lossy"]), ts, cfg)
    assert lines == [
        "At most 21 model calls (14 runner, 7 judge); the original's cached transcripts are reused, so "
        "later rounds make fewer."
    ]
    gate = run_vm.start_gate(doc_row(example["original"]), ts)
    assert gate.refused and not gate.thin and "press **Confirm**" in gate.errors()[0]


def test_a_thin_confirmed_set_is_refused_and_a_full_one_is_not(example):
    original = doc_row(example["original"])
    assert run_vm.start_gate(original, example["ts"]).errors() == []
    thin = transferset.confirm(
        example["ts"].model_copy(update={"cases": example["ts"].cases[:2]}), original["hash"]
    )
    gate = run_vm.start_gate(original, thin)
    assert gate.refused and gate.errors() == [run_vm.THIN]


def test_the_settings_outlive_the_page_and_make_the_run_config(example):
    state: dict = {}
    run_vm.restore_settings(state)
    state.update(runner_mode="command", runner_cmd="agent -p", runner_cmd_version="v1", concurrency=2.0)
    state["variant"] = "skill"
    run_vm.keep_settings(state)
    cfg = run_vm.run_config(state, example["ts"], "example")
    assert (cfg.mode.kind, cfg.mode.command, cfg.mode.command_version) == ("command", "agent -p", "v1")
    assert cfg.concurrency == 2 and cfg.review == "example" and cfg.judge_samples == 1
    fresh = {k: v for k, v in state.items() if k.startswith("keep:")}  # the page was left: widgets gone
    run_vm.restore_settings(fresh)
    assert fresh["runner_cmd"] == "agent -p" and fresh["concurrency"] == 2.0
    state["runner_mode"] = "chat"  # a command typed, then another mode picked: the command is not used
    assert run_vm.run_config(state, example["ts"], "example").mode.command == ""


def progress(**kw) -> Progress:
    base = dict(
        run_id=1, status="running", total=7, done=3, judged=3, errors=0, runner_done=6, runner_needed=14,
        judge_done=3, judge_needed=7, cache_hits=2, calls_made=7, failed_calls=0, tokens=12345, cost=0.0,
        unpriced=0, elapsed=12.4, eta=None, cancel_requested=False,
    )  # fmt: skip
    return Progress(**{**base, **kw})


def test_progress_reads_as_metrics_and_never_shows_an_unknown_price_as_zero():
    first, second = run_vm.progress_metrics(progress(unpriced=4, failed_calls=1))
    shown = {m.label: (m.value, m.delta) for m in first + second}
    assert shown["Cases done"] == ("3/7", None) and shown["Runner calls"] == ("6/14", None)
    assert shown["Errors"] == (0, "1 call(s) failed") and shown["Time left (est.)"] == ("—", None)
    assert shown["Cost"] == ("unknown", "+4 unpriced call(s)") and shown["Tokens"] == ("12,345", None)
    assert run_vm.progress_metrics(progress(cost=0.5))[1][3].value == "$0.5000"
    assert run_vm.prompt_cache_text(progress()) == ""
    said = run_vm.prompt_cache_text(
        progress(cache_read_tokens=2048, cache_write_tokens=1024, cache_saved=0.01)
    )
    assert said == "Provider prompt cache: 2,048 prompt tokens read from it, 1,024 written; it saved $0.0100."


def test_the_run_view_model_needs_no_streamlit():
    import subprocess

    code = "import sys, abeq.desk.run_vm; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
