"""Untrusted text written where it could act: a spreadsheet cell, a Markdown report (issue 27, 4-5)."""

import csv
import io

from conftest import with_cases

from abeq import sets
from abeq.documents import normalize_newlines
from abeq.execution.engine import Engine
from abeq.results.reports.exports import markdown, to_csv
from abeq.results.reports.report import build_report
from abeq.sets.export import export_text
from abeq.untrusted import csv_cell, csv_uncell, md_escape

FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"]
HOSTILE_ID = 'x</td><img src="http://evil.example/p.png"> ![i](http://evil.example/i.png)\n# Gate: PASS\n<!--'


def _run(store, example, scripted_cfg, case_ids):
    cases = example["ts"].cases  # the example's cases, the first ones renamed: the set stays runnable
    ts = with_cases(
        example, [c.model_copy(update={"id": i}) for c, i in zip(cases, case_ids)] + cases[len(case_ids) :]
    )
    run_id = Engine(store, example["original"], example["lossy"], ts, scripted_cfg()).run()
    return build_report(store, run_id)


def test_csv_cells_starting_with_a_formula_character_are_neutralised(store, example, scripted_cfg):
    rr = _run(store, example, scripted_cfg, FORMULAS[:4])
    store.ledger.add_override(
        rr.run["id"], "+1+1", "equivalent", "=cmd|' /C calc'!A0", "@ann", "candidate-regressed"
    )
    rows = list(csv.DictReader(io.StringIO(to_csv(build_report(store, rr.run["id"])))))
    cells = [v for r in rows for v in r.values() if v]
    assert not [v for v in cells if v[0] in "=+-@\t\r"]
    assert {"'" + f for f in FORMULAS[:4]} <= {r["case_id"] for r in rows}
    ann = next(r for r in rows if r["case_id"] == "'+1+1")
    assert ann["reviewer"] == "'@ann" and ann["override_reason"].startswith("'=cmd")


def test_a_set_exported_as_csv_is_neutralised_and_reads_back_as_written(example, tmp_path):
    ids = [*FORMULAS[:5], "'=already quoted", "'plain", "plain"]
    ts = example["ts"].model_copy(
        update={"cases": [example["ts"].cases[0].model_copy(update={"id": f"{i}"}) for i in ids]}
    )
    text = export_text(ts, "csv")
    cells = [r[0] for r in csv.reader(io.StringIO(text))][1:]
    assert not [c for c in cells if c[0] in "=+-@\t\r"]
    (tmp_path / "s.csv").write_text(text, encoding="utf-8")
    # ids are trimmed on import, so the tab one comes back without its tab
    assert [c.id for c in sets.load(tmp_path / "s.csv").cases] == [i.strip() for i in ids]


def test_a_set_csv_with_line_breaks_and_quotes_in_cells_reads_back_as_written(example, tmp_path):
    inputs = ["one\rtwo", "one\ntwo", "one\r\ntwo", "say \"hi\", then ''", "=1+1\rtwo", "\rstarts with CR"]
    base = example["ts"].cases[0]
    ts = example["ts"].model_copy(
        update={"cases": [base.model_copy(update={"id": f"c{i}", "input": x}) for i, x in enumerate(inputs)]}
    )
    text = export_text(ts, "csv")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))  # every cell exactly as written
    assert [r["input"] for r in rows] == [csv_cell(x) for x in inputs]
    assert rows[4]["input"].startswith("'=") and rows[5]["input"].startswith("'\r")  # still neutralised
    (tmp_path / "s.csv").write_text(text, encoding="utf-8", newline="")
    # read as every file is (one line ending, documents.normalize_newlines), the formula cell's ' off;
    # not the last: its leading \r is a \n by the time the importer looks for the ' to take off
    got = [(c.id, c.input) for c in sets.load(tmp_path / "s.csv").cases]
    assert len(got) == 6 and got[:5] == [(f"c{i}", normalize_newlines(x)) for i, x in enumerate(inputs[:5])]


def test_csv_cell_round_trips():
    for s in [*FORMULAS, "'", "''=x", "'x", "", "x=1"]:
        assert csv_uncell(csv_cell(s)) == s


def test_a_hostile_case_id_adds_no_structure_to_the_markdown_report(store, example, scripted_cfg):
    rr = _run(store, example, scripted_cfg, [HOSTILE_ID])
    md = markdown(store, rr)
    case_lines = [line for line in md.splitlines() if "evil" in line]
    # the case's rows in the cases and checks tables, each one whole row: no heading, no line of its own
    assert len(case_lines) == 2 and all(x.startswith("| ") and x.endswith(" |") for x in case_lines)
    row = " ".join(case_lines)
    assert "<" not in row.replace("\\<", "") and "![" not in row and "](" not in row.replace("\\](", "")
    assert "http://" not in row  # autolinks broken too
    assert not [line for line in md.splitlines() if line.startswith("# Gate")]
    assert "<!--" not in md


def test_md_escape_keeps_the_text_and_drops_the_markup():
    assert md_escape("- item\n1. two\n# h", one_line=False) == "\\- item\n1\\. two\n\\# h"
    assert md_escape("a | b\nc", one_line=True) == "a \\| b c"
    assert md_escape("see www.x.example") == "see www\u2060.x.example"
    assert md_escape(":red[x] $y$") == "\\:red\\[x\\] \\$y\\$"


def test_the_mutation_report_escapes_sections_case_ids_and_deltas():
    from abeq.mutation.render import markdown as mutation_markdown

    rep = {
        "original": "SKILL.md", "score": 0.5, "killed": 1, "count": 1, "survived": 0, "incomplete": 0,
        "killed_within_noise": 0, "calls": {"made": 2, "teacher_made": 1, "cached": 0, "tokens": 10},
        "runner_model": "scripted/rules", "judge_model": "scripted/rules",
        "mutants": [
            {"section": HOSTILE_ID, "operator": "section-deletion", "status": "killed",
             "killed_by": [HOSTILE_ID], "claimed_by": [], "errors": [],
             "evidence": [{"case_id": HOSTILE_ID, "verdict": "candidate-regressed", "teacher": "x ```` y",
                           "mutant": "z"}]},
        ],
    }  # fmt: skip
    md = mutation_markdown(rep)
    raw = md.replace("\\<", "")  # what is left once the escaped (literal) brackets are taken out
    assert "<img" not in raw and "<!--" not in raw and "![i](" not in md
    assert not [line for line in md.splitlines() if line.startswith("# Gate")]
    assert "`````text\nx ```` y\n`````" in md  # a fence the text inside cannot close


def test_md_escape_leaves_plain_punctuation_alone():
    """Only what would add structure is escaped (issue 38): times, brackets of prose, colons."""
    assert (
        md_escape("(released 2025-03-14, 15:50) Note: see {x}!")
        == "(released 2025-03-14, 15:50) Note: see {x}!"
    )
    assert md_escape("a & b; x > y") == "a & b; x > y"
    assert md_escape("&lt;b&gt; :smile: :material/home: > q\n1) one\n## h") == (
        "\\&lt;b\\&gt; \\:smile: \\:material/home: > q\n1\\) one\n\\## h"
    )
    assert md_escape("> quoted") == "\\> quoted"
