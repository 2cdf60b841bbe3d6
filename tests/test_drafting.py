"""Drafting a transfer set from the original, through the scripted model and the embedded one."""

from __future__ import annotations

import json

import pytest

from abeq import sets
from abeq.cli import main
from abeq.documents.document import sha256
from abeq.documents.sections import sections
from abeq.models import ModelSpec, scripted
from abeq.prompts import read_data_blocks
from abeq.schemas import CASE_TYPES, TransferSet
from abeq.sets.drafting import draft, draft_cases, draft_messages

SCRIPTED = ModelSpec(name="scripted/rules")


def test_scripted_draft_gives_every_type_with_real_sections(example):
    doc = example["original"].text
    ts = draft_cases(doc, SCRIPTED)
    assert {c.type for c in ts.cases} == set(CASE_TYPES)
    known = set(sections(doc))
    assert all(c.exercises_sections and set(c.exercises_sections) <= known for c in ts.cases)
    assert len({c.id for c in ts.cases}) == len(ts.cases)
    assert {c.status for c in ts.cases} == {"derived"}
    assert not ts.user_confirmed and ts.document_hash == sha256(doc)
    assert sets.coverage(doc, ts).runnable  # a draft of this document is not thin; it still needs confirming


def test_the_gate_gets_a_default_answer(example):
    ts = draft_cases(example["original"].text, SCRIPTED)
    [gate_case] = [c for c in ts.cases if "ask the user to confirm" in c.input]
    assert gate_case.gate_responses and gate_case.gate_responses[0].response


def test_the_original_and_its_sections_go_in_named_data_blocks(example):
    doc = example["original"].text
    blocks = read_data_blocks(draft_messages(doc)[1]["content"])
    assert blocks["original_document"] == doc
    assert blocks["sections"].splitlines() == sections(doc)


def test_code_fixes_ids_drops_invented_sections_and_says_so():
    doc = "# Intro\n- do it\n\n# Limits\n- if over 3, stop\n"
    reply = {
        "cases": [
            {
                "id": "Edge case!",
                "type": "edge",
                "input": "four items",
                "exercises_sections": ["limits", "Appendix"],
                "gate_responses": [],
                "rationale": "pass 2",
            },
            {
                "id": "edge case",
                "type": "happy",
                "input": "one item",
                "exercises_sections": ["## Intro"],
                "gate_responses": [{"pattern": "", "response": "yes"}],
                "rationale": "pass 1",
            },
            {
                "id": "again",
                "type": "happy",
                "input": "  four   items ",
                "exercises_sections": [],
                "gate_responses": [],
                "rationale": "duplicate",
            },
        ]
    }
    scripted.model("rules").enqueue(json.dumps(reply))
    d = draft(doc, SCRIPTED)
    ts = d.transfer_set
    assert [(c.id, c.exercises_sections) for c in ts.cases] == [
        ("edge-case", ["Limits"]),
        ("edge-case-2", ["Intro"]),
    ]
    assert ts.cases[1].gate_responses == []
    text = "\n".join(d.warnings)
    assert "'Appendix'" in text and "renamed it 'edge-case-2'" in text and "repeats the input" in text
    assert ts.coverage.sections_covered == ["Intro", "Limits"]


def test_an_invalid_draft_is_reasked_with_the_errors():
    doc = "# Intro\n- do it\n"
    good = {
        "cases": [
            {
                "id": "h",
                "type": "happy",
                "input": "go",
                "exercises_sections": ["Intro"],
                "gate_responses": [],
                "rationale": "pass 1",
            }
        ]
    }
    scripted.model("rules").enqueue(
        json.dumps({"cases": [{"id": "h", "type": "typical", "input": "go"}]}), json.dumps(good)
    )
    ts = draft_cases(doc, SCRIPTED)
    assert [c.id for c in ts.cases] == ["h"]
    assert "not valid" in scripted.model("rules").history[-1]["messages"][-1]["content"]


def test_draft_set_cli_writes_an_unconfirmed_set(tmp_path, capsys, example):
    out = tmp_path / "drafted.json"
    assert (
        main(
            [
                "draft-set",
                "--original",
                str(example["dir"] / "SKILL.md"),
                "--out",
                str(out),
                "--model",
                "scripted/rules",
            ]
        )
        == 0
    )
    ts = sets.load(out)
    assert not ts.user_confirmed and {c.status for c in ts.cases} == {"derived"}
    assert "Nothing runs until a person has reviewed" in capsys.readouterr().err


@pytest.mark.slow
def test_embedded_model_drafts_a_valid_set(example):
    from abeq.errors import ModelCallError

    doc = example["original"].text
    try:
        d = draft(doc, ModelSpec(name="local/smollm2", max_tokens=1200))
    except ModelCallError as e:  # the honest outcome when the tiny model cannot draft: an error, no set
        # no valid reply at all, or only junk (a name for an input) that code refused
        assert "local/smollm2" in e.message
        assert "no valid reply" in e.message or "drafted no case worth reviewing" in e.message
        return
    ts = TransferSet.model_validate(d.transfer_set.model_dump())
    assert ts.cases and {c.status for c in ts.cases} == {"derived"}
    assert all(set(c.exercises_sections) <= set(sections(doc)) for c in ts.cases)
