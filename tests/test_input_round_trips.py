"""Input strictness, part 2: exact round trips of awkward text, no tracebacks on malformed imports,
CSV text kept as written, front matter alone refused, one line ending, JSON messages worded once."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLE

from abeq import sets
from abeq.cli import main
from abeq.documents import Document, check_document_text, load_document, normalize_newlines, read_text_file
from abeq.errors import InputError

AWKWARD = [
    "line\u2028separator",
    "next\u0085line",
    "form\x0cfeed",
    "\ttab first",
    "  leading spaces",
    "para\u2029sep\n",
    "v\x0btab and \x1c\x1d\x1e",
    "trailing spaces  ",
    "two\r\nendings",
]


def awkward_set(example):
    cases = [c.model_copy(update={"input": s}) for c, s in zip(example["ts"].cases, AWKWARD)]
    return example["ts"].model_copy(update={"cases": cases + example["ts"].cases[len(cases) :]})


def refused(fn, path, *args) -> str:
    with pytest.raises(InputError) as e:
        fn(*args)
    assert str(path) in str(e.value)
    return str(e.value)


# ---------------------------------------------------------------- 1. round trips keep every character
@pytest.mark.parametrize("fmt", ["jsonl", "yaml", "csv"])
def test_export_and_import_back_is_exact(tmp_path, example, fmt):
    ts = awkward_set(example)
    src = tmp_path / "x.json"
    src.write_text(sets.export_text(ts, "json"), encoding="utf-8")
    mid = tmp_path / f"x.{fmt}"
    assert main(["import-set", "--from", "json", str(src), "--out", str(mid)]) == 0
    out = tmp_path / "back.json"
    assert main(["import-set", "--from", fmt, str(mid), "--out", str(out)]) == 0
    back = sets.load(out)
    want = [
        c.input.replace("\r\n", "\n") if fmt == "csv" else c.input for c in ts.cases
    ]  # CSV: raw, normalised
    assert [c.input for c in back.cases] == want
    if fmt != "csv":
        assert sets.set_hash(back) == sets.set_hash(ts)


def test_jsonl_line_numbers_count_newlines_only(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text(
        '{"id": "a", "type": "happy", "input": "x\u2028y"}\r\n{"id": "b", "type": "edge", "input": \n',
        encoding="utf-8",
    )
    assert "line 2 is not valid JSON" in refused(sets.load, p, p)


def test_csv_expectation_with_a_line_separator_stays_one_expectation(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text('id,type,input,expectations\nh1,happy,go,"one\u2028still one\nsecond"\n', encoding="utf-8")
    data, _ = sets.parse_located(p.read_text(encoding="utf-8"), "csv", str(p))
    assert data[0]["expectations"] == ["one\u2028still one", "second"]


def test_yaml_dump_escapes_what_yaml_reads_as_a_line_break(example):
    text = sets.export_text(awkward_set(example), "yaml")
    assert "\x85" not in text and "\u2028" not in text and "\u2029" not in text


# ---------------------------------------------------------------- 2. malformed imports: InputError, not a
# traceback
def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("meta", ["[1]", "hello", "3"])
def test_promptfoo_metadata_not_a_mapping(tmp_path, capsys, meta):
    p = write(tmp_path, "promptfooconfig.yaml", f"tests:\n  - vars: {{q: hi}}\n    metadata: {meta}\n")
    assert "'metadata' must be a mapping" in refused(sets.read_source, p, "promptfoo", p)
    assert main(["import-set", "--from", "promptfoo", str(p), "--out", str(tmp_path / "o.json")]) == 2
    assert str(p) in capsys.readouterr().err


def test_promptfoo_default_metadata_and_vars_not_mappings(tmp_path):
    p = write(tmp_path, "pf.yaml", "defaultTest:\n  metadata: [edge]\ntests:\n  - vars: {q: hi}\n")
    assert "defaultTest: 'metadata' must be a mapping" in refused(sets.read_source, p, "promptfoo", p)
    p = write(tmp_path, "pf2.yaml", "defaultTest:\n  vars: [a]\ntests:\n  - vars: {q: hi}\n")
    assert "defaultTest: 'vars' must be a mapping" in refused(sets.read_source, p, "promptfoo", p)


def test_promptfoo_description_must_be_text(tmp_path):
    p = write(tmp_path, "pf.yaml", "tests:\n  - vars: {q: hi}\n    description: {a: 1}\n")
    assert "'description' must be text" in refused(sets.read_source, p, "promptfoo", p)


def test_promptfoo_yaml_dates_and_sets_in_vars_and_asserts_are_text(tmp_path):
    p = write(
        tmp_path,
        "pf.yaml",
        "tests:\n  - vars: {when: 2024-05-01}\n    metadata: {case_type: happy}\n"
        "    assert: [{type: equals, value: 2024-05-02}]\n"
        "  - vars: {when: 2024-05-01, what: {at: 2024-05-03}}\n"
        "    metadata: {case_type: edge}\n",
    )
    cases = sets.read_source("promptfoo", p).cases
    assert cases[0]["input"] == "2024-05-01"
    assert cases[0]["assertions"][0]["value"] == "2024-05-02"  # (issue 13) an assertion, its date as text
    assert cases[1]["input"] == 'when: 2024-05-01\nwhat: {"at": "2024-05-03"}'
    # (issue 13) an assert that is not a mapping (here a YAML set) is refused, not turned into text
    bad = write(tmp_path, "pf2.yaml", "tests:\n  - vars: {q: a}\n    assert: [!!set {a: null}]\n")
    assert "an assert entry must be a mapping" in refused(sets.read_source, bad, "promptfoo", bad)


@pytest.mark.parametrize(
    "fmt,text",
    [
        ("json", "[" * 3000 + "]" * 3000),
        ("json", '{"cases": ' + "[" * 500 + "]" * 500 + "}"),
        ("jsonl", '{"id": ' + "[" * 3000 + "]" * 3000 + "}\n"),
        ("yaml", "cases:\n" + "- " * 3000 + "x\n"),
        ("yaml", "a: " + "[" * 3000 + "]" * 3000 + "\n"),
    ],
)
def test_deep_nesting_is_refused(tmp_path, fmt, text):
    p = write(tmp_path, f"deep.{fmt}", text)
    assert "nested more than" in refused(sets.load, p, p)
    assert "nested more than" in refused(sets.read_source, p, fmt, p)


def test_deep_nesting_in_promptfoo_is_refused(tmp_path):
    p = write(tmp_path, "pf.json", '{"tests": [{"vars": {"q": ' + "[" * 3000 + "]" * 3000 + "}}]}")
    assert "nested more than" in refused(sets.read_source, p, "promptfoo", p)


def test_yaml_that_contains_itself_or_expands_without_end_is_refused(tmp_path):
    p = write(tmp_path, "pf.yaml", "tests:\n  - vars: &v {q: hi, again: *v}\n")
    assert "contains itself" in refused(sets.read_source, p, "promptfoo", p)
    lol = ["a: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lol += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    p = write(tmp_path, "lol.yaml", "\n".join(lol) + "\ntests:\n  - vars: {q: *a8}\n")
    assert "expands to more than" in refused(sets.read_source, p, "promptfoo", p)


@pytest.mark.parametrize(
    "field,value,says",
    [
        ("files", "abc", "'files' must be a list of file names, not text"),
        ("files", {"a": 1}, "'files' must be a list of file names (text), not a mapping"),
        ("files", [1, 2], "'files' must be a list of file names (text)"),
        ("expected_output", ["a"], "'expected_output' must be text, not a list"),
        ("id", {"n": 1}, "'id' must be a number or text, not a mapping"),
        ("id", True, "'id' must be a number or text"),
    ],
)
def test_skill_creator_wrong_types_are_refused(tmp_path, field, value, says):
    ev = {"id": 1, "prompt": "do it", field: value}
    p = write(tmp_path, "evals.json", json.dumps({"skill_name": "x", "evals": [ev]}))
    assert says in refused(sets.read_source, p, "skill-creator", p)


def test_skill_creator_list_of_files_still_named():
    p = EXAMPLE.parent  # any dir; the eval is given as text
    imp = sets.read_source(
        "skill-creator",
        p / "evals.json",
        json.dumps({"evals": [{"id": 1, "prompt": "go", "files": ["a.csv", "b.md"]}]}),
    )
    assert imp.cases[0]["input"] == "go\n\nInput files: a.csv, b.md"


# ---------------------------------------------------------------- 3. CSV keeps text as written
def test_csv_keeps_input_and_gate_text_exactly(tmp_path):
    gates = json.dumps([{"pattern": "confirm", "response": "  yes \t"}]).replace('"', '""')
    p = write(
        tmp_path,
        "s.csv",
        "id,type,input,exercises_sections,gate_responses,rationale\n"
        f' h1 , happy ,"  leading spaces", Sorting ; Tone ,"{gates}", \n'
        'e1,edge,"\ttab\n",,,  why  \n',
    )
    data, _ = sets.parse_located(p.read_text(encoding="utf-8"), "csv", str(p))
    assert (data[0]["id"], data[0]["type"], data[0]["input"]) == ("h1", "happy", "  leading spaces")
    assert data[0]["exercises_sections"] == ["Sorting", "Tone"]
    assert data[0]["gate_responses"][0]["response"] == "  yes \t"
    assert "rationale" not in data[0]
    assert data[1]["input"] == "\ttab\n" and data[1]["rationale"] == "  why  "


# ---------------------------------------------------------------- 4. front matter and nothing else
FM_ONLY = "---\nname: x\ndescription: y\n---\n\n  \n"


def test_document_with_only_front_matter_is_refused(tmp_path, capsys, example):
    p = write(tmp_path, "SKILL.md", FM_ONLY)
    assert "has nothing after its front matter" in refused(load_document, p, p)
    msg = refused(check_document_text, "up.md", FM_ONLY, "up.md")
    assert "has nothing after its front matter" in msg
    assert (
        main(["check-set", "--original", str(p), "--transfer-set", str(EXAMPLE / "transfer-set.json")]) == 2
    )
    assert f"{p}: original has nothing after its front matter" in capsys.readouterr().err


def test_front_matter_rule_is_for_documents_only(tmp_path):
    text = "---\ncases: []\n---\n"
    assert read_text_file(write(tmp_path, "t.yaml", text), what="transfer set") == text
    check_document_text(text, "t.yaml", what="transfer set", document=False)
    assert load_document(write(tmp_path, "ok.md", FM_ONLY + "Do the thing.\n")).text.endswith(
        "Do the thing.\n"
    )


# ---------------------------------------------------------------- 5. one line ending
def test_crlf_and_lf_documents_hash_alike(tmp_path):
    lf = (EXAMPLE / "SKILL.md").read_bytes().replace(b"\r\n", b"\n")
    (tmp_path / "crlf.md").write_bytes(lf.replace(b"\n", b"\r\n"))
    (tmp_path / "cr.md").write_bytes(lf.replace(b"\n", b"\r"))
    (tmp_path / "lf.md").write_bytes(lf)
    docs = [load_document(tmp_path / n) for n in ("crlf.md", "cr.md", "lf.md")]
    assert len({d.hash for d in docs}) == 1 and "\r" not in docs[0].text
    assert docs[2].hash == Document("SKILL.md", lf.decode()).hash


def test_crlf_csv_set_has_no_carriage_returns_in_inputs(tmp_path):
    rows = [
        "id,type,input",
        'h1,happy,"two\nlines"',
        "e1,edge,one",
        "a1,adversarial,x",
        "c1,composition,y",
        "h2,happy,z",
    ]
    crlf = ("\n".join(rows) + "\n").replace("\n", "\r\n")  # as a Windows spreadsheet saves it, cells too
    p = tmp_path / "s.csv"
    p.write_bytes(crlf.encode())
    ts = sets.load(p)
    assert ts.cases[0].input == "two\nlines" and not any("\r" in c.input for c in ts.cases)
    up = sets.load_text(crlf, "up.csv")  # an upload, without a file
    assert up.cases[0].input == "two\nlines"


def test_normalize_newlines():
    assert normalize_newlines("a\r\nb\rc\nd\u2028e") == "a\nb\nc\nd\u2028e"


# ---------------------------------------------------------------- 6. JSON messages say "at" once
def test_json_problem_wording():
    with pytest.raises(json.JSONDecodeError) as e:
        json.loads('{"a": "open')
    from abeq.errors import json_problem

    text = json_problem(e.value)
    assert "at at" not in text and text.startswith("Unterminated string starting at line 1, column 7")


def test_unterminated_string_message_in_a_set(tmp_path):
    msg = refused(sets.load, p := write(tmp_path, "s.json", '{"cases": ["open'), p)
    assert "at at" not in msg and "Unterminated string starting here" in msg
