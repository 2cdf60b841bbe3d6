"""A skill is a folder: SKILL.md's references, scripts and assets travel with it — in its hash,
into the workspace beside it, into check-set's documents_read — and a candidate SKILL.md is tested
with the original's files (a candidate folder with its own)."""

import json

import pytest

from abeq.api import prepare_run
from abeq.cli import main
from abeq.documents import load_document
from abeq.errors import InputError

SKILL = """---
name: converter
description: Converts units.
---
# Converter

Read `references/conversion-rules.md` first, and the table in forms.md.

- Convert what the user gives.
"""


def skill_folder(root, rules="1 mile = 1.609 km\n", skill=SKILL):
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(skill)
    (root / "references").mkdir()
    (root / "references" / "conversion-rules.md").write_text(rules)
    (root / "forms.md").write_text("| unit | factor |\n")
    (root / "unrelated.txt").write_text("a file SKILL.md never names\n")
    return root


def test_a_skills_folder_travels_in_its_hash(tmp_path):
    doc = load_document(skill_folder(tmp_path / "a") / "SKILL.md")
    assert dict(doc.files) == {
        "references/conversion-rules.md": "1 mile = 1.609 km\n",
        "forms.md": "| unit | factor |\n",
    }
    other = load_document(skill_folder(tmp_path / "b", rules="1 mile = 1.6 km\n"))  # the folder itself
    assert other.text == doc.text and other.hash != doc.hash  # a changed reference is another document
    (tmp_path / "b" / "references" / "blob.bin").write_bytes(b"\x00\x01")
    with pytest.raises(InputError, match="blob.bin"):
        load_document(tmp_path / "b" / "SKILL.md")


def cases(tmp_path, original):
    ts = {"cases": [{"id": "happy-1", "type": "happy", "input": "Convert 3 miles.",
                     "exercises_sections": ["Converter"]}]}  # fmt: skip
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(ts))
    return path


def run(tmp_path, original, candidate):
    # the agent prints the reference it finds beside the placed SKILL.md
    cmd = 'cat "$(dirname "$ABEQ_DOCUMENT")/references/conversion-rules.md"'
    prepared = prepare_run(original, candidate, cases(tmp_path, original), judge_model="scripted/rules",
                           store=str(tmp_path / "abeq.db"), confirm=True, allow_thin=True,
                           runner_mode="command", runner_cmd=cmd, runner_cmd_version="cat")  # fmt: skip
    rr = prepared.run()
    transcripts = {
        r["doc_hash"]: r["transcript"] for r in prepared.store.sql.db.query("select * from runner_results")
    }
    prepared.store.close()
    return prepared, rr, transcripts


def test_the_candidate_skill_md_is_run_with_the_originals_files_beside_it(tmp_path):
    original = skill_folder(tmp_path / "skill") / "SKILL.md"
    candidate = tmp_path / "SKILL.short.md"
    candidate.write_text(SKILL.replace("- Convert what the user gives.", "- Convert."))
    prepared, rr, transcripts = run(tmp_path, original, candidate)
    assert not rr.errors and any("original skill's 2 other files" in w for w in prepared.warnings)
    assert list(transcripts.values()) == ["1 mile = 1.609 km\n"] * 2  # both arms found the reference


def test_a_candidate_folder_brings_its_own_files_and_the_difference_is_said(tmp_path):
    original = skill_folder(tmp_path / "skill") / "SKILL.md"
    candidate = skill_folder(tmp_path / "skill-v2", rules="1 mile = 1.6 km\n")
    prepared, rr, transcripts = run(tmp_path, original, candidate)
    assert any("changed: references/conversion-rules.md" in w for w in prepared.warnings)
    assert sorted(transcripts.values()) == ["1 mile = 1.6 km\n", "1 mile = 1.609 km\n"]
    # stored with its files: a resumed run rebuilds the same documents
    from abeq.results.store.store import Store

    store = Store(str(tmp_path / "abeq.db"))
    row = store.inputs.document(load_document(candidate).hash)
    assert row and store.inputs.document_files(row)["references/conversion-rules.md"] == "1 mile = 1.6 km\n"
    store.close()


def test_check_set_lists_the_skills_files_as_read(tmp_path, capsys):
    original = skill_folder(tmp_path / "skill") / "SKILL.md"
    main(
        ["check-set", "--original", str(original), "--transfer-set", str(cases(tmp_path, original)), "--json"]
    )
    out = json.loads(capsys.readouterr().out)
    assert out["documents_read"] == ["SKILL.md", "forms.md", "references/conversion-rules.md"]


def test_the_desk_keeps_a_skills_folder_and_says_which_files_differ(tmp_path, store):
    from abeq.desk import documents_vm, run_vm, session

    original = load_document(skill_folder(tmp_path / "skill"))
    rid = session.create_review(store, "converter")
    review = next(r for r in store.inputs.reviews() if r["id"] == rid)
    session.set_original(store, review, original.name, original.text, original.folder)
    review = next(r for r in store.inputs.reviews() if r["id"] == rid)
    assert review["original_hash"] == original.hash
    state: dict = {}
    session.set_candidate(store, review, state, "SKILL.short.md", SKILL.replace("Convert what", "Do what"))
    orig_row, cand_row = (
        store.inputs.document(review["original_hash"]),
        session.current_candidate(store, review, state),
    )
    said = documents_vm.folder_said(store, review, "candidate", cand_row)
    assert "original's 2 other files, unchanged" in said  # a pasted candidate runs with the original's folder
    docs = run_vm.documents(store, orig_row, cand_row)
    assert docs[0].hash == original.hash and docs[1].folder == original.folder
    v2 = load_document(skill_folder(tmp_path / "v2", rules="1 mile = 1.6 km\n"))
    session.set_candidate(store, review, state, v2.name, v2.text, v2.folder)
    said = documents_vm.folder_said(
        store, review, "candidate", session.current_candidate(store, review, state)
    )
    assert "changed references/conversion-rules.md" in said
    assert "forms.md" in documents_vm.folder_said(store, review, "original", orig_row)
