"""The mutation map says what it knows (issue 36): a survivor no case names is unmapped, not blind; a
score made with the scripted double says so and is no trust figure; a skill folder's score is found by
check-set; --section tests chosen sections; a kill cancels the mutant's cases in flight; a kill is
told apart by who found it."""

import json
from dataclasses import replace
from pathlib import Path

from test_mutate import known_set, prepared

from abeq import sets
from abeq.cli import main
from abeq.documents import Document
from abeq.models import scripted
from abeq.schemas import Assertion, Case, TransferSet

SKILL = """---
name: converter
description: Converts units.
---
# Converter

Read `references/conversion-rules.md` first.

## Output
- Give the result in km.
- Round to two decimals.

## Tone
| when | say |
|---|---|
| always | be brief |
"""


def skill_folder(tmp_path, sections: list[str]):
    root = tmp_path / "skill"
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL)
    (root / "references" / "conversion-rules.md").write_text("1 mile = 1.609 km\n")
    cases = [
        {"id": f"c{i}", "type": t, "input": f"Convert {i} miles.", "exercises_sections": sections}
        for i, t in enumerate(["happy", "edge", "adversarial", "composition", "happy"], 1)
    ]
    (tmp_path / "cases.json").write_text(json.dumps({"cases": cases}))
    return root / "SKILL.md", tmp_path / "cases.json"


def mutate_args(skill, cases, db, *extra):
    return ["mutate", "--original", str(skill), "--transfer-set", str(cases),
            "--runner-model", "scripted/rules", "--db", str(db), "--confirm", "--quiet", *extra]  # fmt: skip


def test_a_skill_whose_cases_name_no_section_is_unmapped_caveated_and_its_score_found(tmp_path, capsys):
    skill, cases = skill_folder(tmp_path, [])
    db, out, md = tmp_path / "abeq.db", tmp_path / "m.json", tmp_path / "m.md"
    assert main(mutate_args(skill, cases, db, "--out", str(out), "--markdown", str(md))) == 0
    rep = json.loads(out.read_text())
    survivors = [m for m in rep["mutants"] if m["status"] == "survived"]
    assert survivors and {m["reading"] for m in survivors} == {"unmapped"}  # never "blind": nothing is mapped
    assert rep["cases_mapped"] is False and rep["unmapped"] == len(survivors)
    # the JSON, the Markdown and the table say the models are the test double: no trust figure
    assert rep["trust_figure"] is False and "scripted/rules" in rep["model_caveats"][0]
    assert any("list items" in c for c in rep["model_caveats"])
    text = md.read_text()
    assert "Not a trust figure:" in text and "`exercises_sections`" in text and "blind" not in text
    # check-set finds the folder's score (it is stored under the folder's hash, as it looks it up)
    capsys.readouterr()
    assert main(["check-set", "--original", str(skill), "--transfer-set", str(cases), "--db", str(db)]) == 0
    said = capsys.readouterr().out
    assert f"mutation score: {rep['score']:.0%}" in said and "not a trust figure" in said


def test_blind_only_when_cases_are_mapped(tmp_path):
    skill, cases = skill_folder(tmp_path, ["Output"])
    out = tmp_path / "m.json"
    assert main(mutate_args(skill, cases, tmp_path / "abeq.db", "--out", str(out), "--all-cases")) == 0
    readings = {m["section"]: m.get("reading") for m in json.loads(out.read_text())["mutants"]}
    assert readings["Tone"] == "blind" and readings["Output"] is None  # Output: killed


def test_section_tests_only_the_sections_named(tmp_path, capsys):
    skill, cases = skill_folder(tmp_path, ["Output"])
    out = tmp_path / "m.json"
    db = tmp_path / "abeq.db"
    assert main(mutate_args(skill, cases, db, "--out", str(out), "--section", "output")) == 0
    assert [m["section"] for m in json.loads(out.read_text())["mutants"]] == ["Output"]
    capsys.readouterr()
    assert main(mutate_args(skill, cases, db, "--section", "Nowhere")) == 2
    err = capsys.readouterr().err
    assert "--section 'Nowhere' names no section" in err and "Output" in err and "Tone" in err


