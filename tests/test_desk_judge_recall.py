"""The Run page warns before a run whose judge's calibrated regression recall is below the minimum
asked for, or was never measured: the warning `abeq run --min-judge-recall` prints (issue 26)."""

from __future__ import annotations

import pytest

from abeq.cli import main
from abeq.results.store.store import Store


@pytest.fixture
def app(app):
    """The desk on the Run page: the example's set confirmed, both models scripted."""
    app.switch_page("desk_pages/2_transfer_set.py").run()
    app.button(key="confirm").click().run()
    app.switch_page("desk_pages/3_run.py").run()
    app.text_input(key="runner_model").input("scripted/rules")
    app.text_input(key="judge_model").input("scripted/rules").run()
    return app


def warnings(app) -> list[str]:
    """The page's judge warnings, read as text (the page escapes their Markdown)."""
    return [w.value.replace("\\", "") for w in app.warning if "judge scripted/rules" in w.value]


def test_a_judge_never_calibrated_is_warned_of_once_a_minimum_is_set(app, db):
    assert warnings(app) == []  # no minimum: no warning, as abeq run without the flag
    app.number_input(key="min_judge_recall").set_value(0.9).run()
    [said] = warnings(app)
    assert "was never calibrated" in said
    assert "regression recall is unknown (minimum judge recall 0.9)" in said
    assert Store(db).log.runs() == []  # before any run


def test_a_calibrated_judge_is_warned_of_only_below_the_minimum(app, db, capsys):
    assert main(["calibrate", "--judge-model", "scripted/rules", "--db", db, "--quiet"]) == 0
    app.number_input(key="min_judge_recall").set_value(0.3).run()
    assert warnings(app) == []  # 47/105 caught (45%), 28% false regressions: both within 0.3
    app.number_input(key="min_judge_recall").set_value(0.95).run()
    [said] = warnings(app)
    assert "caught 47/105 regressions" in said and "recall 45% is below minimum judge recall 0.95" in said
    assert "false-regression rate 28% is above 0.05" in said
    assert not app.exception
