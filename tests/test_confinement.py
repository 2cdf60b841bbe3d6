"""A transfer set reads nothing outside its project (issue 27 item 2): a workspace that escapes by
`..`, an absolute path or a symbolic link is refused before anything is read; promptfoo files from
outside a config's project are imported as promptfoo would, and named."""

from __future__ import annotations

import gc
import json

import pytest
from conftest import EXAMPLE

from abeq import sets
from abeq.cli import main
from abeq.errors import InputError

KEY = "sk-ant-confinement-test-secret-0123456789"


@pytest.fixture
def project(tmp_path):
    """project/ (a git checkout) beside secretdir/ holding a key; the set file lives in project/sets/."""
    (tmp_path / "secretdir").mkdir()
    (tmp_path / "secretdir" / "creds.txt").write_text(f"key={KEY}\n")
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "sets").mkdir()
    (root / "work" / "inside").mkdir(parents=True)
    (root / "work" / "inside" / "notes.md").write_text("inside the project\n")
    return root


def _set(project, workspace: str):
    ts = json.loads((EXAMPLE / "transfer-set.json").read_text())
    ts["cases"][0]["workspace"] = workspace
    p = project / "sets" / "set.json"
    p.write_text(json.dumps(ts))
    return p


def _run(project, ts_path):
    return main(
        ["run", "--original", str(EXAMPLE / "SKILL.md"),
         "--candidate", str(EXAMPLE / "candidate-faithful.md"), "--transfer-set", str(ts_path),
         "--runner-model", "scripted/rules", "--confirm", "--quiet",
         "--db", str(project.parent / "abeq.db")]
    )  # fmt: skip


def _escapes(project) -> dict[str, str]:
    (project / "work" / "linked").symlink_to(project.parent / "secretdir")
    (project / "work" / "hasfile").mkdir()
    (project / "work" / "hasfile" / "creds.txt").symlink_to(project.parent / "secretdir" / "creds.txt")
    return {
        "dotdot": "../../secretdir",
        "absolute": str(project.parent / "secretdir"),
        "home": "~/secretdir",
        "symlinked folder": "../work/linked",
        "symlinked file": "../work/hasfile",
    }


def test_a_workspace_outside_the_project_exits_2_and_the_database_is_unchanged(project, capsys):
    assert _run(project, _set(project, "../work/inside")) in (0, 1)  # an inside folder works
    db = project.parent / "abeq.db"
    assert b"inside the project" in b"".join(p.read_bytes() for p in project.parent.glob("abeq.db*"))
    gc.collect()  # the run's connection checkpoints the WAL when freed: let it before the snapshot
    before = {p.name: p.read_bytes() for p in project.parent.glob("abeq.db*")}
    for label, workspace in _escapes(project).items():
        code = _run(project, _set(project, workspace))
        err = capsys.readouterr().err
        assert code == 2, (label, err)
        assert "Traceback" not in err and ("outside" in err or "absolute" in err or "symbolic link" in err)
        gc.collect()
        assert {p.name: p.read_bytes() for p in project.parent.glob("abeq.db*")} == before, label
    assert db.exists() and KEY.encode() not in db.read_bytes()


def test_the_project_is_the_nearest_git_folder_else_the_sets_own(project):
    ts = _set(project, "../work/inside")
    assert sets.load(ts).cases[0].workspace == "../work/inside"
    (project / ".git").rmdir()  # no project: the set's own folder is the limit
    with pytest.raises(InputError, match="outside the set's project"):
        sets.load(ts)


def _promptfoo_reaching_out(project):
    outside = project.parent / "elsewhere"
    outside.mkdir()
    (outside / "tests.yaml").write_text("- vars: {q: from the outside tests file}\n")
    (outside / "q.txt").write_text(f"a var read from outside {KEY}\n")
    cfg = project / "evals" / "promptfooconfig.yaml"
    cfg.parent.mkdir()
    cfg.write_text(
        "prompts: ['{{q}}']\ntests:\n  - file://../../elsewhere/tests.yaml\n"
        "  - vars: {q: file://../../elsewhere/q.txt}\n  - vars: {q: an inline test}\n"
    )
    return cfg, outside


def test_promptfoo_files_from_outside_the_project_import_with_a_warning_naming_them(project, capsys):
    cfg, outside = _promptfoo_reaching_out(project)
    out = project / "set.json"
    code = main(["import-set", str(cfg), "--out", str(out), "--default-type", "happy"])
    err = capsys.readouterr().err
    assert code == 0 and len(json.loads(out.read_text())["cases"]) == 3  # imported as promptfoo would
    warning = next(line for line in err.splitlines() if "outside the config's project" in line)
    assert str(outside / "tests.yaml") in warning and str(outside / "q.txt") in warning


def test_the_desk_refuses_a_promptfoo_config_that_reads_outside_its_project(project, example):
    from abeq.desk import editor

    cfg, outside = _promptfoo_reaching_out(project)
    with pytest.raises(InputError, match="outside its project") as e:
        editor.import_path(str(cfg), "promptfoo", example["original"].hash, default_type="happy")
    assert str(outside / "q.txt") in e.value.message
    (cfg.parent / "inside.yaml").write_text("- vars: {q: inside}\n")
    cfg.write_text("prompts: ['{{q}}']\ntests:\n  - file://inside.yaml\n")
    assert len(
        editor.import_path(str(cfg), "promptfoo", example["original"].hash, default_type="happy").ts.cases
    )


def test_check_set_json_lists_every_file_a_run_would_read(project, capsys):
    ts = _set(project, "../work/inside")
    (project / "CLAUDE.md").write_text("# Rules\n\nSee @docs/style.md for the style.\n")
    (project / "docs").mkdir()
    (project / "docs" / "style.md").write_text("# Style\n\nShort lines.\n")
    code = main(["check-set", "--original", str(project / "CLAUDE.md"), "--transfer-set", str(ts), "--json"])
    assert code in (0, 1, 2)
    files = json.loads(capsys.readouterr().out)["files_read"]
    assert files == [
        str(project / "CLAUDE.md"),
        str(project / "docs" / "style.md"),
        str(ts),
        str(project / "work" / "inside" / "notes.md"),
    ]
