"""abeq gate --github against a loopback double of GitHub's REST API."""

import json
import re

import pytest
from test_gate import RN, gate, repo  # noqa: F401 (the repository fixture)

from abeq.documents import load_document
from abeq.gate.comment import LIMIT, MARKER
from abeq.models import scripted
from abeq.sets import confirm
from abeq.sets.parse import load as load_set
from abeq.testing.github_api import GitHubDouble


@pytest.fixture
def github(tmp_path, monkeypatch):
    def start(fork=False, fail=None):
        gh = GitHubDouble(fail=fail).__enter__()
        event = {
            "number": 7,
            "pull_request": {
                "number": 7,
                "head": {"repo": {"full_name": "someone/fork" if fork else "o/r", "fork": fork}},
                "base": {"repo": {"full_name": "o/r"}},
            },
        }
        (tmp_path / "event.json").write_text(json.dumps(event))
        for k, v in {
            "GITHUB_API_URL": gh.url,
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
            "GITHUB_TOKEN": "ghs_test",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        }.items():
            monkeypatch.setenv(k, v)
        started.append(gh)
        return gh

    started: list[GitHubDouble] = []
    yield start
    for gh in started:
        gh.__exit__(None, None, None)


def test_a_lossy_head_fails_in_one_comment_updated_on_the_next_push(repo, tmp_path, github):  # noqa: F811
    gh = github()
    repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    assert gate(tmp_path, "--github") == 1
    [body] = [c["body"] for c in gh.comments.values()]
    assert body.startswith(MARKER) and "**FAIL** skills/release-notes/SKILL.md" in body
    assert "Lost behaviour:" in body and "<details>" in body
    assert (tmp_path / "summary.md").read_text().strip().startswith(MARKER)
    assert gh.tokens[-1] == "Bearer ghs_test"
    repo.commit("faithful", {"skills/release-notes/SKILL.md": (RN / "candidate-faithful.md").read_text()})
    assert gate(tmp_path, "--github") == 0
    assert (gh.count("POST"), gh.count("PATCH")) == (1, 1)
    [body] = [c["body"] for c in gh.comments.values()]
    assert "**PASS** skills/release-notes/SKILL.md" in body


def test_a_fork_pull_request_calls_nothing_and_says_it_was_not_checked(repo, tmp_path, github, capsys):  # noqa: F811
    gh = github(fork=True)
    repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    scripted.forget()
    assert gate(tmp_path, "--github") == 0
    assert gh.requests == [] and scripted.model("rules").history == []
    assert "NOT CHECKED" in capsys.readouterr().err
    assert "nothing was checked" in (tmp_path / "summary.md").read_text()
    assert gate(tmp_path, "--github", "--fail-on-fork") == 2  # a required check stays red
    assert gh.requests == [] and scripted.model("rules").history == []


@pytest.mark.parametrize("status", [403, 500])
def test_a_failing_comment_api_is_said_once_and_changes_no_exit_code(repo, tmp_path, github, capsys, status):  # noqa: F811
    github(fail={"POST": status, "PATCH": status})
    repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    out = tmp_path / "gate.json"
    assert gate(tmp_path, "--github", "--out", str(out)) == 1
    assert json.loads(out.read_text())["exit_code"] == 1
    err = capsys.readouterr().err
    assert err.count("comment was not written") == 1 and str(status) in err


def test_untrusted_text_is_escaped_and_the_comment_bounded(repo, tmp_path):  # noqa: F811
    from abeq.gate.changes import Revisions, Target
    from abeq.gate.comment import render
    from abeq.gate.project import Entry
    from abeq.gate.run import GateResult

    targets = [
        Target(f"<img src=x onerror=alert(1)>{i}.md", Entry("*", "x"), "new", "x") for i in range(3000)
    ]
    body = render(GateResult(Revisions("a" * 40, "b" * 40, "main", "HEAD"), targets, []), None)
    # an HTML tag cannot start (its < is escaped); the rest reads as written (issue 38's escaper)
    assert "\\<img src=x onerror=alert(1)>0.md" in body and "<img" not in body.replace("\\<img", "")
    assert len(body) <= LIMIT and "more part(s) of this report are not shown" in body