def test_a_kill_cancels_the_mutants_cases_in_flight(tmp_path):
    """At concurrency 16 every case starts at once: the first kill cancels the others, which end "not
    run", never judged, never errored (without the cancel, each would be judged)."""
    doc, ts, tmp = known_set(tmp_path)
    beta = ts.cases[1]  # c2: uses beta, claims Beta
    cases = [beta.model_copy(update={"id": f"b{i}"}) for i in range(8)]
    ts = sets.confirm(TransferSet(cases=[*ts.cases, *cases]), doc.hash)
    prep = prepared(doc, ts, tmp, sections=["Beta"])
    prep.cfg = replace(prep.cfg, concurrency=16)  # every case admitted at once
    rep = prep.run()
    [m] = rep.report["mutants"]
    assert m["status"] == "killed"
    rows = prep.store.sql.db.query(
        "select status, error_stage from run_cases where run_id = ?", [m["run_id"]]
    )
    status = [r["status"] for r in rows]
    assert "error" not in status and len(status) == len(ts.cases)
    assert status.count("judged") < len(ts.cases)  # the rest were cancelled, not judged


def test_a_kill_only_a_model_graded_check_found_needs_aa_to_count(tmp_path):
    doc = Document("chores.md", "## Alpha\n- Write the alpha report with totals.\n\n## Beta\n- Say hello.\n")
    graded = Assertion(type="llm-rubric", value="alpha report totals", target="transcript")
    cases = [
        Case(id=f"c{i}", type=t, input="Please do the chores.", exercises_sections=["Alpha"],
             assertions=[graded], status="confirmed")
        for i, t in enumerate(["happy", "edge", "adversarial", "composition", "happy"], 1)
    ]  # fmt: skip
    ts = sets.confirm(TransferSet(cases=cases), doc.hash)
    scripted.model("rules").judge.always(  # a judge that notices nothing: only the check can find the loss
        json.dumps(
            {
                "verdict": "equivalent",
                "behaviour_delta": "",
                "original_directness": 5,
                "candidate_directness": 5,
                "interpretation_notes": "same",
            }
        )  # fmt: skip
    )
    rep = prepared(doc, ts, tmp_path, sections=["Alpha"]).run()
    [m] = rep.report["mutants"]
    assert m["status"] == "unconfirmed" and m["evidence"][0]["by"] == "model-graded check"
    assert rep.report["killed"] == 0 and "--aa" in m["errors"][0]
    rep = prepared(doc, ts, tmp_path, sections=["Alpha"], aa=True).run()
    [m] = rep.report["mutants"]
    assert (
        m["status"] == "killed"
        and m["killed_by_judge"] == []
        and m["evidence"][0]["by"] == "model-graded check"
    )


def test_the_token_estimate_is_within_a_quarter_of_the_tokens_used(tmp_path):
    """The bundled example, every case on every mutant from a fresh database: the estimate made before
    the first call against the tokens the calls report (counts, the same on any machine)."""
    from abeq.documents import load_document
    from abeq.mutation.run import prepare_mutation

    ex = Path(__file__).resolve().parents[1] / "abeq" / "examples" / "release-notes"
    original = load_document(ex / "SKILL.md")
    ts = sets.confirm(sets.load(ex / "transfer-set.json"), original.hash)
    prep = prepare_mutation(original, ts, runner_model="scripted/rules", store=str(tmp_path / "a.db"),
                            all_cases=True, max_mutants=3)  # fmt: skip
    est = prep.estimate()["est_tokens"]
    used = prep.run().report["calls"]["tokens"]
    assert 0.75 * used <= est <= 1.25 * used
