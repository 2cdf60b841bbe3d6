"""`abeq mutate --model-mutants N`: a model (the scripted one, through the ordinary provider path)
writes subtler mutants, one behaviour weakened or removed each; code discards the ones that remove
nothing or rewrite the document, saying why; the rest run exactly like the section mutants."""

import json

import pytest
from test_mutate import DOC, known_set, prepared

from abeq.cli import main
from abeq.errors import ModelCallError
from abeq.models import scripted


@pytest.fixture
def known(scripted_model, tmp_path):
    """test_mutate's chores document and set, with the scripted model fresh for this test."""
    return known_set(tmp_path)


TOTALS = "- Write the alpha report with totals."
PLANTS = "- Water the epsilon plants daily."


def reply(*mutants: tuple[str, str]) -> str:
    return json.dumps({"mutants": [{"text": t, "removed_behaviour": w} for t, w in mutants]})


def model_mutants(rep) -> list[dict]:
    return [m for m in rep.report["mutants"] if m["kind"] == "model"]


def test_a_model_mutant_is_killed_when_a_case_uses_its_behaviour_and_survives_when_none_does(
    scripted_model, known
):
    doc, ts, tmp = known
    scripted_model.mutator.enqueue(
        reply(
            # a rule softened to a suggestion (the scripted runner follows list items only)
            (
                DOC.replace(TOTALS, "You may write the alpha report with totals."),
                "the alpha report is optional",
            ),
            (DOC.replace(PLANTS, "You may water the epsilon plants daily."), "watering is optional"),
        )
    )
    prep = prepared(doc, ts, tmp, model_mutants=2)
    assert len(scripted_model.mutator.calls) == 1  # one call, through the provider, with the runner model
    assert scripted_model.mutator.calls[0]["model"].endswith("rules")
    assert "document_to_mutate" in scripted_model.mutator.calls[0]["messages"][1]["content"]
    rep = prep.run()
    assert rep.report["count"] == 8 and [m["kind"] for m in rep.report["mutants"]].count("section") == 6
    totals, plants = model_mutants(rep)
    assert (totals["section"], totals["operator"], totals["status"]) == ("Alpha", "model-removal", "killed")
    assert totals["removed_behaviour"] == "the alpha report is optional"
    assert totals["killed_by"] == ["c1"] and totals["removed"] == TOTALS + "\n"  # the lines it changed
    assert (plants["section"], plants["status"], plants["reading"]) == ("Epsilon", "survived", "blind")
    assert rep.score == 4 / 8
    w = rep.report["model_mutants"]
    assert (w["asked"], w["written"], w["kept"], w["discarded"], w["cached"]) == (2, 2, 2, [], False)
    assert w["prompt"].startswith("write-mutants@1#")


def test_a_no_op_and_a_rewrite_are_discarded_with_their_reasons(scripted_model, known):
    doc, ts, tmp = known
    scripted_model.mutator.enqueue(
        reply(
            (DOC, "nothing, really"),
            ("# Chores\n\nDo the chores.\n", "everything"),
            (DOC.replace(TOTALS, "- Write the alpha report."), "no totals"),
            (DOC.replace(TOTALS, "- Write the alpha report."), "no totals, again"),
        )
    )
    prep = prepared(doc, ts, tmp, model_mutants=4)
    w = prep.written
    assert (w["written"], w["kept"]) == (4, 1)
    reasons = {d["index"]: d["reason"] for d in w["discarded"]}
    assert reasons[1].startswith("identical to the original")
    assert reasons[2].startswith("not a near-copy of the original")
    assert reasons[4] == "the same text as another mutant"
    said = "\n".join(prep.warnings)  # never silently: each discard is a warning, and in the report
    assert "model mutant 1 (nothing, really) discarded: identical" in said and "model mutant 2" in said
    assert prep.run().report["model_mutants"]["discarded"] == w["discarded"]


