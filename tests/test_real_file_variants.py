"""Issue 24: classes of real files the first round of the corpus did not hold (tests/fixtures/real,
see SOURCES.md): evals without their wrapper, trigger evals under `queries`, promptfoo CSV special
columns, headings with backticks beside punctuation, quoted home imports, tests from a glob, check-like
fields in the plural, drafts that are junk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from abeq import sets
from abeq.cli import main
from abeq.documents import load_document
from abeq.documents.sections import outline
from abeq.errors import InputError
from abeq.models import ModelSpec, scripted
from abeq.schemas import Case, TransferSet
from abeq.sets.drafting import draft
from abeq.sets.imported import detect_format

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
PF = REAL / "promptfoo"
SC = REAL / "skill-creator"
CACHEWIPE = SC / "longwind48__cachewipe__evals.json"
TUI_TRIGGERS = SC / "diegomarino__tui-design__trigger-evals.json"
TSLSP = REAL / "instructions" / "0xdeafcafe__tslsp-cli" / "CLAUDE.md"


# ---------------------------------------------------------------- 1. a bare list of evals
def bare_evals(tmp_path: Path) -> Path:
    """cachewipe's evals, written the way several skill repositories write evals.json: the list alone."""
    evals = json.loads(CACHEWIPE.read_text(encoding="utf-8"))["evals"]
    p = tmp_path / "evals.json"
    p.write_text(json.dumps(evals, indent=2, ensure_ascii=False), encoding="utf-8")
    return p


def test_a_bare_list_of_evals_is_detected_by_what_its_rows_hold(tmp_path, capsys):
    p, out = bare_evals(tmp_path), tmp_path / "cases.json"
    assert detect_format(str(p), p.read_text(encoding="utf-8")) == "skill-creator"
    assert main(["import-set", str(p), "--out", str(out), "--default-type", "happy"]) == 0
    assert "read as skill-creator" in capsys.readouterr().err
    wrapped = sets.read_source("skill-creator", CACHEWIPE).cases
    assert [c.input for c in sets.load(out).cases] == [c["input"] for c in wrapped]


def test_evals_given_to_abeqs_own_reader_say_to_use_the_skill_creator_one(tmp_path, capsys):
    p = bare_evals(tmp_path)
    with pytest.raises(InputError) as e:
        sets.read_source("json", p)
    assert "skill-creator evals" in str(e.value) and "--from skill-creator" in e.value.hint
    assert main(["import-set", "--from", "json", str(p), "--out", str(tmp_path / "o.json")]) == 2
    assert "Extra inputs" not in capsys.readouterr().err


# ---------------------------------------------------------------- 2. promptfoo CSV special columns
def test_csv_config_columns_set_thresholds_and_never_reach_the_input():
    cases = sets.read_source("promptfoo", PF / "config-csv-metadata" / "promptfooconfig.yaml").cases
    assert [c["input"] for c in cases] == ["machine learning", "quantum physics", "climate change"]
    assert [[a["options"].get("threshold") for a in c["assertions"]] for c in cases] == [
        [0.9, 0.8],
        [0.85, 0.75],
        [0.7, 0.675],
    ]
    assert cases[1]["metadata"]["tags"] == ["physics", "advanced,theory", "quantum"]
    assert cases[0]["metadata"]["threshold"] == 0.8  # promptfoo copies each setting onto the metadata


@pytest.mark.parametrize(
    "header,cell,message",
    [
        ("__config:__expected:weight", "2", "sets 'weight'"),
        ("__config:__expected:threshold", "high", "not a number"),
        ("__config:threshold", "0.5", "not a __config column"),
    ],
)
def test_a_config_column_promptfoo_would_refuse_is_refused(tmp_path, header, cell, message):
    (tmp_path / "t.csv").write_text(f"topic,__expected,{header}\nfruit,contains: apple,{cell}\n")
    with pytest.raises(InputError, match=message):
        sets.read_source("promptfoo", tmp_path / "t.csv")


