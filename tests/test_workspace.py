"""Case workspaces: a folder's content (not its path) in the case identity, bad folders refused by
name, the copy a run gets (document placed where an agent looks) and the changes it reports."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLE

from abeq import sets
from abeq.documents import Document
from abeq.errors import InputError
from abeq.execution.keys import runner_key
from abeq.execution.runners.workspace import RunWorkspace, placement
from abeq.models import ModelSpec, scripted
from abeq.schemas import Case
from abeq.sets.workspace import MAX_FILE_BYTES


def make_set(root: Path, folder: dict[str, bytes | str], **case) -> Path:
    """A one-case set file in root/ whose workspace folder is root/repo/."""
    for rel, body in folder.items():
        p = root / "repo" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(body if isinstance(body, bytes) else body.encode())
    c = {"id": "c1", "type": "happy", "input": "Fix the bug in app.py", "workspace": "repo", **case}
    path = root / "cases.json"
    path.write_text(json.dumps({"cases": [c]}))
    return path


def key_of(ts) -> str:
    spec = ModelSpec(name="scripted/rules")
    return runner_key("doc", ts.cases[0], "skill", spec)


def test_the_folders_content_not_its_path_is_the_case_identity(tmp_path):
    a = sets.load(make_set(tmp_path / "a", {"app.py": "x = 1\n", "docs/README.md": "hi\n"}))
    moved = tmp_path / "elsewhere"
    shutil.copytree(tmp_path / "a", moved)
    b = sets.load(moved / "cases.json")
    assert sets.set_hash(a) == sets.set_hash(b) and key_of(a) == key_of(b)
    (moved / "repo" / "app.py").write_text("x = 2\n")
    c = sets.load(moved / "cases.json")
    assert sets.set_hash(c) != sets.set_hash(a) and key_of(c) != key_of(a)


def test_editing_a_workspace_file_unconfirms_the_set(tmp_path):
    path = make_set(tmp_path, {"app.py": "x = 1\n"})
    confirmed = sets.confirm(sets.load(path), "h")
    path.write_text(sets.dump(confirmed))
    assert sets.confirmation_problem(sets.load(path), "h") == ""
    (tmp_path / "repo" / "app.py").write_text("x = 2\n")
    assert "changed" in sets.confirmation_problem(sets.load(path), "h")
    assert "x = 1" not in path.read_text()  # the folder's files are never written into the set file


BAD = {
    "missing folder": ({}, {"workspace": "nope"}, "not found", "cases.json"),
    "binary file": ({"logo.png": b"\x89PNG\x00\x01"}, {}, "binary", "logo.png"),
    "huge file": ({"big.txt": "x" * (MAX_FILE_BYTES + 1)}, {}, "bytes", "big.txt"),
    "not utf-8": ({"a.txt": "café".encode("latin-1")}, {}, "UTF-8", "a.txt"),
    "inline path outside": ({"a.txt": "x"}, {"files": {"../escape.txt": "x"}}, "outside", "cases.json"),
    "inline absolute path": ({"a.txt": "x"}, {"files": {"/etc/x": "x"}}, "outside", "cases.json"),
    "file over a folder": (
        {"src/app.py": "x"},
        {"files": {"src": "x"}},
        "both a file and a folder",
        "cases.json",
    ),
}


@pytest.mark.parametrize("label", list(BAD))
def test_a_bad_workspace_is_refused_naming_the_file(tmp_path, label):
    files, case, needle, named = BAD[label]
    path = make_set(tmp_path, files, **case)
    with pytest.raises(InputError) as e:
        sets.load(path)
    assert needle.lower() in e.value.render().lower() and named in e.value.render()
    assert e.value.exit_code == 2


def test_a_symlink_in_the_folder_is_refused(tmp_path):
    path = make_set(tmp_path, {"a.txt": "x"})
    (tmp_path / "repo" / "link").symlink_to("/etc/hostname")
    with pytest.raises(InputError, match="symbolic link"):
        sets.load(path)


def test_an_uploaded_set_cannot_name_a_folder(tmp_path):
    text = make_set(tmp_path, {"a.txt": "x"}).read_text()
    with pytest.raises(InputError, match="no file location"):
        sets.load_text(text, "upload.json")


def test_the_cli_refuses_a_bad_workspace_with_exit_2_and_stores_nothing(tmp_path, capsys):
    from abeq.cli import main

    path = make_set(tmp_path, {"bin.dat": b"\x00\x01"})
    db = tmp_path / "abeq.db"
    code = main(
        ["run", "--original", str(EXAMPLE / "SKILL.md"), "--candidate", str(EXAMPLE / "candidate-lossy.md"),
         "--transfer-set", str(path), "--confirm", "--allow-thin", "--runner-model", "scripted/rules",
         "--db", str(db)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "bin.dat" in err and "binary" in err and not db.exists()


def test_the_store_keeps_a_folders_files_with_the_set(tmp_path, store):
    from abeq.desk.editor import from_frame, to_frame

    ts = sets.load(make_set(tmp_path, {"app.py": "x = 1\n"}))
    shutil.rmtree(tmp_path / "repo")  # the desk runs from the database, not from the folder
    back = store.inputs.transfer_set(store.inputs.put_transfer_set(ts))
    assert sets.set_hash(back) == sets.set_hash(ts)
    edited = from_frame(to_frame(back), back)  # the desk's table editor keeps them too
    assert sets.set_hash(back.model_copy(update={"cases": edited})) == sets.set_hash(ts)


def test_a_case_built_in_python_must_have_its_folder_read(tmp_path):
    ts = sets.from_obj({"cases": [{"id": "a", "type": "happy", "input": "x", "workspace": "repo"}]})
    with pytest.raises(InputError, match="was not read"):
        sets.set_hash(ts)


def test_the_document_is_placed_where_an_agent_looks():
    skill = Document("SKILL.md", "---\nname: Release Notes\n---\nbody")
    assert placement(skill, "skill") == ".claude/skills/release-notes/SKILL.md"
    assert placement(Document("deploy-helper.md", "no front matter"), "skill") == (
        ".claude/skills/deploy-helper/SKILL.md"
    )
    assert placement(Document("AGENTS.md", "x"), "instruction-file") == "AGENTS.md"
    assert placement(Document("style.mdc", "x"), "instruction-file") == ".cursor/rules/style.mdc"


def test_a_run_gets_a_fresh_copy_and_reports_what_it_changed():
    case = Case(id="a", type="happy", input="x", files={"app.py": "a = 1\nb = 2\n", "old.txt": "bye\n"})
    with RunWorkspace(case, Document("AGENTS.md", "rules"), "AGENTS.md") as ws:
        root = ws.root
        assert (root / "AGENTS.md").read_text() == "rules" and (root / "app.py").is_file()
        (root / "app.py").write_text("a = 1\nb = 3\n")
        (root / "old.txt").unlink()
        (root / "new.md").write_text("hello\n")
        (root / "blob.bin").write_bytes(b"\x00" * 10)
        (root / ".git").mkdir()
        (root / ".git" / "HEAD").write_text("ref")
        changes = {c.path: c for c in ws.changes()}
    assert not root.exists()
    assert {p: c.status for p, c in changes.items()} == {
        "app.py": "changed",
        "old.txt": "deleted",
        "new.md": "added",
        "blob.bin": "added",
    }
    assert "-b = 2\n+b = 3" in changes["app.py"].diff and "+++ b/new.md" in changes["new.md"].diff
    assert changes["blob.bin"].diff == "" and "not text" in changes["blob.bin"].note


def test_a_huge_change_is_cut_to_a_bound():
    case = Case(id="a", type="happy", input="x")
    with RunWorkspace(case, Document("AGENTS.md", "r"), "AGENTS.md") as ws:
        (ws.root / "big.txt").write_text("line\n" * 50_000)
        (change,) = ws.changes()
    assert len(change.diff) <= 4_000 and "cut" in change.note


def test_a_chat_runner_is_shown_the_cases_files(store, example, scripted_cfg):
    from abeq.execution.engine import Engine

    case = example["ts"].cases[0].model_copy(update={"files": {"CHANGELOG.md": "## 2.3.1\n- older entry\n"}})
    ts = sets.confirm(example["ts"].model_copy(update={"cases": [case]}), example["original"].hash)
    Engine(store, example["original"], example["lossy"], ts, scripted_cfg(allow_thin=True)).run()
    runner_prompts = [
        h["messages"][1]["content"]
        for h in scripted.model("rules").history
        if '<data name="document">' in h["messages"][1]["content"]
    ]
    assert runner_prompts and all("=== CHANGELOG.md ===\n## 2.3.1" in p for p in runner_prompts)
