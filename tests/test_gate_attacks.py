"""Issue 45: a pull request cannot pass its own gate. Each test is one way its author could have
(docs/guides/gate.md, "How a pull request could pass its own gate, and what stops it"), in a real
git repository, on the scripted model: the attack as the author would make it, then what the gate
says.

The skill here has a gate ("ask the user to confirm the version") before its rules: a case that
answers it runs every rule, one that does not stops there on both arms. So one case, happy-1,
catches the candidate that drops a rule, and the others cannot."""

import json
import sqlite3

import pytest
from gitrepo import GitRepo
from test_gate_github import github  # noqa: F401 (the GitHub double, as the job's environment)

from abeq.cli import main
from abeq.models import scripted

SKILL = "skills/notes/SKILL.md"
CASES = "skills/notes/evals/cases.json"
TEXT = """\
---
name: notes
description: Write release notes from a list of merged changes.
---

Write release notes for the people who use the software. The layout is in forms.md.

## Version

- Ask the user to confirm the version number before writing anything.

## Writing

- Write each entry in plain words for the people who use the software.
- List breaking changes first, each with its migration step.
- Leave out internal ticket ids.
"""
LOSSY = TEXT.replace("- List breaking changes first, each with its migration step.\n", "")
TOML = """\
[defaults]
runner_model = "scripted/rules"

[[document]]
path = "skills/*/SKILL.md"
transfer_set = "{dir}/evals/cases.json"
"""
ANSWER = {"gate_id": "version", "gate_type": "confirmation", "pattern": "confirm the version number"}


def case(cid: str, kind: str, answered: bool = False) -> dict:
    gates = [{**ANSWER, "response": "Yes, 2.0.0."}] if answered else []
    return {
        "id": cid,
        "type": kind,
        "input": f"Release notes for 2.0.0 ({cid}): feat: export; fix: header row; BREAKING: drop py3.8",
        "exercises_sections": ["Version", "Writing"],
        "gate_responses": gates,
    }


BASE_CASES = [
    case("happy-1", "happy", answered=True),
    case("happy-2", "happy"),
    case("edge-1", "edge"),
    case("adversarial-1", "adversarial"),
    case("composition-1", "composition"),
]


def write_set(repo, cases: list[dict]) -> None:
    """The set written and confirmed for the working tree's SKILL.md, as `abeq check-set --confirm`."""
    (repo.root / CASES).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / CASES).write_text(json.dumps({"cases": cases}, indent=2))
    assert main(["check-set", "--original", SKILL, "--transfer-set", CASES, "--confirm"]) == 0


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """main: one skill (SKILL.md naming forms.md beside it), its confirmed set, abeq.toml; branch pr."""
    r = GitRepo(tmp_path / "repo")
    monkeypatch.chdir(r.root)
    r.write({SKILL: TEXT, "skills/notes/forms.md": "Title, then one list per heading.\n", "abeq.toml": TOML})
    write_set(r, BASE_CASES)
    r.commit("base")
    r.git("checkout", "-q", "-b", "pr")
    return r


def gate(tmp_path, *extra, db=None):
    return main(["gate", "--base", "main", "--db", str(db or tmp_path / "gate.db"), "--quiet", *extra])


def result(path) -> dict:
    [doc] = json.loads(path.read_text())["documents"]
    return doc


def test_the_scripted_skill_catches_the_lossy_candidate_with_one_case(repo, tmp_path):
    repo.commit("lossy", {SKILL: LOSSY})
    out = tmp_path / "gate.json"
    assert gate(tmp_path, "--out", str(out)) == 1
    verdicts = {c["case_id"]: c["verdict"] for c in result(out)["report"]["cases"]}
    assert verdicts.pop("happy-1") == "candidate-regressed"
    assert set(verdicts.values()) == {"equivalent"}


def test_a_set_weakened_and_confirmed_in_the_pr_still_runs_its_base_cases(repo, tmp_path):
    """Way 1: the author drops the rule, edits the case that catches it (no gate answer), swaps
    another, and confirms the weaker set with the command the gate's refusal prints."""
    repo.write({SKILL: LOSSY})
    weak = [case("happy-1", "happy"), *BASE_CASES[1:2], case("edge-2", "edge"), *BASE_CASES[3:]]
    write_set(repo, weak)
    repo.commit("shorter skill, cases to match")
    out, md = tmp_path / "gate.json", tmp_path / "gate.md"
    assert gate(tmp_path, "--out", str(out), "--markdown", str(md)) == 1  # failed before: 0, PASS
    doc = result(out)
    assert doc["set_changes"] == {"added": ["edge-2"], "removed": ["edge-1"], "changed": ["happy-1"]}
    verdicts = {c["case_id"]: c["verdict"] for c in doc["report"]["cases"]}
    assert verdicts["happy-1"] == "candidate-regressed" and {"edge-1", "edge-2"} <= set(verdicts)
    line = next(x for x in md.read_text().splitlines() if x.startswith("- **FAIL**"))
    assert (
        "this pull request changed the set: removed edge-1 (still run as the base has them); "
        "changed happy-1 (run as the base has them); added edge-2" in line
    )


