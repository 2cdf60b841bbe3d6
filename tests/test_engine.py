"""The run engine on the scripted model: verdicts, the pass rule, caching, resume, errors."""

import json
from dataclasses import replace

import pytest
from conftest import EXAMPLE, with_cases

from abeq import sets
from abeq.errors import NotConfirmedError, ThinSetError
from abeq.execution.engine import Engine
from abeq.execution.keys import judge_key, runner_key
from abeq.models import ModelSpec, scripted
from abeq.results.reports.report import build_report, exit_code
from abeq.schemas import Report


def run(store, ex, cfg, candidate="lossy", ts=None, **kw):
    eng = Engine(store, ex["original"], ex[candidate], ts or ex["ts"], cfg, **kw)
    run_id = eng.run()
    return build_report(store, run_id), store.log.call_stats(run_id)


def test_lossy_candidate_regresses_and_fails(store, example, scripted_cfg):
    rr, _ = run(store, example, scripted_cfg())
    Report.model_validate(rr.report)
    assert rr.report["summary"] == {"pass": False, "regressions": 7, "divergences": 0, "equivalents": 0}
    assert all("ticket" in c["behaviour_delta"] for c in rr.report["cases"])
    assert exit_code(rr) == 1


def test_faithful_candidate_is_equivalent_and_passes(store, example, scripted_cfg):
    rr, _ = run(store, example, scripted_cfg(), candidate="faithful")
    assert rr.report["summary"] == {"pass": True, "regressions": 0, "divergences": 0, "equivalents": 7}
    assert all(c["behaviour_delta"] == "" for c in rr.report["cases"])
    assert exit_code(rr) == 0


def test_round_two_makes_no_teacher_calls(store, example, scripted_cfg):
    _, first = run(store, example, scripted_cfg())
    assert first["teacher_made"] == 7
    _, second = run(store, example, scripted_cfg(), candidate="faithful")
    assert second["teacher_made"] == 0
    assert second["made"] == 14  # 7 candidate runs + 7 judgements


def test_identical_rerun_makes_no_model_calls(store, example, scripted_cfg):
    run(store, example, scripted_cfg())
    n = len(scripted.model("rules").history)
    rr, stats = run(store, example, scripted_cfg())
    assert len(scripted.model("rules").history) == n
    assert stats["made"] == 0 and stats["cached"] == 21
    assert rr.report["summary"]["regressions"] == 7


def test_fresh_ignores_the_cache(store, example, scripted_cfg):
    run(store, example, scripted_cfg())
    _, stats = run(store, example, scripted_cfg(fresh=True))
    assert stats["made"] == 21


def _key_parts(example):
    case = example["ts"].cases[0]
    spec = ModelSpec(name="scripted/rules")
    return dict(
        doc_hash=example["original"].hash,
        case=case,
        variant="skill",
        spec=spec,
    )


@pytest.mark.parametrize(
    "change",
    ["doc", "input", "gate", "model", "variant", "temperature", "max_tokens", "seed", "sample"],
)
def test_every_part_of_the_runner_key_matters(example, change):
    base = _key_parts(example)
    k0 = runner_key(**base)
    p = dict(base)
    case = p["case"]
    if change == "doc":
        p["doc_hash"] = "0" * 64
    elif change == "input":
        p["case"] = case.model_copy(update={"input": case.input + " "})
    elif change == "gate":
        p["case"] = case.model_copy(update={"gate_responses": []})
    elif change == "model":
        p["spec"] = replace(p["spec"], name="scripted/other")
    elif change == "variant":
        p["variant"] = "instruction-file"
    elif change in ("temperature", "max_tokens", "seed"):
        p["spec"] = replace(p["spec"], **{change: {"temperature": 0.5, "max_tokens": 7, "seed": 9}[change]})
    elif change == "sample":
        assert runner_key(**p, sample=1) != k0
        return
    assert runner_key(**p) != k0