def test_a_model_that_cannot_write_them_is_an_error(scripted_model, known, capsys):
    doc, ts, tmp = known
    scripted_model.mutator.always("I would rather not.")
    with pytest.raises(ModelCallError, match="could not write the 2 mutant"):
        prepared(doc, ts, tmp, model_mutants=2)
    assert len(scripted_model.mutator.calls) == 3  # re-asked, then given up loudly
    argv = ["mutate", "--original", str(tmp / "chores.md"), "--transfer-set", str(tmp / "set.json"),
            "--runner-model", "scripted/rules", "--db", str(tmp / "abeq.db"),
            "--model-mutants", "1"]  # fmt: skip
    assert main(argv) == 3
    assert "could not write the 1 mutant(s) --model-mutants asks for" in capsys.readouterr().err
    # a valid reply whose every mutant is discarded: no mutant to test is an error too, with the reasons
    scripted_model.mutator.handle(lambda model, messages, schema: reply((DOC, "nothing")))
    assert main([*argv, "--fresh"]) == 3
    assert "wrote no usable mutant of the 1 --model-mutants asks for: mutant 1 identical to the original" in (
        capsys.readouterr().err
    )


def test_a_repeat_makes_no_call_and_the_cli_shows_each_mutants_kind(scripted_model, known, capsys):
    doc, ts, tmp = known
    argv = ["mutate", "--original", str(tmp / "chores.md"), "--transfer-set", str(tmp / "set.json"),
            "--runner-model", "scripted/rules", "--mutant-model", "scripted/writer", "--db",
            str(tmp / "abeq.db"), "--concurrency", "1", "--model-mutants", "2",
            "--out", str(tmp / "m.json"), "--markdown", str(tmp / "m.md")]  # fmt: skip
    assert main(argv) == 0
    # the scripted writer drops the document's first list items: Alpha's and Beta's rules
    writer = scripted.model("writer")  # scripted/writer: a model of its own, with its own calls
    assert [c["model"] for c in writer.mutator.calls] == ["writer"]
    rep = json.loads((tmp / "m.json").read_text())
    written = [m for m in rep["mutants"] if m["kind"] == "model"]
    assert [(m["section"], m["status"]) for m in written] == [("Alpha", "killed"), ("Beta", "killed")]
    assert written[0]["removed_behaviour"] == "no longer: Write the alpha report with totals."
    md = (tmp / "m.md").read_text()
    assert "| Alpha | model | no longer: Write the alpha report with totals. | killed by the judge |" in md
    assert "asked scripted/writer" in md and "it wrote 2, 2 kept" in md
    err = capsys.readouterr().err
    assert "without 'no longer: Write the alpha report with totals.' (in Alpha)" in err
    before = len(scripted_model.history) + len(writer.history)
    assert main(argv) == 0  # the writer's reply and every run come from the database
    assert len(scripted_model.history) + len(writer.history) == before
    assert json.loads((tmp / "m.json").read_text())["mutants"] == rep["mutants"]
    assert main([*argv, "--fresh"]) == 0 and len(writer.mutator.calls) == 2


def test_one_word_softened_in_a_long_paragraph_is_a_near_copy_and_a_rewrite_is_not():
    from abeq.documents import Document
    from abeq.mutation.written import checked
    from abeq.schemas import WrittenMutant

    para = "You must always write the tests first, then the code, and keep both short. " * 12
    doc = Document("x.md", f"# Tests\n\n{para}\n\n## Style\n- Use tabs.\n")
    soft = WrittenMutant(text=doc.text.replace("must always", "may", 1), removed_behaviour="tests first")
    m = checked(doc, soft, 1, set())
    assert not isinstance(m, str) and m.section == "Tests" and m.removed == para + "\n"
    assert m.document.text.endswith("- Use tabs.\n") and m.kind == "model"
    short = WrittenMutant(text="# Tests\n\nWrite code.\n", removed_behaviour="most of it")
    assert str(checked(doc, short, 2, set())).startswith("not a near-copy")
