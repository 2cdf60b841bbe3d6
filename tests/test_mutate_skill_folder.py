"""A skill's mutants carry its folder: only SKILL.md changes, so a runner that runs an agent in a
workspace finds the same references/ and scripts/ beside each mutant as beside the original."""

import json

from abeq.documents import load_document
from abeq.mutation.mutants import section_mutants
from abeq.mutation.run import prepare_mutation

SKILL = """---
name: converter
description: Converts units.
---
# Converter

Read `references/conversion-rules.md` first.

## Output
- Give the result in km.
"""


def test_each_mutant_runs_with_the_originals_folder_beside_its_skill_md(tmp_path):
    root = tmp_path / "skill"
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL)
    (root / "references" / "conversion-rules.md").write_text("1 mile = 1.609 km\n")
    (root / "scripts").mkdir()
    (root / "scripts" / "convert.py").write_text("print(1.609)\n")
    doc = load_document(root / "SKILL.md")
    mutants = section_mutants(doc)
    assert len(mutants) == 2 and all(m.document.folder == doc.folder for m in mutants)
    assert all(m.document.text != doc.text for m in mutants)
    cases = {"cases": [{"id": "happy-1", "type": "happy", "input": "Convert 3 miles.",
                        "exercises_sections": ["Converter"]}]}  # fmt: skip
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    # the agent prints what it finds beside the placed SKILL.md: the reference and the script
    cmd = 'd="$(dirname "$ABEQ_DOCUMENT")"; cat "$d/references/conversion-rules.md" "$d/scripts/convert.py"'
    prep = prepare_mutation(root / "SKILL.md", tmp_path / "cases.json", judge_model="scripted/rules",
                            store=str(tmp_path / "abeq.db"), confirm=True, allow_thin=True, concurrency=1,
                            runner_mode="command", runner_cmd=cmd, runner_cmd_version="cat")  # fmt: skip
    rep = prep.run()
    assert rep.report["count"] == 2 and not rep.incomplete
    rows = prep.store.sql.db.query("select doc_hash, transcript from runner_results")
    transcripts = {r["doc_hash"]: r["transcript"] for r in rows}
    prep.store.close()
    assert set(transcripts) == {doc.hash, *(m.hash for m in mutants)}  # the original and each mutant ran
    assert set(transcripts.values()) == {"1 mile = 1.609 km\nprint(1.609)\n"}


def test_the_desks_mutation_test_takes_the_stored_skill_with_its_folder(store):
    from abeq import sets
    from abeq.desk import mutation_vm
    from abeq.schemas import Case, TransferSet

    folder = {"references/conversion-rules.md": "1 mile = 1.609 km\n"}
    row = store.inputs.document(store.inputs.put_document("SKILL.md", SKILL, folder))
    ts = TransferSet(cases=[Case(id="happy-1", type="happy", input="Convert 3 miles.", status="confirmed")])
    ts = sets.confirm(ts, row["hash"], thin_accepted=True)
    state = {"runner_model": "scripted/rules", "judge_model": "scripted/rules"}
    prep = mutation_vm.prepare(store, row, ts, state)
    assert prep.original.hash == row["hash"]  # so its latest report is found for this original
    assert all(m.document.folder == folder for m in prep.mutants)
