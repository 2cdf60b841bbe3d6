"""Claude Code and Codex as runners, for real: the two CLIs installed from npm (pinned, once per
machine, in a cache outside the repository) and driven through the guide's own `--runner-cmd` lines
against a loopback model server speaking the Anthropic Messages and OpenAI Responses streaming APIs
(abeq.testing.agent_server: read the document, write NOTES.md, answer with a self-report).
Skipped, with the reason, only where npm cannot reach its registry."""

import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT

from abeq.cli import main
from abeq.testing.agent_server import AgentServer, heading
from abeq.testing.npm import install_once

pytestmark = pytest.mark.agents

PACKAGES = {"@anthropic-ai/claude-code": "2.1.197", "@openai/codex": "0.171.0"}
NPM_DIR = Path(os.environ.get("ABEQ_NPM_CACHE") or Path.home() / ".cache" / "abeq" / "npm")
GUIDE = ROOT / "docs" / "guides" / "runner-modes.md"
AGENTS_MD = ROOT / "abeq" / "examples" / "agents-md"


def _installed() -> bool:
    for name, version in PACKAGES.items():
        manifest = NPM_DIR / "node_modules" / name / "package.json"
        if not manifest.is_file() or json.loads(manifest.read_text()).get("version") != version:
            return False
    return all((NPM_DIR / "node_modules" / ".bin" / b).exists() for b in ("claude", "codex"))


@pytest.fixture(scope="session")
def agent_bin() -> Path:
    """The directory holding `claude` and `codex`, installed from npm once (a lock file keeps two
    test workers from installing at once)."""
    install_once(NPM_DIR, PACKAGES, _installed, pytest.skip)
    return NPM_DIR / "node_modules" / ".bin"


def guide_lines() -> list[list[str]]:
    """The guide's `abeq run` lines for Claude Code and Codex, as argument lists."""
    blocks = re.findall(r"^    abeq run .*?(?=\n\n|\n[^ ])", GUIDE.read_text(), re.M | re.S)
    out = [shlex.split(b.replace("\\\n", " ")) for b in blocks]
    return [a for a in out if re.match(r"(claude|codex) ", a[a.index("--runner-cmd") + 1])]


def guide_line(original: str) -> list[str]:
    return next(a for a in guide_lines() if a[a.index("--original") + 1] == original)


@pytest.fixture
def agents(agent_bin, tmp_path, monkeypatch):
    """The loopback server, with HOME and CODEX_HOME in tmp and the agents pointed at it."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    # Codex runs its commands in the first bubblewrap on PATH; Debian 12's (0.8.0, which abeq's own
    # sandbox uses) is too old for it, and every command then fails. Its own bundled one goes first,
    # as the runner-modes guide tells users to do
    shim = tmp_path / "codex-bwrap"
    shim.mkdir()
    bundled = next(
        (NPM_DIR / "node_modules" / "@openai").glob("codex-linux-*/vendor/*/codex-resources/bwrap"), None
    )
    if bundled is not None:
        (shim / "bwrap").symlink_to(bundled)
    with AgentServer() as srv:
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-5"\nmodel_provider = "loopback"\n[model_providers.loopback]\nname = "loopback"\n'
            f'base_url = "{srv.url}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        )
        for name, value in {
            "HOME": str(home),
            "CODEX_HOME": str(home / ".codex"),
            "PATH": os.pathsep.join([str(agent_bin), str(shim), os.environ["PATH"]]),
            "ANTHROPIC_BASE_URL": srv.url,
            "ANTHROPIC_API_KEY": "sk-ant-loopback",
            "OPENAI_API_KEY": "sk-loopback",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }.items():
            monkeypatch.setenv(name, value)
        yield srv


def small_set(src: Path, dst: Path, n: int = 2) -> Path:
    """The first n cases of an example's set (one CLI process per case and arm keeps this fast)."""
    data = json.loads(src.read_text())
    data["cases"] = data["cases"][:n]
    dst.write_text(json.dumps(data))
    return dst