def test_a_refusal_is_said_on_the_pull_request(repo, tmp_path, github):  # noqa: F811
    gh = github()
    cases = json.loads((repo.root / "skills/release-notes/evals/cases.json").read_text())
    cases["cases"][0]["input"] += " And one more thing."
    repo.commit(
        "edit a case and the skill",
        {
            "skills/release-notes/evals/cases.json": json.dumps(cases),
            "skills/release-notes/SKILL.md": (RN / "candidate-faithful.md").read_text(),
        },
    )
    assert gate(tmp_path, "--github") == 2
    [body] = [c["body"] for c in gh.comments.values()]
    assert "could not run" in body and "confirm" in body


def test_a_comment_with_the_marker_planted_by_someone_else_is_never_edited(repo, tmp_path, github):  # noqa: F811
    """The pull request's author plants a comment holding the hidden marker: the gate's result must
    not land in a comment its author can edit back; the gate writes (and later updates) its own."""
    gh = github()
    planted = gh.plant(7, MARKER + "\n### abeq gate passed", "mallory")
    repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    assert gate(tmp_path, "--github") == 1
    assert gh.comments[planted]["body"] == MARKER + "\n### abeq gate passed"
    assert "edited_by" not in gh.comments[planted]
    [ours] = [c for c in gh.comments.values() if c["user"]["login"] == "github-actions[bot]"]
    assert "**FAIL** skills/release-notes/SKILL.md" in ours["body"]
    assert gate(tmp_path, "--github") == 1  # the next push updates the gate's own comment
    patched = [p for m, p, _ in gh.requests if m == "PATCH"]
    assert gh.count("POST") == 1 and patched == [f"/repos/o/r/issues/comments/{ours['id']}"]


def test_mentions_references_and_bidi_controls_reach_the_comment_inert(repo, tmp_path):  # noqa: F811
    """Case ids, the cases' text and the judge's words reach the comment: none of them notifies a
    person or a team, links an issue, or reorders what the reader sees."""
    repo.git("checkout", "-q", "main")
    ts = load_set(repo.root / "skills/release-notes/evals/cases.json")
    hostile = " cc @alice @octo-org/reviewers, fixes #1 and octo/other#2 \u202eevil"
    ts = ts.model_copy(update={"cases": [c.model_copy(update={"id": c.id + hostile}) for c in ts.cases]})
    doc = load_document(repo.root / "skills/release-notes/SKILL.md")
    repo.commit("ids", {"skills/release-notes/evals/cases.json": confirm(ts, doc.hash).model_dump_json()})
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "main")
    repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    md = tmp_path / "gate.md"
    assert gate(tmp_path, "--markdown", str(md)) == 1
    body = md.read_text()
    assert "alice" in body and "reviewers" in body  # the ids are shown, as text
    assert not re.search(r"@(?!\u2060)", body), re.findall(r".{20}@(?!\u2060).{20}", body)
    assert not re.search(r"#\d|(?i:gh-)\d", body), re.findall(r".{20}#\d.{5}", body)
    assert not re.search("[\u202a-\u202e\u2066-\u2069\u200e\u200f]", body)


def test_a_team_stores_password_never_reaches_the_comment(monkeypatch):
    """--db postgresql://…: the comment's next step names the store without its password (and no
    artifact: the Action uploads only a sqlite file)."""
    from types import SimpleNamespace

    from abeq.cli.gate import _pointers
    from abeq.gate.comment import _sh

    args = SimpleNamespace(db="postgresql://gate:s3cret@db.example/abeq", base="origin/main")
    for artifact in ("", "abeq-gate-store"):  # run by hand, and in the Action
        monkeypatch.setenv("ABEQ_ARTIFACT", artifact)
        where = _pointers(args, SimpleNamespace(overrides=None))
        assert "s3cret" not in repr(where) and where.artifact == ""
        assert _sh(where.db, "DB") == "'postgresql://gate:***@db.example/abeq'"
