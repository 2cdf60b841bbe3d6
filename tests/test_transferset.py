"""Transfer sets: coverage, the thin-set refusal, confirmation, edits, and what bad files are told."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from abeq import sets
from abeq.cli import main
from abeq.documents.sections import sections as doc_sections
from abeq.errors import InputError, ThinSetError
from abeq.schemas import Case, TransferSet

DOC = """# Setup
- read the list

# Rules
- never include ticket ids

# Limits
- if more than 20 changes, add highlights

# Handoff
- hand the draft to changelog-lint

# Gates
- ask the user to confirm the version
"""
SECTIONS = ["Setup", "Rules", "Limits", "Handoff", "Gates"]


def case(cid: str, type_: str = "happy", secs=(), **kw) -> Case:
    return Case(id=cid, type=type_, input=f"input for {cid}", exercises_sections=list(secs), **kw)


def full_set(*extra_secs) -> TransferSet:
    """Five cases, one of each type (two happy), covering Setup, Rules, Limits, Handoff."""
    return TransferSet(
        cases=[
            case("h1", "happy", ["Setup"]),
            case("h2", "happy", ["Rules"]),
            case("e1", "edge", ["Limits"]),
            case("a1", "adversarial", ["Rules", *extra_secs]),
            case("c1", "composition", ["Handoff"]),
        ]
    )


# ---------------------------------------------------------------- coverage
def test_coverage_is_sections_exercised_over_sections_identified():
    cov = sets.coverage(DOC, full_set())
    assert cov.sections_identified == SECTIONS
    assert cov.sections_covered == ["Setup", "Rules", "Limits", "Handoff"]
    assert cov.coverage_pct == 80.0
    assert cov.per_type == {"happy": 2, "edge": 1, "adversarial": 1, "composition": 1}
    assert cov.warnings == [] and cov.runnable


def test_coverage_below_70_percent_names_every_uncovered_section():
    ts = TransferSet(
        cases=[
            case("h1", "happy", ["Setup"]),
            case("e1", "edge", ["setup"]),
            case("a1", "adversarial"),
            case("c1", "composition", ["Handoff"]),
            case("h2"),
        ]
    )
    cov = sets.coverage(DOC, ts)
    assert cov.coverage_pct == 40.0
    [low] = [w for w in cov.warnings if w.startswith("coverage")]
    assert "40% is below 70%" in low
    for s in ("Rules", "Limits", "Gates"):
        assert s in low
    assert "Setup" not in low.split("exercises:")[1]
    # and the behaviour left untested, in the section's own words
    assert "Rules (untested: “never include ticket ids”)" in low and "Gates (untested: “ask the user" in low


def test_text_before_the_first_heading_is_a_section():
    doc = "---\nname: x\n---\n\nAlways answer in French.\n\n" + DOC
    assert doc_sections(doc) == ["Preamble", *SECTIONS]
    cov = sets.coverage(doc, full_set())
    assert "Preamble" not in cov.sections_covered and cov.coverage_pct == round(400 / 6, 1)
    assert sets.coverage(doc, full_set("Preamble")).coverage_pct == round(500 / 6, 1)
    assert doc_sections("---\nname: x\n---\n\n" + DOC) == SECTIONS  # front matter alone is no preamble


def test_a_title_used_under_two_parents_is_two_sections():
    doc = "# Sorting\n## Examples\n- a\n# Writing\n## Examples\n- b\n## Examples\n- c\n"
    # (issue 13) "Sorting" and "Writing" have no text of their own, so they are not sections
    assert doc_sections(doc) == ["Sorting › Examples", "Writing › Examples", "Writing › Examples (2)"]
    ts = TransferSet(cases=[case("h1", "happy", ["Sorting › Examples", "Examples"])])
    cov = sets.coverage(doc, ts)
    assert cov.sections_covered == ["Sorting › Examples"]  # one occurrence covered, not every "Examples"
    assert any(
        "'Examples', which matches more than one section ('Sorting › Examples' and" in w for w in cov.warnings
    )


def test_the_behaviour_named_for_a_section():
    from abeq.documents.sections import first_rule

    assert (
        first_rule("Readers skim.\n\n- Group every change. Then sort it.\n- Other") == "Group every change."
    )
    assert (
        first_rule("Readers skim these notes, so keep\nthem short. More text.")
        == "Readers skim these notes, so keep them short."
    )
    assert first_rule("```\ncode\n```") == "" and len(first_rule("- " + "word " * 40)) == 90


def test_a_section_the_original_lacks_is_warned_and_not_counted():
    cov = sets.coverage(DOC, full_set("Appendix"))
    assert "Appendix" not in cov.sections_covered
    assert any("'Appendix', which the original does not have" in w for w in cov.warnings)


def test_gate_truncated_case_counts_only_sections_up_to_its_gate():
    ts = TransferSet(cases=[case("h1", "happy", ["Setup", "Limits", "Gates"])])
    cov = sets.coverage(DOC, ts, truncated={"h1": "Rules"})
    assert cov.sections_covered == ["Setup"]  # Limits and Gates come after the gate
    assert any("h1 stopped at a gate in 'Rules'" in w for w in cov.warnings)
    # Where it stopped is unknown: nothing it names is claimed as covered.
    unknown = sets.coverage(DOC, ts, truncated={"h1": ""})
    assert unknown.sections_covered == []
    assert any("none of its sections are counted" in w for w in unknown.warnings)


# ---------------------------------------------------------------- thin sets
def test_a_thin_set_is_refused_unless_the_reviewer_accepts_it():
    four = full_set().model_copy(update={"cases": full_set().cases[:4]})  # 4 cases, no composition
    with pytest.raises(ThinSetError) as e:
        sets.require_runnable(DOC, four, allow_thin=False, path="set.json")
    assert "4 case(s), the minimum is 5" in str(e.value) and "composition" in str(e.value)
    assert "set.json" in str(e.value)
    cov = sets.require_runnable(DOC, four, allow_thin=True)
    assert cov.thin and cov.runnable


def test_five_cases_missing_a_type_are_still_thin():
    ts = TransferSet(cases=[case(f"h{i}", "happy", ["Setup"]) for i in range(6)])
    with pytest.raises(ThinSetError, match="no case of type edge, adversarial, composition"):
        sets.require_runnable(DOC, ts, allow_thin=False)


# ---------------------------------------------------------------- confirmation and edits
def test_confirming_freezes_the_set_without_changing_its_hash():
    ts = full_set()
    confirmed = sets.confirm(ts, "doc-sha")
    assert confirmed.user_confirmed and confirmed.document_hash == "doc-sha"
    datetime.fromisoformat(confirmed.confirmation_timestamp)
    assert {c.status for c in confirmed.cases} == {"confirmed"}
    assert sets.set_hash(confirmed) == sets.set_hash(ts)


def test_editing_a_confirmed_set_unconfirms_it_and_records_provenance():
    confirmed = sets.confirm(full_set(), "doc-sha")
    cases = list(confirmed.cases)
    cases[0] = cases[0].model_copy(update={"input": "a different request"})
    cases.append(case("g1", "edge", ["Gates"]))
    edited = sets.edit(confirmed, cases)
    assert not edited.user_confirmed and edited.confirmation_timestamp is None
    assert sets.set_hash(edited) != sets.set_hash(confirmed)
    status = {c.id: c.status for c in edited.cases}
    assert status["h1"] == "user-modified" and status["g1"] == "user-added" and status["e1"] == "confirmed"


def test_an_edit_the_hash_ignores_still_unconfirms():
    confirmed = sets.confirm(full_set(), "doc-sha")
    cases = [
        confirmed.cases[0].model_copy(update={"rationale": "checks the version question"}),
        *confirmed.cases[1:],
    ]
    assert sets.set_hash(sets.edit(confirmed, cases)) == sets.set_hash(confirmed)
    assert not sets.edit(confirmed, cases).user_confirmed
    assert sets.edit(confirmed, list(confirmed.cases)).user_confirmed  # no change, still confirmed


def test_an_edited_case_misses_the_teacher_cache_and_its_neighbours_do_not():
    from abeq.execution.keys import runner_key
    from abeq.models import ModelSpec

    confirmed = sets.confirm(full_set(), "doc-sha")
    edited = sets.edit(
        confirmed, [confirmed.cases[0].model_copy(update={"input": "changed"}), *confirmed.cases[1:]]
    )
    spec = ModelSpec(name="scripted/rules")
    assert runner_key("doc", confirmed.cases[0], "skill", spec) != runner_key(
        "doc", edited.cases[0], "skill", spec
    )
    # the set's hash changed, but a case's transcript depends on that case alone
    # (docs/reference/rules.md, "A case's transcript is the case's own")
    assert sets.set_hash(confirmed) != sets.set_hash(edited)
    assert runner_key("doc", confirmed.cases[1], "skill", spec) == runner_key(
        "doc", edited.cases[1], "skill", spec
    )


# ---------------------------------------------------------------- bad input, every format
GOOD = [
    {"id": "a", "type": "happy", "input": "first request"},
    {"id": "b", "type": "edge", "input": "second request"},
]
WHERE = {
    "json": "case 2 (id 'b')",
    "yaml": "case 2 (id 'b')",
    "csv": "row 3 (id 'b')",
    "jsonl": "line 2 (id 'b')",
}


def write_set(tmp_path: Path, fmt: str, cases: list[dict]) -> Path:
    p = tmp_path / f"set.{fmt}"
    if fmt == "json":
        p.write_text(json.dumps({"cases": cases}))
    elif fmt == "yaml":
        p.write_text(yaml.safe_dump({"cases": cases}))
    elif fmt == "jsonl":
        p.write_text("".join(json.dumps(c) + "\n" for c in cases))
    else:
        cols = list(dict.fromkeys(k for c in [*GOOD, *cases] for k in c))
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols)
        w.writeheader()
        w.writerows(cases)
        p.write_text(buf.getvalue())
    return p


def second(**change) -> list[dict]:
    b = {**GOOD[1], **change}
    return [GOOD[0], {k: v for k, v in b.items() if v is not None}]


PROBLEMS = {
    "missing input": (second(input=None), "input"),
    "unknown type": (second(type="happpy"), "type"),
    "unknown field": (second(colour="red"), "colour"),
}


@pytest.mark.parametrize("fmt", ["json", "yaml", "csv", "jsonl"])
@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_a_bad_case_is_named_with_its_file_place_and_field(tmp_path, fmt, problem):
    cases, fld = PROBLEMS[problem]
    p = write_set(tmp_path, fmt, cases)
    with pytest.raises(InputError) as e:
        sets.load(p)
    msg = str(e.value)
    # in a CSV an unknown field is a whole column, so the header is the place
    where = "row 1 (the header)" if (fmt, problem) == ("csv", "unknown field") else WHERE[fmt]
    assert str(p) in msg and where in msg and fld in msg


@pytest.mark.parametrize("fmt", ["json", "yaml", "csv", "jsonl"])
def test_duplicate_ids_name_both_places(tmp_path, fmt):
    p = write_set(tmp_path, fmt, second(id="a"))
    with pytest.raises(InputError) as e:
        sets.load(p)
    first = {"csv": "row 2", "jsonl": "line 1"}.get(fmt, "case 1")
    assert str(p) in str(e.value) and "duplicate case id 'a'" in str(e.value) and first in str(e.value)


@pytest.mark.parametrize(
    "fmt,text,expect",
    [
        ("json", '{"cases": []}', "no cases"),
        ("yaml", "cases: []\n", "no cases"),
        ("csv", "id,type,input\n", "no cases"),
        ("jsonl", "\n\n", "empty"),
    ],
)
def test_an_empty_set_is_refused(tmp_path, fmt, text, expect):
    p = tmp_path / f"set.{fmt}"
    p.write_text(text)
    with pytest.raises(InputError, match=expect) as e:
        sets.load(p)
    assert str(p) in str(e.value)


@pytest.mark.parametrize(
    "fmt,text,expect",
    [
        ("json", '{"cases": [{"id": "a",\n "type": "happy" "input": "x"}]}', "malformed JSON at line 2"),
        ("yaml", "cases:\n  - id: a\n    input: [unclosed\n  - id: b\n", "malformed YAML at line"),
        ("csv", 'id,type,input\na,happy,"x"\nb,edge,y,surplus\n', "row 3 has more cells than the header"),
        (
            "jsonl",
            '{"id": "a", "type": "happy", "input": "x"}\n{"id": "b", "type": \n',
            "line 2 is not valid JSON",
        ),
    ],
)
def test_a_malformed_file_says_where(tmp_path, fmt, text, expect):
    p = tmp_path / f"set.{fmt}"
    p.write_text(text)
    with pytest.raises(InputError, match=expect) as e:
        sets.load(p)
    assert str(p) in str(e.value)


# ---------------------------------------------------------------- check-set from the CLI
def test_check_set_json_exits_0_when_runnable_and_2_when_refused(tmp_path, capsys, example):
    original = str(example["dir"] / "SKILL.md")
    assert (
        main(
            [
                "check-set",
                "--original",
                original,
                "--transfer-set",
                str(example["dir"] / "transfer-set.json"),
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["coverage_pct"] == 100.0 and out["per_type"]["composition"] == 1
    assert set(out) >= {"sections_identified", "sections_covered", "coverage_pct", "per_type", "warnings"}

    thin = tmp_path / "thin.json"
    thin.write_text(json.dumps({"cases": GOOD}))
    assert main(["check-set", "--original", original, "--transfer-set", str(thin), "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert not out["runnable"] and any(w.startswith("thin transfer set") for w in out["warnings"])
    assert (
        main(["check-set", "--original", original, "--transfer-set", str(thin), "--json", "--allow-thin"])
        == 0
    )


def test_a_case_without_the_optional_fields_hashes_as_before(example):
    """The identity of a case grows only by what it sets: old confirmations and cache keys still hold."""
    from abeq.sets.confirmation import case_identity

    case = next(c for c in example["ts"].cases if not c.assertions)
    assert set(case_identity(case)) == {"input", "gate_responses"}
    checked = type(case).model_validate(
        {**case.model_dump(), "assertions": [{"type": "contains", "value": "[ticket]"}]}
    )
    assert case_identity(checked)["assertions"] == [
        {
            "type": "contains",
            "value": "[ticket]",
            "description": "",
            "metric": "",
            "target": "output",
            "options": {},
        }
    ]
    ts = example["ts"]
    assert sets.set_hash(ts) != sets.set_hash(ts.model_copy(update={"cases": [checked, *ts.cases[1:]]}))
