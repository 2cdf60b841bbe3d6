"""`abeq skill install`: the abeq-gate skill folder (SKILL.md and references/, shipped in
abeq/agents/skill/) written where an agent finds skills, and, with --mcp, `abeq mcp` registered in
the agent's configuration so the skill's tools are there."""

from __future__ import annotations

import json
import os
import sys
from importlib.resources import files
from pathlib import Path

from ..errors import InputError

NAME = "abeq-gate"


def skill_files() -> dict[str, str]:
    """The skill's files, relative path -> text."""
    root = files("abeq.agents") / "skill"
    out = {"SKILL.md": (root / "SKILL.md").read_text(encoding="utf-8")}
    for f in sorted((root / "references").iterdir(), key=lambda p: p.name):
        if f.name.endswith(".md"):
            out[f"references/{f.name}"] = f.read_text(encoding="utf-8")
    return out


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def project() -> Path:
    from ..documents.doc_imports import project_root

    return project_root(Path.cwd().resolve() / "_")


def server_command(server_args: list[str]) -> tuple[str, list[str], str]:
    """The command an agent starts the server with, and a word on it: `abeq` when the `abeq` on PATH
    is this installation (a teammate with abeq on their PATH runs the same line: a committed
    .mcp.json stays portable), else this Python, which runs this abeq on this machine only."""
    import shutil

    found = shutil.which("abeq")
    if found and _runs_this_python(found):
        return "abeq", server_args, "the command is `abeq` from PATH (portable to a teammate who has abeq)"
    return (
        sys.executable,
        ["-m", "abeq", *server_args],
        f"the command is this machine's Python ({sys.executable}): no `abeq` of this installation is on "
        "PATH, so a teammate's machine needs its own (pipx install abeq, then install again)",
    )


def _runs_this_python(script: str) -> bool:
    """Whether the `abeq` script at this path starts this interpreter (its #! line)."""
    try:
        with open(script, "rb") as f:
            first = f.readline(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    if not first.startswith("#!"):
        return False
    interpreter = first[2:].strip().split()[0] if first[2:].strip() else ""
    try:
        return os.path.samefile(interpreter, sys.executable)
    except OSError:
        return False


def install(
    agent: str | None, folder: str | None, mcp: bool, server_args: list[str], force: bool = False
) -> list[str]:
    """Write the skill (and register the server); the lines say what was written where."""
    if mcp and agent is None:
        raise InputError(
            "--mcp registers the server with an agent", hint="Give --claude or --codex with --mcp."
        )
    base = (
        Path(folder)
        if folder
        else project() / ".claude" / "skills"
        if agent == "claude"
        else codex_home() / "skills"
    )
    target = base / NAME
    if target.exists() and not force:
        raise InputError(
            f"{target} already exists", path=str(target), hint="Give --force to replace the skill there."
        )
    for rel, text in skill_files().items():
        p = target / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    said = [f"wrote the {NAME} skill to {target}"]
    if mcp:
        command, args, how = server_command(server_args)
        said.append(register_claude(command, args) if agent == "claude" else register_codex(command, args))
        said.append(how)
    return said


def register_claude(command: str, args: list[str]) -> str:
    """`abeq mcp` in this project's .mcp.json (what `claude mcp add --scope project` writes)."""
    path = project() / ".mcp.json"
    data = {}
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise InputError(f"not valid JSON ({e.msg}, line {e.lineno})", path=str(path),
                             hint="Fix the file, or move it away and install again.") from None  # fmt: skip
    servers = data.setdefault("mcpServers", {})
    old = servers.get("abeq") if isinstance(servers.get("abeq"), dict) else {}
    # merged: the entry's own env (a team's ABEQ_DB) and other keys stay; the command is ours
    servers["abeq"] = {**old, "type": "stdio", "command": command, "args": args, "env": old.get("env") or {}}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return f"registered `abeq mcp` in {path} (Claude Code asks you to approve a project's servers once)"


def register_codex(command: str, args: list[str]) -> str:
    """`abeq mcp` as [mcp_servers.abeq] in $CODEX_HOME/config.toml (the rest of the file is kept)."""
    path = codex_home() / "config.toml"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"[mcp_servers.abeq]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() == "[mcp_servers.abeq]"), None)
    if start is not None:  # replace the old table, up to the next table
        end = next((j for j in range(start + 1, len(lines)) if lines[j].lstrip().startswith("[")), len(lines))
        lines[start:end] = [block]
        text = "".join(lines)
    else:
        text = text + ("\n" if text and not text.endswith("\n") else "") + ("\n" if text else "") + block
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return f"registered `abeq mcp` as [mcp_servers.abeq] in {path}"