def test_case_status_does_not_change_the_key(example):
    base = _key_parts(example)
    p = dict(base, case=base["case"].model_copy(update={"status": "user-modified"}))
    assert runner_key(**p) == runner_key(**base)


def test_judge_key_depends_on_both_runs_and_the_judge(example):
    spec = ModelSpec(name="scripted/rules")
    k = judge_key("a", "b", spec, 0, False)
    assert k != judge_key("a", "c", spec, 0, False)
    assert k != judge_key("a", "b", replace(spec, name="scripted/x"), 0, False)
    assert k != judge_key("a", "b", spec, 1, False)


def test_editing_a_case_misses_the_teacher_cache(store, example, scripted_cfg):
    run(store, example, scripted_cfg())
    cases = list(example["ts"].cases)
    cases[0] = cases[0].model_copy(update={"input": cases[0].input + "\nAlso: one more change."})
    edited = sets.edit(example["ts"], cases)
    assert not edited.user_confirmed
    edited = sets.confirm(edited, example["original"].hash)
    _, stats = run(store, example, scripted_cfg(), ts=edited)
    assert stats["teacher_made"] == 1  # only the edited case: the others' transcripts are reused


def test_unconfirmed_set_is_refused_before_any_call(store, example, scripted_cfg):
    ts = example["ts"].model_copy(update={"user_confirmed": False})
    with pytest.raises(NotConfirmedError):
        Engine(store, example["original"], example["lossy"], ts, scripted_cfg()).run()
    assert scripted.model("rules").history == []
    assert store.log.runs() == []


def test_thin_set_is_refused_unless_accepted(store, example, scripted_cfg):
    thin = with_cases(example, example["ts"].cases[:3])
    with pytest.raises(ThinSetError):
        Engine(store, example["original"], example["lossy"], thin, scripted_cfg()).run()
    rr, _ = run(store, example, scripted_cfg(allow_thin=True), ts=thin)
    assert len(rr.report["cases"]) == 3
    assert rr.run["thin_accepted"] == 1


def test_missing_self_report_field_is_retried_then_an_error(store, example, scripted_cfg, scripted_model):
    bad = json.dumps({"transcript": "did it", "self_report": {"output_produced": "x"}})
    scripted_model.runner.always(bad)  # the first ask and every retry
    rr, stats = run(store, example, scripted_cfg(concurrency=1))
    assert rr.report["cases"] == []
    assert len(rr.errors) == 7 and all(e["stage"] == "runner" for e in rr.errors)
    assert "no valid reply after 3 attempts" in rr.errors[0]["error"]
    assert rr.report["summary"]["pass"] is False
    assert exit_code(rr) == 3
    assert store.sql.one("select count(*) n from runner_results")["n"] == 0  # errors are never cached


def test_a_report_fixed_on_the_second_ask_is_used(store, example, scripted_cfg, scripted_model):
    scripted_model.runner.enqueue('{"transcript": "x", "self_report": {}}')  # the first runner reply only
    rr, _ = run(store, example, scripted_cfg(concurrency=1))
    assert rr.report["summary"]["regressions"] == 7 and not rr.errors
    assert store.sql.one("select max(attempts) a from runner_results")["a"] == 2


def test_judge_equivalent_with_a_delta_is_not_accepted(store, example, scripted_cfg, scripted_model):
    bogus = json.dumps(
        {
            "verdict": "equivalent",
            "behaviour_delta": "lost the ticket rule",
            "original_directness": 3,
            "candidate_directness": 3,
            "interpretation_notes": "n",
        }
    )
    scripted_model.judge.always(bogus)
    rr, _ = run(store, example, scripted_cfg())
    assert rr.report["cases"] == [] and len(rr.errors) == 7
    assert all(e["stage"] == "judge" for e in rr.errors)
    assert "empty behaviour_delta" in rr.errors[0]["error"]


