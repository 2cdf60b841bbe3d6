"""`abeq skill install`: the abeq-gate skill folder where each agent finds skills, and with --mcp the
server registered in that agent's configuration (the rest of the configuration kept)."""

import json
import sys

from abeq.agents.skill import skill_files
from abeq.cli import main


def test_the_skill_names_the_loop_and_its_references_exist():
    files = skill_files()
    text = files["SKILL.md"]
    assert text.startswith("---\nname: abeq-gate\ndescription: ")
    for step in ("check_set", "confirm_command", "run_status", "behaviour_delta", "teacher_made", "passed"):
        assert step in text
    for ref in ("references/tools.md", "references/reading-results.md"):
        assert ref in files and f"`{ref}`" in text
    tools = files["references/tools.md"]
    for tool in ("check_set", "run", "run_status", "report", "mutate", "history", "export", "compare"):
        assert f"`{tool}`" in tools


def test_install_into_a_folder(tmp_path):
    assert main(["skill", "install", "--dir", str(tmp_path)]) == 0
    skill = tmp_path / "abeq-gate"
    assert (skill / "SKILL.md").read_text() == skill_files()["SKILL.md"]
    assert (skill / "references" / "tools.md").is_file()
    assert main(["skill", "install", "--dir", str(tmp_path)]) == 2  # already there
    assert main(["skill", "install", "--dir", str(tmp_path), "--force"]) == 0


def test_claude_with_mcp_writes_the_project_skill_and_mcp_json(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path / "docs")  # the project root is where .git is
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    argv = ["skill", "install", "--claude", "--mcp", "--allow-model", "anthropic/*"]
    assert main(argv) == 0
    assert (tmp_path / ".claude" / "skills" / "abeq-gate" / "SKILL.md").is_file()
    servers = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    assert servers["other"] == {"command": "x"}
    assert servers["abeq"]["command"] == sys.executable
    assert servers["abeq"]["args"] == ["-m", "abeq", "mcp", "--allow-model", "anthropic/*"]


def test_codex_with_mcp_adds_its_table_and_keeps_the_rest(tmp_path, monkeypatch):
    home = tmp_path / "codex"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    (home / "config.toml").write_text(
        'model = "gpt-5"\n\n[mcp_servers.abeq]\ncommand = "old"\n\n[x]\ny = 1\n'
    )
    assert main(["skill", "install", "--codex", "--mcp", "--allow-model", "openai/*"]) == 0
    assert (home / "skills" / "abeq-gate" / "references" / "reading-results.md").is_file()
    import tomllib

    config = tomllib.loads((home / "config.toml").read_text())
    assert config["model"] == "gpt-5" and config["x"] == {"y": 1}
    assert config["mcp_servers"]["abeq"] == {
        "command": sys.executable,
        "args": ["-m", "abeq", "mcp", "--allow-model", "openai/*"],
    }


def test_mcp_needs_an_agent(tmp_path, capsys):
    assert main(["skill", "install", "--dir", str(tmp_path), "--mcp"]) == 2
    assert "Give --claude or --codex with --mcp" in capsys.readouterr().err