def test_a_pr_that_only_adds_a_case_still_runs_the_bases_cases(repo, tmp_path):
    repo.write({SKILL: LOSSY})
    write_set(repo, [*BASE_CASES, case("edge-2", "edge")])
    repo.commit("lossy, one more case")
    out = tmp_path / "gate.json"
    assert gate(tmp_path, "--out", str(out)) == 1
    doc = result(out)
    assert doc["set_changes"] == {"added": ["edge-2"], "removed": [], "changed": []}
    assert [c["case_id"] for c in doc["report"]["cases"]] == [c["id"] for c in BASE_CASES] + ["edge-2"]


def _decided_store(repo, tmp_path) -> str:
    """The author's own store: the lossy change gated, every case overridden "by alice"."""
    own = tmp_path / "own.db"
    out = tmp_path / "own.json"
    assert gate(tmp_path, "--out", str(out), db=own) == 1
    doc = result(out)
    for c in doc["report"]["cases"]:
        if c["verdict"] != "equivalent":
            argv = ["override", str(doc["run_id"]), c["case_id"], "--verdict", "equivalent"]
            assert main([*argv, "--reason", "fine", "--reviewer", "alice", "--db", str(own)]) == 0
    return str(own)


def test_a_store_committed_in_the_pr_is_refused(repo, tmp_path, capsys):
    """Way 2: the author commits a store holding "alice's" overrides where the gate keeps its store."""
    repo.commit("lossy", {SKILL: LOSSY})
    own, db = sqlite3.connect(_decided_store(repo, tmp_path)), sqlite3.connect(repo.root / "abeq-gate.db")
    own.backup(db)  # the whole store, its write-ahead log too
    own.close(), db.close()
    repo.commit("my store")
    capsys.readouterr()
    scripted.forget()
    assert gate(tmp_path, db="abeq-gate.db") == 2  # failed before: 0, PASS with no model call
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "git tracks abeq-gate.db at HEAD" in err[0] and "$RUNNER_TEMP" in err[0]
    assert scripted.model("rules").history == []


def test_a_store_inside_the_work_tree_counts_only_when_git_ignores_it(repo, tmp_path, capsys):
    repo.commit("lossy", {SKILL: LOSSY})
    assert gate(tmp_path, db="cache/gate.db") == 2  # not tracked, but the PR could have committed it
    assert "inside the repository's work tree and git does not ignore it" in capsys.readouterr().err
    (repo.root / ".git/info/exclude").write_text("cache/\n")  # ignored: written on this machine
    assert gate(tmp_path, db="cache/gate.db") == 1
    assert gate(tmp_path, db=".git/gate.db") == 1  # git's own folder: no checkout writes there


def test_a_change_a_chat_runner_cannot_see_is_not_judged(repo, tmp_path):
    """Way 3: only forms.md changes; a chat runner is shown SKILL.md alone."""
    repo.commit("layout", {"skills/notes/forms.md": "Anything goes.\n"})
    out, md = tmp_path / "gate.json", tmp_path / "gate.md"
    scripted.forget()
    assert gate(tmp_path, "--out", str(out), "--markdown", str(md)) == 2  # failed before: 0, PASS
    assert scripted.model("rules").history == []
    said = (
        'forms.md changed, a chat runner sees SKILL.md alone — set runner_mode = "tools" '
        "or an agent command for it"
    )
    assert result(out)["not_judged"] == said
    assert "not judged: forms.md changed, a chat runner sees SKILL.md alone" in md.read_text()
    assert "changed files: skills/notes/forms.md" in md.read_text()
    repo.git("checkout", "-q", "main")  # a runner that opens the skill's files sees the change: judged
    repo.commit("tools", {"abeq.toml": TOML.replace("[defaults]\n", '[defaults]\nrunner_mode = "tools"\n')})
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "main")
    assert gate(tmp_path, "--out", str(out)) == 0
    assert "not_judged" not in result(out) and result(out)["report"]["cases"]


def test_files_the_candidate_drops_or_renames_are_in_the_headline(repo, tmp_path):
    repo.git("mv", "skills/notes/forms.md", "skills/notes/layout.md")
    repo.commit("rename the layout", {SKILL: TEXT.replace("forms.md", "layout.md")})
    md = tmp_path / "gate.md"
    assert gate(tmp_path, "--markdown", str(md)) == 2
    line = next(x for x in md.read_text().splitlines() if "SKILL.md" in x)
    assert "renames skills/notes/forms.md → skills/notes/layout.md" in line  # failed before: not said


