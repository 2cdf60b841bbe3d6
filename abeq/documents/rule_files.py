"""Always-on rule files of coding agents: instruction files, not skills, wherever they sit.

Recognised by where they live (the folder names are the tools' own): `.github/instructions/*.instructions.md`
(Copilot), `.cursor/rules/` (`*.mdc` and `RULE.md` folders), `.claude/rules/*.md`, `.windsurf/rules/`
and `.windsurfrules`, `.kiro/steering/*.md`, `.clinerules`, `.roo/rules/`, `.cursorrules`. A file
keeps its place under the rule folder as its name (`.kiro/steering/tech.md`), so the runner's
workspace puts it where the agent looks for it.

Their front matter says when the tool loads them, and `scope_note` reads it as the tool does:
Copilot's `applyTo` globs (`**` is always), Cursor's `alwaysApply` / `globs` / `description`,
Claude Code's `paths`, Windsurf's `trigger` (`always_on`, `glob`, `model_decision`, `manual`) with
`globs`, Kiro's `inclusion` (`always`, `fileMatch` with `fileMatchPattern`, `manual`). abeq's runner
gets the file on every case, so a rule scoped to some files or loaded on request is said, with what
the cases should then be about.
"""

from __future__ import annotations

import re
from pathlib import Path

RULE_DIRS = (
    ".github/instructions",
    ".cursor/rules",
    ".claude/rules",
    ".windsurf/rules",
    ".kiro/steering",
    ".clinerules",
    ".roo/rules",
    ".amazonq/rules",
)
RULE_FILES = (".windsurfrules", ".cursorrules", ".clinerules", "rule.md")


def rule_name(path: str | Path) -> str | None:
    """The file's name as its tool knows it (its path from the rule folder on), or None when it is
    not a rule file by its place or name."""
    full = Path(path).resolve().as_posix() if Path(path).exists() else str(path).replace("\\", "/")
    low = full.lower()
    for d in RULE_DIRS:
        i = low.rfind(f"/{d}/")
        if i >= 0 or low.startswith(f"{d}/"):
            return full[i + 1 :] if i >= 0 else full
    base = full.rsplit("/", 1)[-1]
    if base.lower() in RULE_FILES or base.lower().endswith(".instructions.md"):
        return base
    return None


def is_rule_file(name: str) -> bool:
    """A name (as load_document gives it) that is a rule file of some agent."""
    n = name.replace("\\", "/").lower()
    base = n.rsplit("/", 1)[-1]
    return (
        any(f"/{d}/" in f"/{n}" for d in RULE_DIRS)
        or base in RULE_FILES
        or base.endswith((".instructions.md", ".mdc"))
    )


def _front(text: str) -> dict[str, str]:
    """Front matter keys as text (a list written inline or as `- item` lines joined with commas)."""
    m = re.match(r"^---\n(.*?)\n---", text, re.S)
    out: dict[str, str] = {}
    if not m:
        return out
    key = ""
    for line in m.group(1).split("\n"):
        item = re.match(r"^\s*-\s+(.*)$", line)
        if item and key:
            out[key] = ", ".join(x for x in (out[key], item.group(1).strip().strip("'\"")) if x)
            continue
        k, sep, v = line.partition(":")
        if sep and not line.startswith((" ", "\t")):
            key = k.strip()
            out[key] = v.strip().strip("[]").replace("'", "").replace('"', "").strip()
    return out


def scope_note(name: str, text: str) -> str | None:
    """When the tool loads this rule, if not always; None for a rule that is always on."""
    fm = _front(text)
    n = name.replace("\\", "/").lower()
    every = "abeq's runner gets it on every case, so the cases should be about such work"
    if n.endswith(".instructions.md"):
        globs = fm.get("applyTo", "")
        if not globs:
            return (
                f"{name} has no applyTo: Copilot attaches it only when asked for it (or when its description "
                f"matches the task); {every}"
            )
        if globs.strip() in ("**", "**/*", "*"):
            return None
        return f"{name} applies when the agent works on files matching {globs} (applyTo); {every}"
    if "/.claude/rules/" in f"/{n}" and fm.get("paths"):
        return f"{name} applies when Claude Code works on files matching {fm['paths']} (paths); {every}"
    if "/.kiro/steering/" in f"/{n}":
        inc = fm.get("inclusion", "always")
        if inc == "fileMatch":
            pattern = fm.get("fileMatchPattern", "?")
            why = f"applies when files matching {pattern} are in context (inclusion: fileMatch)"
            return f"{name} {why}; {every}"
        if inc == "manual":
            return f"{name} is loaded only when referenced (inclusion: manual); {every}"
        return None
    if "/.windsurf/rules/" in f"/{n}" or n.endswith(".windsurfrules"):
        trig = fm.get("trigger", "always_on")
        if trig == "glob":
            return f"{name} applies to files matching {fm.get('globs', '?')} (trigger: glob); {every}"
        if trig in ("model_decision", "manual"):
            when = "the model decides it fits" if trig == "model_decision" else "it is mentioned"
            return f"{name} is loaded when {when} (trigger: {trig}); {every}"
        return None
    if "/.cursor/rules/" in f"/{n}" or n.endswith(".mdc"):
        if fm.get("alwaysApply", "").lower() == "true":
            return None
        if fm.get("globs"):
            return f"{name} applies to files matching {fm['globs']} (globs, alwaysApply false); {every}"
        if fm.get("description"):
            return (
                f"{name} is not always applied (alwaysApply false): Cursor attaches it when its "
                f"description fits or when it is mentioned; {every}"
            )
        # Cursor's rule type comes from alwaysApply, globs and description; with none of them
        # (no front matter at all included) the rule is Manual
        why = "has no front matter" if not fm else "sets none of alwaysApply, globs, description"
        return f"{name} {why}: a manual rule, Cursor loads it only when it is mentioned (@rule); {every}"
    return None
