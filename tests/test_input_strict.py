"""Bad transfer-set input is refused with the file, the place and what to do; nothing is silently lost."""

from __future__ import annotations

import json

import pytest

from abeq import sets
from abeq.cli import main
from abeq.desk import editor
from abeq.errors import InputError
from abeq.schemas import Case, TransferSet

TYPES = [
    "happy",
    "edge",
    "adversarial",
    "composition",
    "happy",
    "edge",
    "adversarial",
    "composition",
    "happy",
    "edge",
]
IDS = ["h1", "e1", "a1", "c1", "h2", "e2", "a2", "c2", "h3", "e3"]


def ten_rows(h1_input: str = "write notes for 1.0") -> str:
    rows = [f"{i},{t},input for {i}" for i, t in zip(IDS, TYPES)]
    rows[0] = f"h1,happy,{h1_input}"
    return "id,type,input\n" + "\n".join(rows) + "\n"


def refused(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(InputError) as e:
        sets.load(p)
    assert str(p) in str(e.value)
    return str(e.value)


# ---------------------------------------------------------------- 1. a quote left open in a CSV
def test_csv_quote_never_closed_names_the_row_and_line_where_it_opened(tmp_path):
    msg = refused(tmp_path, "set.csv", ten_rows('"write notes for 1.0,'))
    assert "row 2 (line 2)" in msg and "quote opened at line 2 is never closed" in msg


def test_csv_quote_open_in_a_later_cell_of_a_multiline_record_is_located(tmp_path):
    text = 'id,type,input,rationale\nh1,happy,"two\nlines",ok\ne1,edge,x,"never closed\n\nmore\n'
    msg = refused(tmp_path, "set.csv", text)
    assert "row 3 (line 4)" in msg and "opened at line 4" in msg


def test_csv_check_set_refuses_a_set_that_lost_cases_with_exit_2(tmp_path, capsys, example):
    p = tmp_path / "set.csv"
    p.write_text(ten_rows('"write notes for 1.0,'))
    assert main(["check-set", "--original", str(example["dir"] / "SKILL.md"), "--transfer-set", str(p)]) == 2
    assert f"{p}: row 2 (line 2)" in capsys.readouterr().err


def test_csv_quote_closed_rows_later_is_refused(tmp_path):
    text = ten_rows('"write notes for 1.0,').replace("a1,adversarial,input for a1", 'a1,adversarial,"quoted"')
    msg = refused(tmp_path, "set.csv", text)
    assert "row 2 (line 2)" in msg and "at line 4" in msg


def test_csv_cell_that_swallowed_whole_rows_is_refused(tmp_path):
    # the stray quote closes at a line end, so even a strict reader sees a valid (wrong) cell
    text = ten_rows('"write notes for 1.0,').replace(
        "a1,adversarial,input for a1", 'a1,adversarial,a screen of 5"'
    )
    msg = refused(tmp_path, "set.csv", text)
    assert "row 2 (line 2)" in msg and "'input' cell" in msg and "e1,edge" in msg and "closing quote" in msg


def test_csv_legitimate_multiline_quoted_cells_still_load(tmp_path):
    p = tmp_path / "set.csv"
    p.write_text(ten_rows('"write notes for 1.0,\nthen, on a new line, ""sign"" them"'))
    ts = sets.load(p)
    assert [c.id for c in ts.cases] == IDS
    assert ts.cases[0].input == 'write notes for 1.0,\nthen, on a new line, "sign" them'


# ---------------------------------------------------------------- 2. repeated keys and columns
def test_csv_repeated_column_is_refused(tmp_path):
    msg = refused(tmp_path, "set.csv", "id,type,input,id\na,happy,x,b\n")
    assert "row 1 (the header)" in msg and "'id' more than once (columns 1 and 4)" in msg


def test_yaml_repeated_key_names_key_and_both_lines(tmp_path):
    msg = refused(
        tmp_path, "set.yaml", "cases:\n  - id: a\n    type: happy\n    input: one\n    input: two\n"
    )
    assert "key 'input' at line 5" in msg and "line 4" in msg and "keep one" in msg


def test_yaml_merge_keys_may_still_be_overridden(tmp_path):
    p = tmp_path / "set.yaml"
    p.write_text("base: &b {type: happy, input: x}\ncases:\n  - <<: *b\n    id: a\n    input: y\n")
    with pytest.raises(InputError, match="alias"):  # abeq's own sets take no alias (issue 27: alias bombs)
        sets.load(p)
    assert sets.parse_text(p.read_text(), "yaml")["cases"][0] == {"id": "a", "type": "happy", "input": "y"}


def test_json_repeated_key_is_refused_with_where(tmp_path):
    msg = refused(tmp_path, "set.json", '{"cases": [],\n "cases": [1]}')
    assert "key 'cases' appears twice in the object at line 1, column 1" in msg
    msg = refused(
        tmp_path, "set.json", '{"cases": [\n  {"id": "a", "type": "happy", "input": "x", "id": "b"}]}'
    )
    assert "key 'id'" in msg and "line 2, column 3" in msg


def test_jsonl_repeated_key_names_the_line(tmp_path):
    text = '{"id": "a", "type": "happy", "input": "x"}\n{"id": "b", "input": "y", "input": "z"}\n'
    msg = refused(tmp_path, "set.jsonl", text)
    assert "key 'input'" in msg and "line 2" in msg


# ---------------------------------------------------------------- 3. each message says what to do
@pytest.mark.parametrize(
    "name,text,says,todo",
    [
        ("set.yaml", "cases:\n  - id: a\n   input: x\n", "malformed YAML at line 3", "indentation"),
        (
            "set.jsonl",
            '{"id": "a", "type": "happy", "input": "unterminated\n',
            "line 1 is not valid JSON (column 39: Unterminated string starting here)",
            "one whole JSON object",
        ),
        (
            "set.json",
            '{"cases": [{"id": "a", "input": "x\n"}]}',
            "line 1, column 35: Invalid control character here",
            "json.tool",
        ),
        ("set.csv", "id,type,input\na,happy,x,y\n", "row 2 has more cells than the header", "quotes"),
        (
            "set.json",
            '{"cases": [{"id": "a", "type": "happy", "input": "x"}], "extra_top": 1}',
            "transfer set: extra_top: Extra inputs are not permitted",
            "document_hash, coverage, cases",
        ),
        ("set.json", '{"cases": ["just text"]}', "case 1 is not an object", '"id": "happy-1"'),
        (
            "set.json",
            '{"cases": [{"id": "a", "type": "happy", "input": "x", "colour": 1}]}',
            "colour",
            "rationale",
        ),
    ],
)
def test_messages_say_what_to_do(tmp_path, name, text, says, todo):
    msg = refused(tmp_path, name, text)
    head, _, hint = msg.partition("\n")
    assert says in head and todo in hint


# ---------------------------------------------------------------- 4. skill-creator fields
def test_skill_creator_unknown_eval_field_is_kept_in_metadata_and_named(tmp_path):
    # (issue 13) was refused; real files carry name/category/description, so they are kept and named
    p = tmp_path / "evals.json"
    p.write_text(json.dumps({"skill_name": "x", "evals": [{"id": 1, "prompt": "go", "weird": 2}]}))
    imp = sets.read_source("skill-creator", p)
    assert imp.cases[0]["metadata"] == {"weird": 2}
    assert any("weird (1 eval)" in w and "metadata" in w for w in imp.warnings)


# ---------------------------------------------------------------- 5-7. the desk's table and upload
def test_desk_upload_meets_the_cli_size_and_binary_checks():
    with pytest.raises(InputError, match="limit") as e:
        editor.import_text("a" * 11_000_000, "big.json", "h")
    assert e.value.path == "big.json"
    with pytest.raises(InputError, match="binary"):
        editor.import_text("a\x00b", "nul.csv", "h")


def test_desk_upload_of_a_good_csv_names_rows_like_the_cli(tmp_path):
    ts = editor.import_text(ten_rows(), "set.csv", "h")
    assert [c.id for c in ts.cases] == IDS
    with pytest.raises(InputError) as e:
        editor.import_text(ten_rows('"write notes for 1.0,'), "set.csv", "h")
    assert str(e.value).startswith("set.csv: row 2 (line 2)")


def five_derived() -> TransferSet:
    return TransferSet(
        cases=[
            Case(
                id=f"c{i}",
                type=t,
                input=f"in {i}",
                status="derived",
                rationale=f"why {i}",
                exercises_sections=["Setup"],
            )
            for i, t in enumerate(TYPES[:5])
        ]
    )


def test_desk_edit_of_one_case_changes_only_that_case():
    ts = five_derived()
    df = editor.to_frame(ts)
    df.loc[0, "input"] = "in 0, reworded"
    new = sets.edit(ts, editor.from_frame(df, ts))
    assert [c.status for c in new.cases] == ["user-modified"] + ["derived"] * 4
    assert [c.rationale for c in new.cases] == [f"why {i}" for i in range(5)]


def test_desk_section_title_with_a_comma_survives_the_table():
    ts = five_derived()
    first = ts.cases[0].model_copy(update={"exercises_sections": ["Setup", "Review, and handoff"]})
    ts = ts.model_copy(update={"cases": [first, *ts.cases[1:]]})
    df = editor.to_frame(ts)
    assert editor.from_frame(df, ts)[0].exercises_sections == ["Setup", "Review, and handoff"]
    df.loc[1, "exercises_sections"] = "Review, and handoff, Output, and more"
    got = editor.from_frame(df, ts, sections=["Output, and more"])[1].exercises_sections
    assert got == ["Review, and handoff", "Output, and more"]