@pytest.mark.parametrize(
    "rewrite",
    # the second past git's similarity threshold: followed by the folder's files that moved with it
    [LOSSY, "# Notes\n\nThe layout is in forms.md.\n\n- Write the notes in plain words.\n"],
    ids=["shortened", "rewritten"],
)
def test_a_renamed_skill_is_gated_from_its_base_path(repo, tmp_path, rewrite):
    """Way 4: `git mv` the skill's folder and rewrite it."""
    repo.git("mv", "skills/notes", "skills/release-notes")
    repo.commit("move and shorten", {"skills/release-notes/SKILL.md": rewrite})
    out = tmp_path / "gate.json"
    assert gate(tmp_path, "--out", str(out)) == 1  # failed before: 0, "removed … not gated"
    doc = result(out)
    assert (doc["path"], doc["renamed_from"], doc["state"]) == (
        "skills/release-notes/SKILL.md",
        SKILL,
        "changed",
    )
    assert doc["changed_files"] == ["skills/release-notes/SKILL.md"]  # forms.md moved, unchanged


def test_a_deleted_document_fails_while_the_bases_abeq_toml_lists_it(repo, tmp_path, capsys):
    repo.git("rm", "-q", "-r", "skills/notes")
    repo.commit("drop the skill")
    md, junit = tmp_path / "gate.md", tmp_path / "gate.xml"
    assert gate(tmp_path, "--markdown", str(md), "--junit", str(junit)) == 1  # failed before: 0
    assert "removed by this pull request while the base's abeq.toml lists it" in md.read_text()
    assert '<failure message="FAIL skills/notes/SKILL.md · removed by this pull request' in junit.read_text()
    repo.git("checkout", "-q", "main")
    repo.commit("stop gating it", {"abeq.toml": TOML.replace("skills/*/SKILL.md", "skills/kept/SKILL.md")})
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "main")
    assert gate(tmp_path) == 0


def test_a_pr_that_loosens_abeq_toml_is_gated_as_the_base_configures_it(repo, tmp_path):
    """Held before issue 45 (abeq.toml is read at the base): the author points the skill's entry
    at nothing in the pull request itself."""
    repo.commit("lossy, and gate nothing", {SKILL: LOSSY, "abeq.toml": TOML.replace("skills/*/", "none/*/")})
    assert gate(tmp_path) == 1


def test_trust_code_in_the_gate_trusts_only_code_the_base_holds(repo, tmp_path, capsys):
    """Way 6 (in part): with --trust-code, a case the pull request adds brings its author's code."""
    added = case("edge-2", "edge")
    added["assertions"] = [{"type": "python", "value": "return {'pass': True, 'score': 1, 'reason': 'x'}"}]
    repo.write({SKILL: LOSSY})
    write_set(repo, [*BASE_CASES, added])
    repo.commit("lossy, a case with code")
    scripted.forget()
    assert gate(tmp_path, "--trust-code") == 2  # failed before: the code ran (exit 1)
    err = capsys.readouterr().err
    line = next(n for n, x in enumerate((repo.root / CASES).read_text().splitlines(), 1) if "return {" in x)
    assert f"{CASES}:{line}: case edge-2, check 1: this python assert is new or changed" in err
    assert "byte-identical at the merge base" in err and scripted.model("rules").history == []


def test_the_pull_request_is_told_what_its_author_changed(repo, tmp_path, github):  # noqa: F811
    """On GitHub: the comment says the set changed (by case id), the changed files, and on the next
    push the deleted document, in the same comment."""
    gh = github()
    repo.write({SKILL: LOSSY})
    write_set(repo, [*BASE_CASES[1:], case("edge-2", "edge")])
    repo.commit("lossy, the catching case gone")
    assert gate(tmp_path, "--github") == 1
    [body] = [c["body"] for c in gh.comments.values()]
    assert "**FAIL** skills/notes/SKILL.md" in body
    assert "this pull request changed the set: removed happy-1 (still run as the base has them)" in body
    assert "changed files: skills/notes/SKILL.md" in body
    repo.git("rm", "-q", "-r", "skills/notes")
    repo.commit("drop the skill instead")
    assert gate(tmp_path, "--github") == 1
    [body] = [c["body"] for c in gh.comments.values()]
    assert "removed by this pull request while the base's abeq.toml lists it" in body
    assert (gh.count("POST"), gh.count("PATCH")) == (1, 1)


def test_every_row_of_the_attack_table_names_tests_that_exist():
    """docs/guides/gate.md, "How a pull request could pass its own gate, and what stops it": each
    row names at least one test, and each named test is defined where the row says."""
    import re

    from conftest import ROOT

    guide = (ROOT / "docs" / "guides" / "gate.md").read_text()
    table = guide.split("## How a pull request could pass its own gate, and what stops it", 1)[1]
    lines = table.split("\n## ", 1)[0].splitlines()
    rows = [r for r in lines if r.startswith("| ") and not r.startswith(("| The author", "| ---"))]
    assert len(rows) >= 9
    for row in rows:
        named = re.findall(r"`(tests/[\w/]+\.py)::(\w+)", row)
        assert named, row
        for path, name in named:
            assert re.search(rf"^def {name}\(", (ROOT / path).read_text(), re.M), (path, name)