def run(tmp_path, line: list[str], original, candidate, ts, *extra) -> tuple[int, dict]:
    args = list(line[1:])  # without "abeq"
    for flag, value in (("--original", original), ("--candidate", candidate), ("--transfer-set", ts)):
        args[args.index(flag) + 1] = str(value)
    if "--judge-model" in args:
        args[args.index("--judge-model") + 1] = "scripted/rules"
    else:
        args += ["--judge-model", "scripted/rules"]
    record = tmp_path / "record.json"
    args += [
        "--confirm",
        "--allow-thin",
        "--quiet",
        "--db",
        str(tmp_path / "abeq.db"),
        "--record",
        str(record),
    ]
    args += ["--out", str(tmp_path / "report.json")]
    return main([*args, *extra]), json.loads(record.read_text())


def arm(tmp_path, record, case_id: str, document: Path) -> dict:
    """The original's run of a case: its record entry (workspace changes, fields not reported) and,
    from the store, its transcript and self-report."""
    from abeq.documents import load_document

    db = sqlite3.connect(tmp_path / "abeq.db")
    row = db.execute(
        "select transcript, self_report from runner_results where case_id = ? and doc_hash = ?",
        [case_id, load_document(document).hash],
    ).fetchone()
    db.close()
    case = next(c for c in record["cases"] if c["case_id"] == case_id)
    observed = {"workspace_changes": [], **((case["observed"] or {}).get("original") or {})}
    return {**observed, "transcript": row[0], "self_report": json.loads(row[1])}


def loaded(requests: list[dict], original: Path, candidate: Path) -> bool:
    """Every request carries the first line of the original or of the candidate (the agent loaded
    the instruction file from its working directory by itself), and both arms were seen."""
    firsts = [p.read_text().splitlines()[0] for p in (original, candidate)]
    seen = [[f in json.dumps(b, ensure_ascii=False) for f in firsts] for b in requests]
    return all(any(s) for s in seen) and all(any(s[i] for s in seen) for i in (0, 1))


