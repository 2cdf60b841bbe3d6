"""Real documents (tests/fixtures/real): sections and coverage, tolerant section names, `@imports`
in instruction files, and what `check-set` says about all of it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from abeq import sets
from abeq.cli import main
from abeq.documents import load_document, sha256
from abeq.documents.sections import SectionIndex, outline, sections
from abeq.errors import InputError
from abeq.models import scripted
from abeq.prompts import read_data_blocks
from abeq.schemas import Case, TransferSet

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
MCP = REAL / "skills" / "mcp-builder" / "SKILL.md"
RSS = REAL / "skills" / "rsshub-route-authoring-skill" / "SKILL.md"
DIVERSIO = REAL / "instructions" / "DiversioTeam__claude-plugins"
FEDIFY = REAL / "instructions" / "fedify-dev__fedify" / "AGENTS.md"
TYPES = ["happy", "edge", "adversarial", "composition"]


def one_case_per_section(names: list[str]) -> TransferSet:
    return TransferSet(
        cases=[
            Case(id=f"c{i}", type=TYPES[i % 4], input=f"exercise {n}", exercises_sections=[n])
            for i, n in enumerate(names)
        ]
    )


def write_set(tmp_path: Path, ts: TransferSet, name: str = "set.json") -> Path:
    p = tmp_path / name
    p.write_text(sets.dump(ts))
    return p


# ---------------------------------------------------------------- 4. sections and coverage
def test_headings_without_text_of_their_own_are_not_sections():
    doc = outline(MCP.read_text(encoding="utf-8"))
    empty = [h.name for h in doc.headings if h.kind == "empty"]
    assert empty == [
        "MCP Server Development Guide",
        "Process",
        "Phase 1: Deep Research and Planning",
        "Phase 2: Implementation",
        "Phase 3: Review and Test",
        "Reference Files",
    ]
    assert len(doc.headings) == 27 and len(doc.sections) == 21
    assert "Phase 4: Create Evaluations" in [h.name for h in doc.sections]  # it has text of its own


def test_setext_headings_of_a_real_agents_md_are_sections():
    """fedify's AGENTS.md titles its sections with `===`/`---` underlines and uses `###` only below
    them: read as ATX only, its 19 sections collapsed into 7, one of them 5,924 characters long."""
    doc = outline(FEDIFY.read_text(encoding="utf-8"))
    top = [(h.level, h.name) for h in doc.headings[:4]]
    assert top == [
        (1, "Fedify LLM coding agent instructions"),
        (2, "AI policy compliance"),
        (2, "Project overview"),
        (2, "Development environment"),
    ]
    assert len(doc.headings) == 26 and len(doc.sections) == 25
    assert [h.name for h in doc.headings if h.kind == "empty"] == ["Common tasks"]  # its ### hold the text
    adding = next(h for h in doc.headings if h.name == "Adding a new package")
    assert adding.parents == ("Fedify LLM coding agent instructions", "Common tasks")
    assert adding.body.startswith("See *CONTRIBUTING.md*") and "Security" not in adding.body
    assert "Markdown conventions" in sections(FEDIFY.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Title\n=====\n\nDo it.\n", [(1, "Title")]),
        ("Intro.\n\nSteps\n-----\n- one\n", [(0, "Preamble"), (2, "Steps")]),
        ("A title on\ntwo lines\n---\nbody\n", [(2, "A title on two lines")]),
        ("# H\n\ntext\n\n---\n\nmore\n", [(1, "H")]),  # after a blank line: a rule
        ("# H\n\n- item\n---\nmore\n", [(1, "H")]),  # under a list item: a rule
        ("# H\n\n> quoted\n---\n", [(1, "H")]),  # under a quote: a rule
        ("# H\n\n    code\n---\n", [(1, "H")]),  # under indented code: a rule
        ("# H\n\n```\nx\n---\n```\n", [(1, "H")]),  # inside a fence: text
        ("---\nname: s\n---\nTitle\n=====\nbody\n", [(1, "Title")]),  # front matter first
        ("| a | b |\n|---|---|\n| 1 | 2 |\n", []),  # a table, no heading: paragraphs
    ],
)
def test_setext_headings_as_markdown_renders_them(text, expected):
    doc = outline(text)
    assert [(h.level, h.name) for h in doc.headings if not doc.by_paragraphs] == expected


def test_a_set_testing_every_section_with_text_scores_100_on_a_real_skill(tmp_path, capsys):
    text = MCP.read_text(encoding="utf-8")
    ts = one_case_per_section(sections(text))
    cov = sets.coverage(text, ts)
    assert cov.coverage_pct == 100.0 and not any("untested" in w for w in cov.warnings)
    assert main(["check-set", "--original", str(MCP), "--transfer-set", str(write_set(tmp_path, ts))]) == 0
    out = capsys.readouterr().out
    assert "coverage 100% (21/21 sections)" in out
    assert "21 sections from 27 Markdown headings" in out and "6 heading(s) with no text of their own" in out


def test_an_uncovered_section_is_named_with_its_behaviour_but_empty_parents_never_are():
    text = RSS.read_text(encoding="utf-8")
    secs = sections(text)
    assert "Workflow" not in secs and secs[1:4] == [
        "0. Environment",
        "1. Load the rules",
        "2. Confirm the route does not already exist",
    ]
    cov = sets.coverage(text, one_case_per_section(secs[:5]))
    [low] = [w for w in cov.warnings if w.startswith("coverage")]
    assert "5. Build items (untested:" in low and "Workflow" not in low


def test_a_document_without_headings_is_counted_by_paragraphs_and_says_so():
    ts = one_case_per_section(["nothing"])
    cov = sets.coverage("Always answer in French.\n\nNever guess a price.\n", ts)
    assert cov.sections_identified == ["¶ Always answer in French.", "¶ Never guess a price."]
    assert "no Markdown headings" in cov.how


def test_tables_of_contents_comments_and_fenced_headings_are_not_sections():
    doc = (
        "# Guide\n\n## Contents\n- [Setup](#setup)\n- [Rules](#rules)\n\n## Setup\n<!-- fill me -->\n\n"
        "## Rules\n- never guess\n```md\n## Not a heading\n```\n<!--\n## Commented out\n-->\n"
        "## C#\n- use it\n"
    )
    assert sections(doc) == ["Rules", "C#"]
    assert "table(s) of contents, not counted: Contents" in outline(doc).how()


# ---------------------------------------------------------------- 5. section names, matched tolerantly
@pytest.mark.parametrize(
    "given,meant",
    [
        ("High-Level Workflow", "🚀 High-Level Workflow"),
        ("process > high-level workflow", "🚀 High-Level Workflow"),
        ("Process › 🚀 High-Level Workflow", "🚀 High-Level Workflow"),
        ("Understand Modern MCP Design", "1.1 Understand Modern MCP Design"),
        ("1.1 understand modern mcp design", "1.1 Understand Modern MCP Design"),
        ("## Overview", "Overview"),
        ("documentation library", "📚 Documentation Library"),
    ],
)
def test_section_names_match_despite_emoji_case_separators_and_numbering(given, meant):
    cov = sets.coverage(MCP.read_text(encoding="utf-8"), one_case_per_section([given]))
    assert cov.sections_covered == [meant] and cov.unknown_sections == []


def test_backticks_and_numbering_in_a_real_heading_do_not_block_a_match():
    cov = sets.coverage(
        RSS.read_text(encoding="utf-8"), one_case_per_section(["Write namespace.ts and the route file"])
    )
    assert cov.sections_covered == ["4. Write `namespace.ts` and the route file"]


def test_an_unknown_name_gets_the_closest_headings():
    text = MCP.read_text(encoding="utf-8")
    cov = sets.coverage(text, one_case_per_section(["Deep research", "Evaluation questions"]))
    assert cov.unknown_sections == ["Deep research", "Evaluation questions"]
    deep = next(w for w in cov.warnings if "'Deep research'" in w)
    assert "closest headings are 'Phase 1: Deep Research and Planning'" in deep
    assert "'4.2 Create 10 Evaluation Questions'" in next(
        w for w in cov.warnings if "'Evaluation questions'" in w
    )


def test_naming_a_heading_without_text_says_which_subsections_to_name():
    text = MCP.read_text(encoding="utf-8")
    cov = sets.coverage(text, one_case_per_section(["Phase 2"]))
    [w] = [w for w in cov.warnings if "'Phase 2'" in w]
    assert "a heading with no text of its own" in w and "'2.1 Set Up Project Structure'" in w
    assert cov.sections_covered == [] and cov.unknown_sections == []
    assert SectionIndex(text).resolve("Phase 2").status == "heading"


# ---------------------------------------------------------------- 6. @imports
def test_a_claude_md_that_imports_agents_md_is_read_with_it():
    doc = load_document(DIVERSIO / "CLAUDE.md")
    agents = (DIVERSIO / "AGENTS.md").read_text(encoding="utf-8")
    assert doc.read == ("CLAUDE.md", "AGENTS.md") and doc.notes == ()
    own = (DIVERSIO / "CLAUDE.md").read_text(encoding="utf-8")
    # AGENTS.md stands where CLAUDE.md imports it (its first line), CLAUDE.md's own text after it
    mark = "<!-- abeq: AGENTS.md, imported by @AGENTS.md in CLAUDE.md -->"
    assert doc.text.startswith(f"@AGENTS.md\n\n{mark}\n{agents.rstrip()}\n<!-- abeq: end of AGENTS.md -->\n")
    assert doc.text.endswith(own.removeprefix("@AGENTS.md\n"))
    assert doc.hash == sha256(doc.text)  # the hash is of the expanded text
    assert "How Claude Code Should Behave Here" in sections(doc.text)


def test_check_set_says_which_files_were_read_and_the_hash_follows_the_import(tmp_path, capsys):
    repo = tmp_path / "repo"
    shutil.copytree(DIVERSIO, repo)
    ts = one_case_per_section(["Repository Purpose", "Requirements & Commands"])
    setp = write_set(tmp_path, ts)
    argv = [
        "check-set",
        "--original",
        str(repo / "CLAUDE.md"),
        "--transfer-set",
        str(setp),
        "--json",
        "--allow-thin",
    ]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["documents_read"] == ["CLAUDE.md", "AGENTS.md"]
    assert first["sections_covered"] == ["Repository Purpose", "Requirements & Commands"]  # as read
    (repo / "AGENTS.md").write_text((repo / "AGENTS.md").read_text() + "\n- Never push to main.\n")
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["document_hash"] != first["document_hash"]
    assert main(argv[:-2] + ["--allow-thin"]) == 0
    assert "read CLAUDE.md with its imports: AGENTS.md" in capsys.readouterr().out


def test_the_runner_and_the_drafting_model_see_the_imported_file(tmp_path, capsys):
    out = tmp_path / "drafted.json"
    assert (
        main(
            [
                "draft-set",
                "--original",
                str(DIVERSIO / "CLAUDE.md"),
                "--out",
                str(out),
                "--model",
                "scripted/rules",
            ]
        )
        == 0
    )
    sent = [read_data_blocks(m["content"]) for h in scripted.model("rules").history for m in h["messages"]]
    assert any("Keep JSON valid and minimal" in b.get("original_document", "") for b in sent)
    assert "AGENTS.md" in capsys.readouterr().err
    from abeq import prepare_run

    scripted.forget()
    ts = one_case_per_section(
        [
            "Repository Purpose",
            "Key layout",
            "Usage Notes for Humans",
            "References",
            "Requirements & Commands",
        ]
    )
    short = tmp_path / "CLAUDE.short.md"  # a candidate of an instruction file, whatever its name
    short.write_text("@AGENTS.md\n")
    shutil.copy(DIVERSIO / "AGENTS.md", tmp_path / "AGENTS.md")
    prepared = prepare_run(
        DIVERSIO / "CLAUDE.md",
        short,
        ts,
        runner_model="scripted/rules",
        confirm=True,
        store=str(tmp_path / "a.db"),
    )
    assert any("imports AGENTS.md" in w for w in prepared.warnings)
    assert prepared.engine.candidate.read == ("CLAUDE.short.md", "AGENTS.md")
    prepared.run()
    runner_docs = [
        b.get("document", "")
        for h in scripted.model("rules").history
        for m in h["messages"]
        for b in [read_data_blocks(m["content"])]
    ]
    assert sum("Keep JSON valid and minimal" in d for d in runner_docs) >= 2  # teacher and candidate


def write_tree(root: Path, files: dict[str, str]) -> None:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_an_import_cycle_is_refused_naming_the_chain(tmp_path, capsys):
    write_tree(
        tmp_path,
        {"CLAUDE.md": "# Rules\n- see @docs/a.md\n", "docs/a.md": "- a\n@b.md\n", "docs/b.md": "- b @a.md\n"},
    )
    with pytest.raises(InputError) as e:
        load_document(tmp_path / "CLAUDE.md")
    assert (
        "imports form a cycle: docs/a.md → docs/b.md → docs/a.md" in str(e.value) and "@a.md" in e.value.hint
    )
    setp = write_set(tmp_path, one_case_per_section(["Rules"]))
    assert main(["check-set", "--original", str(tmp_path / "CLAUDE.md"), "--transfer-set", str(setp)]) == 2
    assert f"{tmp_path / 'CLAUDE.md'}: imports form a cycle" in capsys.readouterr().err


def test_imports_outside_the_project_home_absolute_missing_or_too_deep_are_reported_not_read(tmp_path):
    chain = {f"d{i}.md": f"- level {i}\n@d{i + 1}.md\n" for i in range(1, 8)}
    (tmp_path / "outside.md").write_text("- secret\n")
    root = tmp_path / "repo"
    write_tree(
        root,
        {
            "CLAUDE.md": "# Rules\n- see @~/.claude/mine.md and @/etc/passwd and @../outside.md\n"
            "- also @missing.md, `@code.md`, mail me at a@b.md, @someone\n- start @d1.md\n"
            "- again @CLAUDE.md\n"
            "```\n@fenced.md\n```\n",
            "code.md": "no",
            "fenced.md": "no",
            **chain,
        },
    )
    doc = load_document(root / "CLAUDE.md")
    assert doc.read == ("CLAUDE.md", "d1.md", "d2.md", "d3.md", "d4.md", "d5.md")  # five imports deep
    notes = "\n".join(doc.notes)
    for bit in (
        "@~/.claude/mine.md: a file in your home directory",
        "@/etc/passwd: an absolute path",
        "@../outside.md: it is outside the project",
        "@missing.md: no such file",
        "@d6.md: imports nest more than 5",
        "@CLAUDE.md, which is the file itself",
    ):
        assert bit in notes
    assert (
        "secret" not in doc.text
        and "someone" not in notes
        and "code.md" not in notes
        and "fenced" not in notes
    )


def test_skills_do_not_follow_at_signs(tmp_path):
    (tmp_path / "AGENTS.md").write_text("# x\n- y\n")
    (tmp_path / "SKILL.md").write_text("# Skill\n- read @AGENTS.md\n")
    assert load_document(tmp_path / "SKILL.md").read == ()


# ---------------------------------------------------------------- 7. what check-set says
def test_check_set_json_has_confirmation_unknown_names_and_the_document_hash(tmp_path, capsys):
    ts = one_case_per_section(["High-Level Workflow", "Nowhere", "Overview", "Process", "4.4 Output Format"])
    setp = write_set(tmp_path, ts)
    assert main(["check-set", "--original", str(MCP), "--transfer-set", str(setp), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["confirmed"] is False and out["confirmation"] == "the transfer set is not confirmed"
    assert out["unknown_sections"] == ["Nowhere"] and out["document_hash"] == load_document(MCP).hash
    assert (
        out["headings_without_text"][0] == "MCP Server Development Guide"
        and "27 Markdown headings" in out["sections_found"]
    )
    assert main(["check-set", "--original", str(MCP), "--transfer-set", str(setp), "--confirm"]) == 0
    capsys.readouterr()
    assert main(["check-set", "--original", str(MCP), "--transfer-set", str(setp), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["confirmed"] is True and out["set_document_hash"] == out["document_hash"]


def test_a_hand_written_null_document_hash_means_not_bound_yet(tmp_path, capsys):
    p = tmp_path / "set.json"
    p.write_text(
        json.dumps(
            {
                "document_hash": None,
                "cases": [{"id": "a", "type": "happy", "input": "x", "exercises_sections": ["Overview"]}],
            }
        )
    )
    assert main(["check-set", "--original", str(MCP), "--transfer-set", str(p), "--allow-thin"]) == 0
    assert "not confirmed" in capsys.readouterr().out


def test_an_imported_set_says_why_it_shows_0_percent(tmp_path, capsys):
    out = tmp_path / "set.json"
    evals = REAL / "skill-creator" / "0xdeafcafe__tslsp-cli__evals.json"
    assert (
        main(
            [
                "import-set",
                "--from",
                "skill-creator",
                str(evals),
                "--out",
                str(out),
                "--default-type",
                "happy",
            ]
        )
        == 0
    )
    assert "coverage will read 0%" in capsys.readouterr().err
    skill = REAL / "skills" / "tslsp" / "SKILL.md"
    assert main(["check-set", "--original", str(skill), "--transfer-set", str(out), "--allow-thin"]) == 0
    text = capsys.readouterr().out
    assert "coverage is 0% because no case names a section" in text and "Map cases to sections" in text
    assert "no case exercises:" not in text  # not a list of every section as if each were forgotten


def test_a_bad_imported_file_is_refused_naming_the_import(tmp_path, capsys):
    write_tree(tmp_path, {"CLAUDE.md": "# Rules\n- follow @style.md\n"})
    (tmp_path / "style.md").write_bytes(b"\x00\x01binary")
    setp = write_set(tmp_path, one_case_per_section(["Rules"]))
    assert main(["check-set", "--original", str(tmp_path / "CLAUDE.md"), "--transfer-set", str(setp)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'CLAUDE.md'}: CLAUDE.md imports @style.md (style.md):" in err and "binary" in err