def test_regressed_without_a_delta_is_not_accepted(store, example, scripted_cfg, scripted_model):
    bogus = json.dumps(
        {
            "verdict": "candidate-regressed",
            "behaviour_delta": " ",
            "original_directness": 3,
            "candidate_directness": 3,
            "interpretation_notes": "n",
        }
    )
    scripted_model.judge.always(bogus)
    rr, _ = run(store, example, scripted_cfg())
    assert len(rr.errors) == 7 and rr.report["summary"]["pass"] is False


def test_resume_after_a_crash_repeats_nothing_finished(store, example, scripted_cfg, scripted_model):
    def crash_after_four_judgements(model, messages, schema):
        if len(scripted_model.judge.calls) > 4:
            raise SystemExit("simulated crash")
        return None  # the rules judge

    scripted_model.judge.handle(crash_after_four_judgements)
    with pytest.raises(SystemExit):
        run(store, example, scripted_cfg(concurrency=1))
    first_calls = len(scripted.model("rules").history)
    scripted.forget()
    rr, stats = run(store, example, scripted_cfg(concurrency=1))
    # Four cases were complete (2 runs + 1 judge each) and the fifth had both runs cached, so the
    # second attempt asks the fifth judgement and the last two cases only.
    assert first_calls == 4 * 3 + 3
    assert len(scripted.model("rules").history) == 1 + 2 * 3
    assert stats["cached"] == 4 * 3 + 2
    assert rr.report["summary"]["regressions"] == 7
    assert len(store.log.runs()) == 1  # the same run was resumed, not a second one made


def test_concurrent_and_sequential_give_the_same_report(tmp_path, example, scripted_cfg):
    from abeq.results.store.store import Store

    a, b = Store(str(tmp_path / "a.db")), Store(str(tmp_path / "b.db"))
    ra, _ = run(a, example, scripted_cfg(concurrency=1))
    rb, _ = run(b, example, scripted_cfg(concurrency=8))
    assert ra.report == rb.report


def test_gate_truncated_case_is_marked(store, example, scripted_cfg):
    rr, _ = run(store, example, scripted_cfg(), candidate="faithful")
    truncated = {r.case_id for r in rr.rows if r.gate_truncated}
    assert truncated == {"edge-2"}
    # listed beside the report (which stays exact) and in the JUnit XML
    assert [t["case_id"] for t in rr.with_errors()["gate_truncated"]] == ["edge-2"]
    Report.model_validate(rr.report)
    from abeq.results.reports.exports import to_junit

    assert "gate-truncated" in to_junit(rr) and to_junit(rr).count("gate-truncated at") == 1


def test_the_cache_key_holds_the_server_and_the_weights(tmp_path):
    case = sets.load(EXAMPLE / "transfer-set.json").cases[0]

    def key(spec):
        return runner_key("doc", case, "skill", spec)

    assert key(ModelSpec("openai/llama", api_base="http://10.0.0.1/v1")) != key(
        ModelSpec("openai/llama", api_base="http://10.0.0.2/v1")
    )
    assert key(ModelSpec("openai/llama", api_base="http://10.0.0.1/v1/")) == key(
        ModelSpec("openai/llama", api_base="http://10.0.0.1/v1")
    )
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"weights one")
    first = key(ModelSpec(f"local/{gguf}"))
    assert key(ModelSpec(f"local/{gguf}")) == first
    gguf.write_bytes(b"other weights")  # the file was replaced: another model
    assert key(ModelSpec(f"local/{gguf}")) != first


def test_replies_that_never_validate_still_count_their_tokens(store, example, scripted_cfg, scripted_model):
    scripted_model.runner.always("not json at all")
    rr, stats = run(store, example, scripted_cfg())
    assert len(rr.errors) == 7
    failed = store.sql.all("select prompt_tokens, completion_tokens, cost from calls where ok = 0")
    assert failed and all(r["prompt_tokens"] > 0 and r["completion_tokens"] > 0 for r in failed)
    assert stats["prompt_tokens"] >= sum(r["prompt_tokens"] for r in failed)
