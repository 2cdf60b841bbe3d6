"""Issue 24 item 4: promptfoo's `javascript` and `python` asserts (and transforms) from real suites
(tests/fixtures/real/promptfoo, see SOURCES.md) run with Node and Python on both arms of a run on the
scripted model; a check the candidate loses regresses the case like any other check."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from abeq import sets
from abeq.cli import main
from abeq.execution.checks.checks import case_checks, run_check
from abeq.models import scripted
from abeq.models.scripted import rules as scripted_rules
from abeq.prompts import read_data_blocks
from abeq.schemas import Case, RunnerReply, TransferSet

PF = Path(__file__).resolve().parent / "fixtures" / "real" / "promptfoo"
TYPES = ["happy", "edge", "adversarial", "composition"]
ORIGINAL = "# Fruit guide\n\n## Answers\n\n- Name the fruit in one line.\n- Always mention bananas.\n"
CANDIDATE = "# Fruit guide\n\n## Answers\n\n- Name the fruit in one line.\n"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")


def imported(tmp_path: Path) -> list[dict]:
    """The cases of promptfoo's python-assert-external and javascript-assert-external examples, imported
    from copies elsewhere (the scripts travel inside the set)."""
    cases = []
    for name in ("python-assert-external", "javascript-assert-external"):
        shutil.copytree(PF / name, tmp_path / name)
        for c in sets.read_source("promptfoo", tmp_path / name / "promptfooconfig.yaml").cases:
            cases.append({**c, "id": f"{name.split('-')[0]}-{c['id']}", "type": TYPES[len(cases) % 4]})
        shutil.rmtree(tmp_path / name)  # the run must not need the suite's folder
    return cases


def reply(output: str) -> RunnerReply:
    return RunnerReply.model_validate(
        {
            "transcript": output,
            "self_report": {
                "output_produced": output,
                "steps_followed_skipped": "none",
                "ambiguities": "none",
                "improvisation": "none",
                "wanted_to_deviate": "none",
                "gates_hit": [],
            },
        }
    )


def test_a_python_assert_file_runs_with_the_context_promptfoo_passes(tmp_path):
    case = Case.model_validate(next(c for c in imported(tmp_path) if c["id"].startswith("python")))
    [check] = case_checks(case)
    assert check.kind == "code" and check.options["script"]["fn"] == "get_assert"
    assert run_check(check, reply("Yellow bananas, yum"), case) == (True, "returned true")
    assert run_check(check, reply("Lemons"), case) == (False, "returned false")


def test_inline_javascript_and_python_and_a_transform_run_as_promptfoo_runs_them():
    simple = sets.read_source("promptfoo", PF / "simple-test" / "promptfooconfig.yaml").cases[3]
    case = Case.model_validate({**simple, "type": "happy"})
    js, py, _similar = case_checks(case)
    assert run_check(js, reply("Ahoy, matey"), case) == (True, "returned true")
    assert run_check(js, reply("Hello"), case)[0] is False
    assert run_check(py, reply("x" * 301), case) == (True, "score 1")  # max(0, len - 300) > 0
    assert run_check(py, reply("short"), case) == (False, "score 0")
    # defaultTest's `transform: output.trim()` no longer skips a suite's checks: it runs first
    gemma = sets.read_source("promptfoo", PF / "gemma-vs-llama" / "promptfooconfig.yaml").cases
    polar = Case.model_validate({**gemma[3], "type": "happy"})
    [sea_ice] = case_checks(polar)
    assert sea_ice.kind == "code" and run_check(sea_ice, reply("  Less sea ice.  "), polar)[0]
    [similar] = case_checks(Case.model_validate({**gemma[4], "type": "happy"}))
    assert "embedding" in similar.reason  # skipped for what it is, no longer for its transform


def test_a_test_transform_then_an_assert_transform_feed_the_check():
    passion = sets.read_source("promptfoo", PF / "json-output" / "promptfooconfig.yaml").cases[1]
    case = Case.model_validate({**passion, "type": "happy"})
    schema, js, any_of = case_checks(case)
    good = reply('{"color": "purple", "countries": ["Brazil", "India"]}')
    bad = reply('{"color": "green", "countries": ["Peru"]}')
    assert [run_check(c, good, case)[0] for c in (schema, js, any_of)] == [True, True, True]
    assert [run_check(c, bad, case)[0] for c in (schema, js, any_of)] == [True, False, False]
    assert "the transform threw an error" in run_check(js, reply("not json"), case)[1]


def test_a_script_that_throws_fails_with_the_error_as_evidence():
    case = Case(id="c", type="happy", input="x", assertions=[{"type": "javascript", "value": "output.a.b"}])
    passed, evidence = run_check(case_checks(case)[0], reply("text"), case)
    assert not passed and "TypeError" in evidence


def test_javascript_and_python_asserts_run_on_both_arms_and_a_lost_one_regresses(tmp_path):
    ts = TransferSet.model_validate({"cases": imported(tmp_path)})
    (tmp_path / "set.json").write_text(sets.dump(ts))
    (tmp_path / "original.md").write_text(ORIGINAL)
    (tmp_path / "candidate.md").write_text(CANDIDATE)

    def runner(model, messages, schema):  # the scripted runner, with its steps as its output
        blocks = read_data_blocks("\n".join(str(m.get("content")) for m in messages if m["role"] == "user"))
        if "document" not in blocks or "case_input" not in blocks:
            return None
        run = scripted_rules.run_rules(blocks)
        run["self_report"]["output_produced"] = run["transcript"]
        return json.dumps(run)

    scripted.model("rules").handler = runner
    argv = ["run", "--original", str(tmp_path / "original.md"), "--candidate", str(tmp_path / "candidate.md")]
    argv += ["--transfer-set", str(tmp_path / "set.json"), "--runner-model", "scripted/rules"]
    argv += ["--db", str(tmp_path / "abeq.db"), "--confirm", "--quiet", "--allow-thin"]
    argv += ["--out", str(tmp_path / "report.json"), "--record", str(tmp_path / "record.json")]
    assert main(argv) == 2  # the set's code runs only when trusted (issue 33)
    assert main([*argv, "--trust-code"]) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    record = json.loads((tmp_path / "record.json").read_text())
    verdicts = {c["case_id"]: c["verdict"] for c in report["cases"]}
    checks = {c["case_id"]: c["checks"] for c in record["cases"]}
    for cid in [c for c in verdicts if c.startswith("python")]:
        [py] = checks[cid]  # 'bananas' in output.lower(): the teacher mentions them, the candidate not
        assert (py["type"], py["teacher"], py["candidate"], py["outcome"]) == ("python", True, False, "lost")
        assert verdicts[cid] == "candidate-regressed"
    for cid in [c for c in verdicts if c.startswith("javascript")]:
        [js] = checks[cid]  # assert.js returns a grading result that always passes
        assert (js["teacher"], js["candidate"], js["outcome"]) == (True, True, "kept")
        assert "Looks good to me" in js["teacher_evidence"]
