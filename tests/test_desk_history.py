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
