"""Pay once per case: a teacher transcript is keyed by its own case, not by the set it sits in;
results stored under the old (v1) key, which held the set's hash, are still found."""

from conftest import with_cases

from abeq.execution.engine import Engine
from abeq.execution.keys import legacy_runner_key
from abeq.models import scripted
from abeq.results.reports.report import build_report
from abeq.sets.confirmation import set_hash


def run(store, ex, cfg, ts, candidate="lossy"):
    run_id = Engine(store, ex["original"], ex[candidate], ts, cfg).run()
    return build_report(store, run_id), store.log.call_stats(run_id)


def six_and_seven(example):
    cases = example["ts"].cases
    return with_cases(example, [c for c in cases if c.id != "happy-2"]), with_cases(example, cases)


def as_before_v2(monkeypatch):
    """Make the engine store (and look up) runner results under the v1 key, as abeq did before v2,
    so its judgements are keyed from v1 keys as well."""
    from abeq.execution import calls

    monkeypatch.setattr(calls, "runner_keys", lambda *a: (legacy_runner_key(*a),) * 2)
    return monkeypatch.undo


def test_a_set_with_one_added_case_makes_exactly_one_teacher_call(store, example, scripted_cfg):
    six, seven = six_and_seven(example)
    assert set_hash(six) != set_hash(seven)
    run(store, example, scripted_cfg(), six)
    rr, stats = run(store, example, scripted_cfg(), seven)
    assert stats["teacher_made"] == 1
    assert stats["made"] == 3  # the new case's teacher, candidate and judgement; nothing else
    assert len(rr.report["cases"]) == 7
    assert rr.run["transfer_set_hash"] == set_hash(seven)  # the run still records the set it ran


def test_results_stored_under_the_v1_key_are_found_and_nothing_is_paid_again(
    store, example, scripted_cfg, monkeypatch
):
    cfg, ts = scripted_cfg(), example["ts"]
    back_to_now = as_before_v2(monkeypatch)
    run(store, example, cfg, ts)
    back_to_now()
    v1 = {legacy_runner_key(example["original"].hash, c, "skill", cfg.runner, set_hash(ts)) for c in ts.cases}
    assert v1 <= {r["key"] for r in store.sql.all("select key from runner_results")}
    n = len(scripted.model("rules").history)
    rr, stats = run(store, example, cfg, ts)
    # the transcripts are found under their v1 keys, and so are the judgements made on them
    assert len(scripted.model("rules").history) == n and stats["made"] == 0 and stats["cached"] == 21
    assert rr.report["summary"]["regressions"] == 7
    assert {r.teacher_key for r in rr.rows} == v1


def test_a_v1_result_is_only_found_for_the_set_it_was_stored_with(store, example, scripted_cfg, monkeypatch):
    """The fallback is the v1 key of *this* set: what the old key kept apart stays apart."""
    cfg = scripted_cfg()
    six, seven = six_and_seven(example)
    back_to_now = as_before_v2(monkeypatch)
    run(store, example, cfg, six)
    back_to_now()
    _, stats = run(store, example, cfg, seven)
    assert stats["teacher_made"] == 7  # v1 rows of another set: not taken (and now stored under v2)
    _, stats = run(store, example, cfg, six)
    assert stats["made"] == 0


def test_runner_keys_are_the_current_and_the_v1_key_in_every_mode(example):
    """runner_keys builds both keys from one reading of the case: the same keys as runner_key and
    legacy_runner_key, whatever a runner mode adds to or removes from them."""
    from abeq.execution.keys import runner_key, runner_keys
    from abeq.models import ModelSpec

    spec, doc = ModelSpec(name="openai/x", api_base="http://127.0.0.1:1/v1"), example["original"].hash
    modes = [{}, {"mode": "tools", "prompt": "p@1", "max_steps": 3}, {"command": "agent", "sampling": None}]
    for case in example["ts"].cases[:3]:
        for parts in [*modes, {"transfer_set": "its own"}]:
            for sample in (0, 1):
                assert runner_keys(doc, case, "skill", spec, "set-h", sample, parts) == (
                    runner_key(doc, case, "skill", spec, sample=sample, mode_parts=parts),
                    legacy_runner_key(doc, case, "skill", spec, "set-h", sample, parts),
                )
