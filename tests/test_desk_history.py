"""History's view-model (issue 38): its charts and its default pair of runs say which models they
come from and do not mix runs of different models silently."""

from __future__ import annotations

from abeq.desk import history_vm as vm


def row(run: int, rnd: int, runner: str = "m/a", judge: str = "m/a") -> dict:
    return {"run": run, "round": rnd, "runner": runner, "judge": judge}


def test_the_charts_take_the_rounds_runs_with_the_latest_models_and_say_so():
    rows = [row(1, 1), row(2, 1, "m/b", "m/j"), row(3, 2), row(4, 3, "m/b", "m/j")]
    chosen, said, warn = vm.chart_rounds(rows)
    assert [r["run"] for r in chosen] == [2, 4]  # the latest run's models: m/b / m/j
    assert said == "Bars from round 1: run 2 (m/b / m/j); round 3: run 4 (m/b / m/j)."
    assert "not in these charts (m/a)" in warn and "Round(s) 2 ran only with other models" in warn
    assert vm.chart_rounds([row(1, 1), row(2, 2)])[2] == ""  # one model pair: nothing to warn of


def test_before_and_after_default_to_runs_of_the_same_models():
    rows = [row(1, 1), row(2, 1, "m/b"), row(3, 2)]
    assert vm.default_pair(rows) == (1, 3)  # not run 2, made with another runner
    assert "different models (run 2: m/b / m/a; run 3: m/a)" in vm.pair_warning(rows, 2, 3)
    assert vm.pair_warning(rows, 1, 3) == ""


def test_directness_is_drawn_on_its_whole_scale():
    y = vm.directness_spec()["encoding"]["y"]
    assert y["scale"]["domain"] == [1, 5] and y["axis"]["values"] == [1, 2, 3, 4, 5]


def test_a_round_reads_the_reviews_made_in_its_earlier_runs(tmp_path):
    """An override made before the round was run again still counts in the round's bars (issue 38)."""
    from abeq.results.reports import history
    from abeq.results.reports.report import build_report
    from abeq.results.store.store import Store
    from abeq.testing.synthetic import synthetic_run

    store = Store(str(tmp_path / "h.db"))
    first = synthetic_run(store, 6, review="r", error_every=0, seed=1)
    second = synthetic_run(store, 6, review="r", error_every=0, seed=2)  # round 1 again
    regressed = next(c for c in build_report(store, second).rows if c.verdict == "candidate-regressed")
    store.ledger.add_override(first, regressed.case_id, "equivalent", "by hand", "ana", "candidate-regressed")
    rows = history.rounds(store, store.inputs.review("r")["id"])
    [plain], _, _ = vm.chart_rounds(rows)
    [read], said, _ = vm.chart_rounds(rows, store)
    assert read["run"] == second and read["carried reviews"] == 1
    assert (read["regressed"], read["equivalent"]) == (plain["regressed"] - 1, plain["equivalent"] + 1)
    assert said == "Bars from round 1: run 2 (synthetic), with 1 review(s) from earlier runs of the round."


def test_before_and_after_differ_only_in_the_candidate_by_default_and_any_other_difference_is_said():
    """Issue 46: two runs of one candidate that differ only in API base were compared unwarned."""
    import json

    def run(i: int, base: str | None = None) -> dict:
        runner = {"model": "m/a", "temperature": 0, **({"api_base": base} if base else {})}
        config = {
            "runner": runner,
            "judge": {"model": "m/a"},
            "concurrency": i,
        }  # concurrency: not in the key
        return {"id": i, "original_hash": "o", "transfer_set_hash": "s", "config": json.dumps(config)}

    rows = [
        dict(row(1, 1), candidate="a.md"),
        dict(row(2, 2), candidate="b.md"),
        dict(row(3, 2), candidate="b.md"),
    ]
    runs = {1: run(1), 2: run(2), 3: run(3, "http://127.0.0.1:9/v1")}
    assert vm.default_pair(rows, runs) == (2, 3)  # no earlier run shares run 3's key: same models
    said = vm.pair_warning(rows, 2, 3, runs).replace("\\", "")
    assert "runner.api_base (none vs http" in said and "same candidate" in said
    runs[3] = run(3)
    assert vm.default_pair(rows, runs) == (1, 3)  # same key, another candidate
    assert vm.pair_warning(rows, 1, 3, runs) == ""