# ---------------------------------------------------------------- 5. trigger evals under `queries`
def test_a_trigger_eval_under_queries_is_recognised_and_gives_its_queries(tmp_path, capsys):
    text = TUI_TRIGGERS.read_text(encoding="utf-8")
    assert detect_format(str(TUI_TRIGGERS), text) == "skill-creator"
    with pytest.raises(InputError, match="trigger eval \\(30 entries of query \\+ should_trigger\\)"):
        sets.read_source("skill-creator", TUI_TRIGGERS)
    imp = sets.read_source("detect", TUI_TRIGGERS, trigger_queries=True)
    queries = [q for q in json.loads(text)["queries"] if q["should_trigger"]]
    assert [c["input"] for c in imp.cases] == [q["query"] for q in queries]
    assert imp.cases[0]["id"] == "query-T01" and imp.cases[0]["metadata"]["area"] == "design a TUI"


# ---------------------------------------------------------------- 6. backticks beside punctuation
def test_backticks_beside_punctuation_do_not_block_a_match():
    names = [
        "Schema layer (src/schema.ts)",
        "agent integration (src/skill-install.ts + skills/tslsp/SKILL.md)",
    ]
    ts = TransferSet(
        cases=[Case(id=f"c{i}", type="happy", input="x", exercises_sections=[n]) for i, n in enumerate(names)]
    )
    cov = sets.coverage(TSLSP.read_text(encoding="utf-8"), ts)
    assert cov.unknown_sections == []
    assert cov.sections_covered == [
        "Schema layer (`src/schema.ts`)",
        "Agent integration (`src/skill-install.ts` + `skills/tslsp/SKILL.md`)",
    ]


# ---------------------------------------------------------------- 8. a quoted home import
def test_a_quoted_import_is_the_path_inside_the_quotes(tmp_path):
    (tmp_path / ".git").mkdir()
    shutil.copy(TSLSP, tmp_path / "CLAUDE.md")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "my notes.md").write_text("- notes\n")
    with open(tmp_path / "CLAUDE.md", "a", encoding="utf-8") as f:
        f.write("\n- personal rules: @'~/claude/rules/x.md'\n- team notes: @\"docs/my notes.md\"\n")
    doc = load_document(tmp_path / "CLAUDE.md")
    assert doc.read == ("CLAUDE.md", "docs/my notes.md")
    [note] = doc.notes
    assert "@~/claude/rules/x.md: a file in your home directory" in note


# ---------------------------------------------------------------- 9. the smaller ones
def test_cases_from_a_glob_say_which_file_each_came_from(tmp_path):
    src = PF / "jsonl-test-cases"
    (tmp_path / "tests").mkdir()
    shutil.copy(src / "cases.jsonl", tmp_path / "tests" / "a.jsonl")
    shutil.copy(src / "cases.jsonl", tmp_path / "tests" / "b.jsonl")
    config = (src / "promptfooconfig.yaml").read_text(encoding="utf-8")
    (tmp_path / "promptfooconfig.yaml").write_text(
        config.replace("file://cases.jsonl", "file://tests/*.jsonl")
    )
    cases = sets.read_source("promptfoo", tmp_path / "promptfooconfig.yaml").cases
    assert [c["metadata"]["source_file"] for c in cases] == ["tests/a.jsonl"] * 2 + ["tests/b.jsonl"] * 2
    one = sets.read_source("promptfoo", src / "promptfooconfig.yaml").cases
    assert all("source_file" not in c.get("metadata", {}) for c in one)  # one file: nothing to tell apart


def test_check_like_fields_are_named_in_the_plural_too(tmp_path):
    evals = json.loads(CACHEWIPE.read_text(encoding="utf-8"))
    for ev in evals["evals"]:
        ev["expected_behaviors"] = ev.pop("assertions")
        ev["must_not_haves"] = ["rm -rf ~"]
    p = tmp_path / "evals.json"
    p.write_text(json.dumps(evals), encoding="utf-8")
    [w] = [w for w in sets.read_source("skill-creator", p).warnings if "read like checks" in w]
    assert "expected_behaviors, must_not_haves read like checks" in w


# ---------------------------------------------------------------- 10. a drafter that cannot draft says so
MCP = REAL / "skills" / "mcp-builder" / "SKILL.md"


def drafted(*cases: tuple[str, str, list[str]]) -> str:
    return json.dumps(
        {
            "cases": [
                {"id": f"c{i}", "type": t, "input": inp, "exercises_sections": secs, "gate_responses": []}
                | {"rationale": "pass 1"}
                for i, (t, inp, secs) in enumerate(cases)
            ]
        }
    )