def test_claude_code_runs_a_skill_through_the_guides_line(agents, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-sonnet-4-5")  # the agent's own setting reaches it
    line = guide_line("SKILL.md")
    ts = small_set(EXAMPLE / "transfer-set.json", tmp_path / "cases.json")
    code, record = run(tmp_path, line, EXAMPLE / "SKILL.md", EXAMPLE / "candidate-lossy.md", ts)
    assert code in (0, 1) and not record["errors"]
    # each arm of each case is one agent run; the skill sits where Claude Code looks for skills
    assert len(agents.runs) == 4 and {r["api"] for r in agents.runs} == {"anthropic"}
    assert {r["document_path"] for r in agents.runs} == {".claude/skills/release-notes/SKILL.md"}
    cases = json.loads(ts.read_text())["cases"]
    assert sorted(r["case_input"] for r in agents.runs) == sorted([c["input"] for c in cases] * 2)
    assert {b["model"] for b in agents.requests} == {"claude-sonnet-4-5"}
    first = arm(tmp_path, record, cases[0]["id"], EXAMPLE / "SKILL.md")
    assert not first.get("not_reported") and first["self_report"]["output_produced"] == "wrote NOTES.md"
    note = first["workspace_changes"][0]
    said = f"heading: {heading((EXAMPLE / 'SKILL.md').read_text())}"
    assert note["path"] == "NOTES.md" and note["status"] == "added" and said in note["diff"]
    # the transcript is what the agent did, in order, with no volatile field and no temporary path
    t = first["transcript"]
    read, write = t.index("[tool call] Read"), t.index("[tool call] Write")
    assert read < t.index("[tool result]") < write < t.index("[final]")
    assert '"file_path": "./.claude/skills/release-notes/SKILL.md"' in t
    assert "session_id" not in t and "uuid" not in t and str(tmp_path) not in t
    assert record["run"]["cost"] > 0  # Claude Code's total_cost_usd
    # round 2 runs only the candidate; an identical re-run runs nothing
    run(tmp_path, line, EXAMPLE / "SKILL.md", EXAMPLE / "candidate-faithful.md", ts)
    assert len(agents.runs) == 6
    run(tmp_path, line, EXAMPLE / "SKILL.md", EXAMPLE / "candidate-faithful.md", ts)
    assert len(agents.runs) == 6
    projects = Path(os.environ["HOME"]) / ".claude" / "projects"
    assert not [p for p in projects.rglob("*") if p.is_file()]  # no session saved with the document


def test_a_failing_claude_run_says_why_and_what_it_spent(agents, tmp_path):
    line = [a.replace("--max-turns 20", "--max-turns 1") for a in guide_line("SKILL.md")]
    ts = small_set(EXAMPLE / "transfer-set.json", tmp_path / "cases.json", n=1)
    code, record = run(tmp_path, line, EXAMPLE / "SKILL.md", EXAMPLE / "candidate-lossy.md", ts)
    assert code == 3 and len(record["errors"]) == 1
    assert "exited with status 1: error_max_turns" in record["errors"][0]["error"]
    assert record["run"]["cost"] > 0  # both arms' failed runs were billed, and say so


def test_claude_code_reads_an_instruction_file_and_may_not_write(agents, tmp_path):
    original, candidate = tmp_path / "CLAUDE.md", tmp_path / "CLAUDE.short.md"
    shutil.copy(AGENTS_MD / "AGENTS.md", original)
    shutil.copy(AGENTS_MD / "AGENTS.compressed.md", candidate)
    ts = small_set(AGENTS_MD / "transfer-set.json", tmp_path / "tasks.json", n=1)
    code, record = run(tmp_path, guide_line("CLAUDE.md"), original, candidate, ts)
    assert code in (0, 1) and not record["errors"] and len(agents.runs) == 2
    assert {r["document_path"] for r in agents.runs} == {"CLAUDE.md"}
    # Claude Code loaded the file from its working directory by itself
    assert loaded([b for b in agents.requests if b.get("tools")], original, candidate)
    first = arm(tmp_path, record, json.loads(ts.read_text())["cases"][0]["id"], original)
    assert first["workspace_changes"] == [] and "[tool result, error]" in first["transcript"]


def test_codex_runs_an_instruction_file_and_its_actions_are_the_transcript(agents, tmp_path):
    ts = small_set(AGENTS_MD / "transfer-set.json", tmp_path / "tasks.json")
    cases = json.loads(ts.read_text())["cases"]
    agents.fail_when = cases[1]["input"].splitlines()[0]  # the model errors on the second case
    line = guide_line("AGENTS.md")
    code, record = run(tmp_path, line, AGENTS_MD / "AGENTS.md", AGENTS_MD / "AGENTS.compressed.md", ts)
    assert code == 3 and [e["case_id"] for e in record["errors"]] == [cases[1]["id"]]
    assert "loopback: fails" in record["errors"][0]["error"]
    assert {r["api"] for r in agents.runs} == {"openai"} and len(agents.runs) == 2
    assert {r["document_path"] for r in agents.runs} == {"AGENTS.md"}
    # Codex read AGENTS.md from its working directory by itself, and the prompt arrived
    assert loaded(agents.requests, AGENTS_MD / "AGENTS.md", AGENTS_MD / "AGENTS.compressed.md")
    first = arm(tmp_path, record, cases[0]["id"], AGENTS_MD / "AGENTS.md")
    t = first["transcript"]
    heading = (AGENTS_MD / "AGENTS.md").read_text().splitlines()[0]
    assert "[command] /bin/bash -lc 'cat AGENTS.md' (exit 0)" in t and heading in t
    assert t.index("[command]") < t.index("[final]") and "thread_id" not in t
    # the sandbox is read-only: the write was refused, and the agent said so
    assert (
        first["workspace_changes"] == []
        and "Read-only file system" in first["self_report"]["output_produced"]
    )
    assert not (Path(os.environ["CODEX_HOME"]) / "sessions").exists()  # --ephemeral


def test_every_agent_line_in_the_docs_is_a_tested_one_and_names_its_version():
    tested = {a[a.index("--runner-cmd") + 1] for a in guide_lines()}
    assert len(tested) == 3
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for cmd in re.findall(r"--runner-cmd '([^']*)'", page.read_text()):
            if re.search(r"\b(claude|codex)\b", cmd) and not cmd.startswith("docker"):
                assert cmd in tested, f"{page.name}: {cmd}"
    assert all("--runner-cmd-version" in a for a in guide_lines())


def test_claude_code_gates_a_rewrite_through_abeq_mcp(agent_bin, tmp_path, monkeypatch):
    """Claude Code with `abeq mcp` registered by `abeq skill install --claude --mcp`, its model the
    loopback double scripted to call check_set, run, run_status (until finished) and report: the
    double receives the tools' real results, and the run is in the store."""

    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project)
    (project / ".git").mkdir()  # the project root the skill and the server use
    assert main(["check-set", "--original", str(project / "SKILL.md"), "--transfer-set",
                 str(project / "transfer-set.json"), "--confirm"]) == 0  # the person confirms  # fmt: skip
    monkeypatch.chdir(project)
    assert main(["skill", "install", "--claude", "--mcp", "--allow-model", "scripted/*"]) == 0
    docs = {"original": "SKILL.md", "transfer_set": "transfer-set.json"}

    got: dict[str, str] = {}  # each abeq tool's result, as the double received it

    def result(text: str) -> dict:
        """A tool's structured result (Claude Code hands the model the JSON, then a reminder)."""
        try:
            return json.JSONDecoder().raw_decode(text.strip())[0]
        except json.JSONDecodeError:
            raise AssertionError(f"not a tool's JSON result: {text[:500]!r}") from None

    state: dict = {"pending": None, "waiting": False, "waits": 0}

    def script(results: list[str]):
        """check_set, run, run_status until finished, report; while Claude Code is still connecting
        to the server, it waits for it (its own WaitForMcpServers tool) and calls again."""
        last = results[-1] if results else None
        # on a loaded machine the server may not be in the tool list yet: "still connecting", or
        # (before it is listed as pending) "No such tool available"; wait for it and call again
        unavailable = last is not None and ("still connecting" in last or "No such tool available" in last)
        if unavailable and state["waits"] < 10:
            state["waits"] += 1
            state["waiting"] = True
            return {"name": "WaitForMcpServers", "input": {}}
        if state["waiting"]:
            state["waiting"] = False
            return state["pending"]
        name = state["pending"] and state["pending"]["name"].removeprefix("mcp__abeq__")
        if name:
            got[name] = last or ""
        if name is None:
            call = ("check_set", docs)
        elif name == "check_set":
            call = ("run", {**docs, "candidate": "candidate-lossy.md", "runner_model": "scripted/rules"})
        elif name in ("run", "run_status") and not (name == "run_status" and result(last)["finished"]):
            if result(got["run"]).get("run_id") is None:
                return "stopped: " + got["run"][:500]
            call = ("run_status", {"run_id": result(got["run"])["run_id"]})
        elif name == "run_status":
            call = ("report", {"run_id": result(got["run"])["run_id"]})
        else:
            return "The rewrite lost a rule; the report says which."
        state["pending"] = {"name": f"mcp__abeq__{call[0]}", "input": call[1]}
        return state["pending"]

    home = tmp_path / "home"
    home.mkdir()
    with AgentServer(script=script) as srv:
        env = {**os.environ, "HOME": str(home), "PATH": os.pathsep.join([str(agent_bin), os.environ["PATH"]]),
               "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "sk-ant-loopback",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "PYTHONPATH": str(ROOT),
               "MCP_TIMEOUT": "60000"}  # fmt: skip
        tools = ",".join(f"mcp__abeq__{t}" for t in ("check_set", "run", "run_status", "report"))
        p = subprocess.run(
            ["claude", "-p", "Gate candidate-lossy.md against SKILL.md with abeq.", "--output-format",
             "stream-json", "--verbose", "--no-session-persistence", "--model", "claude-sonnet-4-5",
             "--strict-mcp-config", "--mcp-config", str(project / ".mcp.json"), "--allowedTools", tools],
            cwd=project, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert p.returncode == 0 and "stopped:" not in p.stdout, (got, p.stdout[-3000:], p.stderr[-2000:])
    offered = {t["name"] for b in srv.requests for t in b.get("tools") or []}
    assert {"mcp__abeq__check_set", "mcp__abeq__run", "mcp__abeq__report"} <= offered
    check = result(got["check_set"])
    assert check["cases"] == 7 and check["coverage_pct"] == 100 and check["confirmed"]
    started, status = result(got["run"]), result(got["run_status"])
    assert started["status"] == "started" and status["finished"] and status["done"] == 7
    report = result(got["report"])
    summary = {"pass": False, "regressions": 7, "divergences": 0, "equivalents": 0}
    assert report["report"]["summary"] == summary
    assert all("Never include internal ticket ids" in x["behaviour_delta"] for x in report["lost"])
    assert report["run_id"] == started["run_id"] and report["trust"]["model_caveats"]
    db = sqlite3.connect(project / "abeq.db")
    assert db.execute("select status from runs").fetchall() == [("finished",)]
    db.close()
