"""git:REV:PATH inputs: a document or set read at a revision, with what travels with it."""

import json

import pytest
from conftest import EXAMPLE
from gitrepo import GitRepo

from abeq.cli import main
from abeq.documents import load_document
from abeq.errors import InputError
from abeq.sets.imported import read_source


@pytest.fixture
def repo(tmp_path, monkeypatch):
    r = GitRepo(tmp_path / "repo")
    monkeypatch.chdir(r.root)
    return r


def test_an_instruction_files_import_is_read_at_the_revision(repo):
    a = repo.commit("a", {"CLAUDE.md": "# Rules\n\n@docs/style.md\n", "docs/style.md": "- Use tabs.\n"})
    repo.commit("b", {"docs/style.md": "- Use spaces.\n"})
    repo.write({"docs/style.md": "- Uncommitted.\n"})
    old, new = load_document(f"git:{a}:CLAUDE.md"), load_document("git:HEAD:CLAUDE.md")
    assert "Use tabs" in old.text and "Use spaces" in new.text
    assert old.source == f"git:{a}:CLAUDE.md"
    assert "Uncommitted" not in new.text and old.hash != new.hash


def test_a_skills_folder_travels_at_the_revision(repo):
    a = repo.commit(
        "a",
        {"skills/x/SKILL.md": "# X\n\n- Read references/a.md first.\n", "skills/x/references/a.md": "old\n"},
    )
    repo.commit("b", {"skills/x/references/a.md": "new\n"})
    assert load_document(f"git:{a}:skills/x/SKILL.md").folder == {"references/a.md": "old\n"}
    assert load_document("git:main:skills/x").folder == {"references/a.md": "new\n"}


def test_a_promptfoo_configs_file_tests_are_read_at_the_revision(repo):
    config = "tests:\n  - file://cases/tests.yaml\n"
    a = repo.commit(
        "a", {"evals/promptfooconfig.yaml": config, "evals/cases/tests.yaml": "- vars: {q: first}\n"}
    )
    repo.commit("b", {"evals/cases/tests.yaml": "- vars: {q: second}\n"})
    got = read_source("promptfoo", f"git:{a}:evals/promptfooconfig.yaml")
    assert "first" in json.dumps(got.cases) and "second" not in json.dumps(got.cases)
    assert got.path == f"git:{a}:evals/promptfooconfig.yaml"


@pytest.mark.parametrize(
    "spec, said",
    [
        ("git:nope:CLAUDE.md", "unknown revision 'nope'"),
        ("git:--output=x:CLAUDE.md", "starts with '-'"),
        ("git:HEAD:MISSING.md", "MISSING.md does not exist at HEAD"),
        ("git:HEAD", "is not git:REV:PATH"),
        ("git:HEAD:../x.md", "is not git:REV:PATH"),
    ],
)
def test_bad_revisions_and_paths_are_named(repo, spec, said):
    repo.commit("a", {"CLAUDE.md": "- Be brief.\n"})
    with pytest.raises(InputError, match=said.replace("(", r"\(")):
        load_document(spec)


def test_an_oversized_blob_is_refused_unread(repo):
    repo.commit("a", {"CLAUDE.md": "- x\n" * 100_000})  # 400 KB: over a document's 200 KB
    with pytest.raises(InputError, match="400,000 bytes at this revision; the limit is 200,000") as e:
        load_document("git:HEAD:CLAUDE.md")
    assert "abeq-git-" not in str(e.value)  # the temporary folder is never named


def test_the_cli_exits_2_naming_an_unknown_revision(repo, capsys, tmp_path):
    repo.commit("a", {"SKILL.md": (EXAMPLE / "SKILL.md").read_text()})
    argv = ["run", "--original", "git:v9:SKILL.md", "--candidate", "git:HEAD:SKILL.md"]
    argv += ["--transfer-set", str(EXAMPLE / "transfer-set.json"), "--db", str(tmp_path / "a.db")]
    assert main(argv + ["--runner-model", "scripted/rules", "--quiet"]) == 2
    assert "unknown revision 'v9'" in capsys.readouterr().err


def test_the_record_names_the_revision(repo, tmp_path):
    a = repo.commit(
        "a",
        {
            "SKILL.md": (EXAMPLE / "SKILL.md").read_text(),
            "cases.json": (EXAMPLE / "transfer-set.json").read_text(),
        },
    )
    repo.commit("b", {"SKILL.md": (EXAMPLE / "candidate-faithful.md").read_text()})
    record = tmp_path / "record.json"
    argv = ["run", "--original", f"git:{a[:8]}:SKILL.md", "--candidate", "git:HEAD:SKILL.md"]
    argv += ["--transfer-set", "git:HEAD:cases.json", "--db", str(tmp_path / "a.db"), "--record", str(record)]
    assert (
        main(
            argv + ["--runner-model", "scripted/rules", "--quiet", "--confirm", "--out", str(tmp_path / "r")]
        )
        == 0
    )
    head = repo.git("rev-parse", "HEAD")
    assert json.loads(record.read_text())["run"]["sources"] == {
        "original": f"git:{a}:SKILL.md",
        "candidate": f"git:{head}:SKILL.md",
        "transfer_set": f"git:{head}:cases.json",
    }


def test_the_desks_path_field_imports_a_set_at_a_revision(repo):
    from abeq.desk import editor

    config = "tests:\n  - file://cases/tests.yaml\n"
    a = repo.commit(
        "a", {"evals/promptfooconfig.yaml": config, "evals/cases/tests.yaml": "- vars: {q: first}\n"}
    )
    repo.commit("b", {"evals/cases/tests.yaml": "- vars: {q: second}\n"})
    got = editor.import_path(f"git:{a}:evals/promptfooconfig.yaml", "detect", "", default_type="happy")
    assert [c.input for c in got.ts.cases] == ["first"]
    assert not any("abeq-git-" in w for w in got.warnings)


def test_a_set_at_a_revision_is_not_confirmed_in_place(repo, capsys):
    repo.commit(
        "a",
        {
            "SKILL.md": (EXAMPLE / "SKILL.md").read_text(),
            "cases.json": (EXAMPLE / "transfer-set.json").read_text(),
        },
    )
    argv = [
        "check-set",
        "--original",
        "git:HEAD:SKILL.md",
        "--transfer-set",
        "git:HEAD:cases.json",
        "--confirm",
    ]
    assert main(argv) == 2
    assert "cannot be confirmed in place" in capsys.readouterr().err
    assert sorted(p.name for p in repo.root.iterdir()) == [".git", "SKILL.md", "cases.json"]
    assert (
        main([*argv[:3], "--transfer-set", "cases.json", "--confirm"]) == 0
    )  # the checkout's file, for the base
