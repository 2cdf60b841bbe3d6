"""The desk imports what `abeq import-set` imports: promptfoo configs with the files they name,
skill-creator evals and trigger evals, abeq's own sets; by upload (the files uploaded together sit
side by side in a fresh folder) or by a path on this machine. Real public files from
tests/fixtures/real (sources in its SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLE

from abeq import sets
from abeq.desk import editor
from abeq.documents import load_document
from abeq.errors import InputError
from abeq.results.store.store import Store
from abeq.sets.imported import detect_format

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
PF = REAL / "promptfoo"
SC = REAL / "skill-creator"
ORIGINAL = load_document(EXAMPLE / "SKILL.md").hash


def uploads(*paths: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in paths}


def test_a_config_uploaded_with_the_tests_file_it_names_imports_as_the_cli_does():
    cfg = PF / "simple-csv" / "promptfooconfig.yaml"
    got = editor.import_uploads(
        uploads(cfg, PF / "simple-csv" / "tests.csv"), cfg.name, "detect", ORIGINAL, default_type="edge"
    )
    cli, _ = sets.import_set("promptfoo", cfg, default_type="edge")
    assert got.read_as == "promptfoo" and [c.model_dump() for c in got.ts.cases] == [
        c.model_dump() for c in cli.cases
    ]
    assert len(got.ts.cases) == 4 and not got.ts.user_confirmed
    assert not any("abeq-upload-" in w for w in got.warnings)


def test_a_config_uploaded_alone_says_to_bring_the_files_it_names():
    cfg = PF / "simple-csv" / "promptfooconfig.yaml"
    with pytest.raises(InputError) as e:
        editor.import_uploads(uploads(cfg), cfg.name, "promptfoo", ORIGINAL, default_type="happy")
    said = e.value.render()
    assert "file://tests.csv" in said and "select the files it names together" in said
    assert "abeq-upload-" not in said and "/tmp" not in said  # nothing of the folder it was read from


def test_cases_without_a_type_are_named_and_the_desk_says_how_to_give_one():
    cfg = PF / "simple-test" / "promptfooconfig.yaml"
    with pytest.raises(InputError) as e:
        editor.import_uploads(uploads(cfg), cfg.name, "detect", ORIGINAL)
    assert "have no type" in e.value.message and e.value.hint == editor.TYPES_HINT
    assert "--default-type" not in e.value.render()  # a desk user has no command line here


def test_skill_creator_evals_are_detected_and_keep_their_assertions():
    f = SC / "3shn__skill-sysml__evals.json"
    got = editor.import_uploads(uploads(f), f.name, "detect", ORIGINAL, default_type="happy")
    assert got.read_as == "skill-creator" and len(got.ts.cases) == 3
    assert sum(len(c.assertions) + len(c.expectations) for c in got.ts.cases) > 0


def test_a_trigger_eval_is_refused_by_name_unless_its_queries_are_asked_for():
    f = SC / "longwind48__cachewipe__trigger-eval.json"
    with pytest.raises(InputError, match="trigger eval"):
        editor.import_uploads(uploads(f), f.name, "detect", ORIGINAL, default_type="happy")
    got = editor.import_uploads(
        uploads(f), f.name, "detect", ORIGINAL, default_type="happy", trigger_queries=True
    )
    assert len(got.ts.cases) == 10 and any("should not" in w for w in got.warnings)


def test_by_path_a_config_reads_the_files_beside_it():
    cfg = PF / "eval-customer-support-rubric" / "promptfooconfig.yaml"
    got = editor.import_path(str(cfg), "detect", ORIGINAL, default_type="adversarial")
    cli, _ = sets.import_set("promptfoo", cfg, default_type="adversarial")
    assert got.read_as == "promptfoo" and got.ts.cases == cli.cases and len(cli.cases) == 8


def test_an_abeq_set_keeps_its_confirmation_only_for_its_own_original(tmp_path):
    confirmed = sets.confirm(sets.load(EXAMPLE / "transfer-set.json"), ORIGINAL)
    f = tmp_path / "set.json"
    f.write_text(sets.dump(confirmed))
    same = editor.import_path(str(f), "detect", ORIGINAL)
    other = editor.import_uploads(uploads(f), f.name, "abeq", "0" * 64)
    assert same.read_as == "json" and same.ts.user_confirmed
    assert not other.ts.user_confirmed and other.ts.cases == confirmed.cases


@pytest.mark.parametrize(
    "name, data, says",
    [
        ("evals.json", b"\xff\xfe\x00bad", "UTF-8"),
        ("promptfooconfig.yaml", b"tests: [unclosed", "promptfooconfig.yaml"),
        ("evals.json", b"", "empty"),
    ],
)
def test_bad_uploads_are_refused_naming_the_file(name, data, says):
    with pytest.raises(InputError) as e:
        editor.import_uploads({name: data}, name, "detect", ORIGINAL, default_type="happy")
    assert says in e.value.render() and name in e.value.render()


def test_detection_on_every_real_file_of_the_corpus():
    found = {
        p.relative_to(REAL).as_posix(): detect_format(p.name, p.read_text(encoding="utf-8"))
        for p in sorted([*PF.rglob("*"), *SC.rglob("*")])
        if p.suffix in (".json", ".yaml", ".csv", ".jsonl") and p.name not in ("prompt.json", "prompt.yaml")
    }
    assert {k for k, v in found.items() if v == "skill-creator"} == {
        p.relative_to(REAL).as_posix() for p in SC.glob("*.json")
    }
    assert all(v == "promptfoo" for k, v in found.items() if k.startswith("promptfoo/")), found
    assert detect_format("transfer-set.json", (EXAMPLE / "transfer-set.json").read_text()) == "json"


def test_the_transfer_set_page_imports_a_real_config_by_path(app, db):
    """On the page: Path, a type for the untyped cases, Import; the table holds the cases and the
    page says how the file was read."""
    app.switch_page("desk_pages/2_transfer_set.py").run()
    app.radio(key="set_source").set_value("Path").run()
    app.text_input(key="set_path").input(str(PF / "simple-csv" / "promptfooconfig.yaml")).run()
    app.button(key="set_import").click().run()
    assert any("have no type" in e.value for e in app.error)  # refused: nothing chosen yet
    app.selectbox(key="set_default_type").set_value("edge").run()
    app.button(key="set_import").click().run()
    assert not app.exception
    # four cases of one type: imported, and the page says a run would be refused as thin
    assert [e.value for e in app.error] == [
        "A run will be refused: this set is thin. Add cases, or tick “Accept a thin set” before confirming."
    ]
    assert any("Imported 4 cases" in s.value and "promptfoo" in s.value for s in app.success)
    store = Store(db)
    ts = store.inputs.transfer_set(store.inputs.review("example")["transfer_set_hash"])
    assert [c.type for c in ts.cases] == ["edge"] * 4 and not ts.user_confirmed


def test_by_path_an_abeq_set_brings_its_case_workspaces(tmp_path, db):
    """An upload cannot bring a workspace folder; a path can, and the desk stores it with the set."""
    from abeq.desk import session

    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "app.py").write_text("x = 1\n")
    f = tmp_path / "cases.json"
    f.write_text('{"cases": [{"id": "c1", "type": "happy", "input": "Fix app.py", "workspace": "repo"}]}')
    got = editor.import_path(str(f), "detect", ORIGINAL)
    store = Store(db)
    store.inputs.put_document("SKILL.md", load_document(EXAMPLE / "SKILL.md").text)
    store.inputs.upsert_review("ws", ORIGINAL, None, "skill")
    session.set_transfer_set(store, store.inputs.review("ws"), got.ts)
    kept = store.inputs.transfer_set(store.inputs.review("ws")["transfer_set_hash"])
    assert sets.set_hash(kept) == sets.set_hash(got.ts)
    with pytest.raises(InputError, match="workspace"):
        editor.import_uploads(uploads(f), f.name, "detect", ORIGINAL)


@pytest.mark.parametrize(
    "path, fmt",
    [
        (PF / "simple-csv" / "promptfooconfig.yaml", "promptfoo"),
        (PF / "jsonl-test-cases" / "cases.jsonl", "promptfoo"),
        (SC / "longwind48__cachewipe__evals.json", "skill-creator"),
        (EXAMPLE / "transfer-set.json", "json"),
    ],
)
def test_import_set_without_from_detects_the_format_and_says_it(tmp_path, capsys, path, fmt):
    from abeq.cli import main

    detected, explicit = tmp_path / "d.json", tmp_path / "e.json"
    assert main(["import-set", str(path), "--default-type", "happy", "--out", str(detected)]) == 0
    assert f"read as {fmt} (detected from the file" in capsys.readouterr().err
    assert (
        main(["import-set", "--from", fmt, str(path), "--default-type", "happy", "--out", str(explicit)]) == 0
    )
    assert detected.read_text() == explicit.read_text()


def test_another_tools_dataset_uploads_with_its_reference_as_a_check():
    path = REAL / "datasets" / "openai-evals" / "test_match__samples.jsonl"
    got = editor.import_uploads(
        {path.name: path.read_bytes()}, path.name, "detect", ORIGINAL, default_type="happy"
    )
    assert got.read_as == "dataset" and [c.input for c in got.ts.cases][0] == "Once upon a "
    assert got.ts.cases[0].assertions[0].value == "time" and "dataset" in editor.IMPORT_FORMATS
