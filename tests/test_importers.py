"""Importers on files in each tool's real format; missing case types; export round trips; import-set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abeq import sets
from abeq.cli import main
from abeq.cli import sets as cli_sets
from abeq.errors import InputError, MissingTypesError
from abeq.schemas import CASE_TYPES

FIX = Path(__file__).resolve().parent / "fixtures"
PROMPTFOO = FIX / "promptfoo" / "promptfooconfig.yaml"
EVALS = FIX / "skill-creator" / "release-notes" / "evals" / "evals.json"
UNTYPED_PF = [
    "typical-minor-release",
    "case-3",
    "security-fix-with-a-cve",
    "changelog-lint-missing",
    "changelog-lint-missing-2",
]


# ---------------------------------------------------------------- promptfoo
def test_promptfoo_config_becomes_cases_with_ids_inputs_and_assertions():
    imp = sets.read_source("promptfoo", PROMPTFOO)
    by_id = {c["id"]: c for c in imp.cases}
    # description -> slug, a repeated one deduplicated, no description -> case-N by position
    assert list(by_id) == [
        "typical-minor-release",
        "typical-minor-release-2",
        "case-3",
        "security-fix-with-a-cve",
        "changelog-lint-missing",
        "changelog-lint-missing-2",
        "docs-only-release",
    ]
    # defaultTest vars merge in; several vars read as "name: value" lines; a test's var wins
    assert by_id["case-3"]["input"] == "product: harbor\nchanges: misc cleanup (#490)"
    first = by_id["typical-minor-release"]
    assert first["input"].startswith("product: tidyq\nchanges: feat: add --since flag")
    # (issue 13) asserts are assertions in promptfoo's terms, not expectation text: defaultTest's
    # first, then the test's own; assert-set flattened, each member numbered by its set
    assert [(a["type"], a["value"]) for a in first["assertions"]] == [
        ("not-icontains", "DATA-882"),
        ("contains", "(#471)"),
        ("llm-rubric", "Groups the changes under Features and Fixes and leaves out the CI change"),
    ]
    assert "expectations" not in first
    second = by_id["typical-minor-release-2"]["assertions"]
    assert second[-1] == {
        "type": "javascript",
        "value": "output.split(' ').length < 400",
        "metric": "",
        "options": {"assert_set": 1},
    }


def test_promptfoo_follows_file_references_expands_var_lists_and_skips_code():
    imp = sets.read_source("promptfoo", PROMPTFOO)
    by_id = {c["id"]: c for c in imp.cases}
    last = by_id["security-fix-with-a-cve"]["assertions"][-1]  # from tests/more_tests.yaml
    assert (last["type"], last["value"]) == ("not-icontains", "../")
    assert by_id["changelog-lint-missing-2"]["input"].endswith(
        "shell completions for fish (#920)"
    )  # a var list
    csv_last = by_id["docs-only-release"]["assertions"][-1]  # promptfoo CSV "contains: Documentation":
    # promptfoo trims the value after the colon (src/csv.ts, buildAssertionFromRegexMatch)
    assert (csv_last["type"], csv_last["value"]) == ("contains", "Documentation")
    assert any("generate_tests.py" in w and "skipped" in w for w in imp.warnings)


def test_promptfoo_types_are_read_when_declared_and_never_invented():
    imp = sets.read_source("promptfoo", PROMPTFOO)
    types = {c["id"]: c.get("type") for c in imp.cases}
    assert types["typical-minor-release-2"] == "edge"  # metadata.case_type
    assert types["docs-only-release"] == "happy"  # __metadata:case_type in the CSV
    assert imp.untyped == UNTYPED_PF
    with pytest.raises(MissingTypesError) as e:
        imp.resolve()
    assert e.value.case_ids == UNTYPED_PF and str(PROMPTFOO) in str(e.value)
    assert "typical-minor-release, case-3" in str(e.value) and "--default-type" in str(e.value)


def test_a_default_type_is_applied_only_where_missing_and_marked():
    ts, warnings = sets.import_set("promptfoo", PROMPTFOO, default_type="happy")
    status = {c.id: (c.type, c.status) for c in ts.cases}
    assert status["case-3"] == ("happy", "user-modified")
    assert status["typical-minor-release-2"] == ("edge", "user-added")  # typed in the source: untouched
    assert any("default type 'happy'" in w and "case-3" in w for w in warnings)
    assert not ts.user_confirmed


def test_per_case_types_from_a_reviewer_resolve_the_rest():
    imp = sets.read_source("promptfoo", PROMPTFOO)
    types = dict(zip(UNTYPED_PF, ["happy", "adversarial", "edge", "composition", "composition"]))
    ts, _ = imp.resolve(types=types)
    assert {c.id: c.type for c in ts.cases}["case-3"] == "adversarial"
    with pytest.raises(InputError, match="'happpy' is not a case type"):
        imp.resolve(types={**types, "case-3": "happpy"})


def test_a_promptfoo_test_without_vars_is_named(tmp_path):
    p = tmp_path / "promptfooconfig.yaml"
    p.write_text(
        # a prompt made by code has no text to stand in for the missing vars (a written one would: issue 24)
        "prompts: [file://make_prompt.py]\ntests:\n  - vars: {q: hello}\n  - description: nothing here\n"
        "    assert: []\n"
    )
    with pytest.raises(InputError) as e:
        sets.read_source("promptfoo", p)
    assert str(p) in str(e.value) and "test 2: has no vars" in str(e.value)


def test_a_promptfoo_misspelt_case_type_is_an_error_not_a_gap(tmp_path):
    p = tmp_path / "tests.yaml"
    p.write_text("- vars: {q: hello}\n  metadata: {case_type: happpy}\n")
    with pytest.raises(InputError, match="test 1: case_type 'happpy' is not a case type"):
        sets.read_source("promptfoo", p)


# ---------------------------------------------------------------- skill-creator
def test_skill_creator_evals_keep_prompt_ids_and_expectations():
    imp = sets.read_source("skill-creator", EVALS)
    assert [c["id"] for c in imp.cases] == ["eval-1", "eval-2", "eval-3"]
    assert imp.untyped == ["eval-1", "eval-2", "eval-3"]
    one = imp.cases[0]
    assert one["input"].startswith("Write release notes for tidyq 2.4.0.")
    assert one["expectations"] == [
        "The output has a Features heading and a Fixes heading",
        "The internal ticket id DATA-882 does not appear",
        "The CI change is left out",
    ]
    # (issue 13) expected_output describes success for a person; it is not a check, so it is metadata
    assert one["metadata"]["expected_output"].startswith("Short Markdown notes with Features")
    # input files are named in the input (the runner gets text only) and the reviewer is told
    assert imp.cases[1]["input"].endswith("Input files: evals/files/harbor-changes.csv")
    assert any("does not attach their contents" in w for w in imp.warnings)
    ts, _ = imp.resolve(default_type="edge")
    assert ts.cases[2].expectations[-1] == "@oyelowo is credited"


def test_skill_creator_eval_without_prompt_is_named(tmp_path):
    p = tmp_path / "evals.json"
    p.write_text(
        json.dumps({"skill_name": "x", "evals": [{"id": 1, "prompt": "ok"}, {"id": 7, "expectations": []}]})
    )
    with pytest.raises(InputError) as e:
        sets.read_source("skill-creator", p)
    assert str(p) in str(e.value) and "evals[1] (id 7): 'prompt' is missing" in str(e.value)


def test_skill_creator_duplicate_ids_are_refused(tmp_path):
    p = tmp_path / "evals.json"
    p.write_text(json.dumps({"evals": [{"id": 1, "prompt": "a"}, {"id": 1, "prompt": "b"}]}))
    with pytest.raises(InputError, match=r"duplicate case id 'eval-1' \(evals\[0\] \(id 1\) and evals\[1\]"):
        sets.import_set("skill-creator", p, default_type="happy")


# ---------------------------------------------------------------- abeq's own formats
def test_a_csv_without_types_is_reported_like_any_other_source(tmp_path):
    p = tmp_path / "cases.csv"
    p.write_text("id,type,input\na,happy,first\nb,,second\n")
    with pytest.raises(MissingTypesError) as e:
        sets.import_set("csv", p)
    assert e.value.case_ids == ["b"]
    ts, _ = sets.import_set("csv", p, default_type="edge")
    assert [(c.type, c.status) for c in ts.cases] == [("happy", "user-added"), ("edge", "user-modified")]


@pytest.mark.parametrize("fmt", ["json", "yaml", "jsonl", "csv"])
def test_export_and_reimport_keep_the_set_hash(tmp_path, example, fmt):
    ts = sets.load(example["dir"] / "transfer-set.json")
    ts = ts.model_copy(
        update={"cases": [ts.cases[0].model_copy(update={"expectations": ["a; b", "c"]}), *ts.cases[1:]]}
    )
    p = tmp_path / f"out.{fmt}"
    p.write_text(sets.export_text(ts, fmt))
    back, _ = sets.import_set(fmt, p)
    assert sets.set_hash(back) == sets.set_hash(ts)
    assert back.cases[0].expectations == ["a; b", "c"]


# ---------------------------------------------------------------- import-set from the CLI
def test_import_set_names_untyped_cases_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "set.json"
    assert main(["import-set", "--from", "skill-creator", str(EVALS), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "3 case(s) have no type" in err and "eval-1, eval-2, eval-3" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_import_set_with_a_default_type_writes_a_loadable_unconfirmed_set(tmp_path, capsys):
    out = tmp_path / "set.yaml"
    assert (
        main(
            [
                "import-set",
                "--from",
                "promptfoo",
                str(PROMPTFOO),
                "--out",
                str(out),
                "--default-type",
                "happy",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "wrote 7 cases" in err and "default type 'happy'" in err
    ts = sets.load(out)
    assert len(ts.cases) == 7 and not ts.user_confirmed
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left behind


def test_import_set_bad_input_exits_2_with_the_file_named(tmp_path, capsys):
    bad = tmp_path / "promptfooconfig.yaml"
    bad.write_text("tests:\n  - vars: {q: [unclosed\n")
    assert main(["import-set", "--from", "promptfoo", str(bad), "--out", str(tmp_path / "o.json")]) == 2
    assert f"abeq: {bad}: malformed YAML" in capsys.readouterr().err


def test_cli_choices_match_the_library():
    assert cli_sets.CASE_TYPES == CASE_TYPES


def test_the_cli_the_desk_and_the_docs_offer_the_same_importers():
    """One registry (abeq.sets.importers): `--from`, the desk's list and the transfer-sets guide's
    table name the same importers, with the same words, and each entry's detector and reader exist."""
    import importlib.util
    import re

    from abeq.cli import build_parser
    from abeq.desk import editor
    from abeq.sets.importers import ABEQ_FORMATS, ABEQ_LABEL, IMPORTERS, _load

    names = [i.name for i in IMPORTERS]
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["import-set"]
    cli = next(a for a in sub._actions if a.dest == "source")
    assert list(cli.choices) == ["detect", *names, *ABEQ_FORMATS]
    assert all(i.label in cli.help for i in IMPORTERS)
    assert editor.IMPORT_FORMATS == {
        "detect": "Detect from the file",
        "abeq": ABEQ_LABEL,
        **{i.name: i.label for i in IMPORTERS},
    }
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("abeq_docs_hooks", root / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    guide = hooks.on_page_markdown((root / "docs/guides/transfer-sets.md").read_text(), None, None, None)
    documented = re.findall(r"^\| `([\w-]+)` \| (.+) \|$", guide, re.M)
    assert [(n, label) for n, label in documented if n in names] == [(i.name, i.label) for i in IMPORTERS]
    for i in IMPORTERS:
        assert callable(_load(i.detector)) and callable(_load(i.reader))


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("promptfooconfig.yaml", "evals: []\n", "promptfoo"),  # the name decides first
        ("evals.json", json.dumps({"skill_name": "x", "evals": []}), "skill-creator"),
        ("t.csv", "query,should_trigger\nhello,true\n", "skill-creator"),  # not promptfoo's CSV
        ("t.csv", "question,answer\nhi,there\n", "dataset"),  # another tool's rows, not promptfoo vars
        ("t.yaml", "tests:\n  - vars: {q: hi}\n", "promptfoo"),
        ("t.json", json.dumps({"examples": [{"input": "a", "ideal": "b"}]}), "dataset"),
        ("t.json", json.dumps({"tests": [{"question": "a", "answer": "b"}]}), "promptfoo"),
        ("t.jsonl", json.dumps({"id": "a", "type": "happy", "input": "x"}) + "\n", "jsonl"),
    ],
)
def test_detection_asks_the_registry_in_its_order(name, text, expected):
    from abeq.sets.imported import detect_format

    assert detect_format(name, text) == expected
