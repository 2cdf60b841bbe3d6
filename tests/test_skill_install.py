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
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no abeq on PATH: this Python runs it
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
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no abeq on PATH: this Python runs it
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


def _abeq_on_path(tmp_path, monkeypatch, python: str) -> None:
    """An `abeq` script first on PATH that starts `python` (as pip writes one)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "abeq").write_text(f"#!{python}\nimport abeq.cli\n")
    (bin_ / "abeq").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:/usr/bin:/bin")


def test_a_reinstall_keeps_the_entrys_env_and_takes_db_and_writes_a_portable_command(
    tmp_path, monkeypatch, capsys
):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    team = {"ABEQ_DB": "postgresql://abeq@db.team/abeq"}
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"abeq": {"command": "old", "args": [], "env": team, "cwd": "."}}})
    )
    _abeq_on_path(tmp_path, monkeypatch, sys.executable)
    argv = ["skill", "install", "--claude", "--mcp", "--force", "--db", "team.db"]
    assert main(argv) == 0
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["abeq"]
    assert entry["env"] == team and entry["cwd"] == "."  # kept (before: "env": {})
    assert entry["command"] == "abeq" and entry["args"] == ["mcp", "--db", "team.db"]
    assert "portable" in capsys.readouterr().err


def test_without_this_abeq_on_path_the_command_is_this_python_and_said_so(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    _abeq_on_path(tmp_path, monkeypatch, "/usr/bin/python3-of-someone-else")
    assert main(["skill", "install", "--claude", "--mcp"]) == 0
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["abeq"]
    assert entry["command"] == sys.executable and "teammate" in capsys.readouterr().err


def test_a_db_url_with_a_password_is_not_written_into_the_config(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    argv = ["skill", "install", "--claude", "--mcp", "--db", "postgresql://abeq:s3cret-pw@db/abeq"]
    assert main(argv) == 2
    assert "s3cret-pw" not in capsys.readouterr().err and not (tmp_path / ".mcp.json").exists()