def test_a_draft_of_only_the_skills_name_is_refused_with_the_way_out(tmp_path, capsys):
    out = tmp_path / "drafted.json"
    scripted.model("rules").enqueue(
        drafted(("happy", "mcp-builder", []), ("edge", "MCP Server Development Guide", []))
    )
    argv = ["draft-set", "--original", str(MCP), "--out", str(out), "--model", "scripted/rules"]
    assert main(argv) == 3 and not out.exists()
    err = capsys.readouterr().err
    assert "drafted no case worth reviewing" in err and "only the name 'mcp-builder'" in err
    assert "stronger one (--model" in err


def test_junk_drafted_cases_are_dropped_and_missing_types_named():
    scripted.model("rules").enqueue(
        drafted(
            ("happy", "Build an MCP server for the GitHub API in TypeScript", []),
            ("edge", "mcp-builder", []),
        )
    )
    d = draft(MCP.read_text(encoding="utf-8"), ModelSpec(name="scripted/rules"))
    assert [c.input for c in d.transfer_set.cases] == ["Build an MCP server for the GitHub API in TypeScript"]
    text = "\n".join(d.warnings)
    assert "'mcp-builder' is only a name" in text
    assert "no edge, adversarial, composition case" in text
    cov = sets.coverage(MCP.read_text(encoding="utf-8"), d.transfer_set)
    assert "the drafting model tagged none" in cov.warnings[0] and "imported" not in cov.warnings[0]


# ---------------------------------------------------------------- 3. a test with no vars
def test_a_test_with_no_vars_has_the_configs_prompt_for_its_input(tmp_path):
    imp = sets.read_source("promptfoo", PF / "openai-codex-sdk-basic" / "promptfooconfig.yaml")
    [case] = imp.cases
    assert case["input"] == (
        "Write a Python function that calculates the factorial of a number. Output only the code."
    )
    assert [a["type"] for a in case["assertions"]] == ["contains", "llm-rubric"]
    assert any("has no vars: its input is the config's prompt" in w for w in imp.warnings)
    # a prompt's {{vars}} are rendered empty, as promptfoo renders them when a test gives none
    text = (PF / "openai-codex-sdk-basic" / "promptfooconfig.yaml").read_text(encoding="utf-8")
    (tmp_path / "promptfooconfig.yaml").write_text(text.replace("a number.", "a number{{ suffix }}."))
    assert (
        sets.read_source("promptfoo", tmp_path / "promptfooconfig.yaml")
        .cases[0]["input"]
        .endswith("of a number. Output only the code.")
    )


# ---------------------------------------------------------------- 7. modular CLAUDE.md
ACT = REAL / "instructions" / "manuelturpin__ArtChiTech-framework"


def test_an_import_is_read_where_it_stands_and_its_headings_nest_under_the_heading(tmp_path):
    shutil.copytree(ACT, tmp_path / "act")
    (tmp_path / "act" / ".git").mkdir()
    doc = load_document(tmp_path / "act" / "CLAUDE.md")
    assert doc.read == ("CLAUDE.md", ".claude/rules/0-behavior.md")
    # the rules stand under "## Règles de Conduite", before "## Documentation", as the agent reads them
    at = doc.text.index
    assert at("## Règles de Conduite\n") < at("Ne jamais affirmer sans vérifier") < at("## Documentation\n")
    heads = {h.title: h for h in outline(doc.text).headings}
    assert heads["Règles de Conduite Claude"].level == 3  # its "#" nests under the "##" importing it
    assert heads["Règles de Conduite Claude"].parents == ("ArtChiTech Framework (ACT)", "Règles de Conduite")
    assert heads["1. Ne jamais inventer"].level == 5
    # nothing imported lands under the file's last heading any more
    assert "Ne jamais inventer" not in heads["Commandes Principales"].body
    own = ["Identité", "Quick Start", "Commandes Principales", "1. Ne jamais inventer"]
    cov = sets.coverage(
        doc.text, TransferSet(cases=[Case(id="c", type="happy", input="x", exercises_sections=own)])
    )
    assert cov.unknown_sections == [] and len(cov.sections_covered) == 4
