"""`abeq.toml`: what a repository gates, and with which settings.

    overrides = "abeq-overrides.json"   # optional: reviewers' decisions kept in the repository

    [defaults]                          # any `abeq run` setting, `_` for `-`
    runner_model = "openai/gpt-4o-mini"
    judge_samples = 3

    [[document]]
    path = "CLAUDE.md"
    transfer_set = "evals/claude-md.json"

    [[document]]
    path = "skills/*/SKILL.md"          # a glob: * stays in one folder, ** crosses folders
    transfer_set = "{dir}/cases.json"   # {dir}: the matched document's folder

Paths are from the repository's root. A document's settings are the defaults with its own on top;
which settings exist and what values they take is abeq.RunSettings' business (the one settings
model the CLI, the desk and the API share), so this file has no settings shape of its own. Every
problem names the key and its line.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:  # the settings model loads pydantic: only once a file is read
    from ..execution.settings import RunSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found]  # only where Python is 3.10

NAME = "abeq.toml"
TOP_KEYS = ("defaults", "document", "overrides")
DOC_KEYS = ("path", "transfer_set")
# besides the settings: a pre-commit check refuses a document with a section no case exercises
CHECK_KEYS = ("require_coverage",)
# settings a repository file must not hold: what a run reads and writes is the gate's, and code
# trust is a person's decision on their own machine (a pull request must not grant it)
NOT_SETTINGS = {
    "original": "the gate reads the original at the base revision",
    "candidate": "the gate reads the candidate at the head revision",
    "db": "give the database with `abeq gate --db`",
    "confirm": "confirmation is a person's act (`abeq check-set --confirm`), not a setting",
    "trust_code": "trusting a set's code is each person's decision (`abeq check-set --trust-code`)",
    "check_env": "the environment a set's code sees is each person's decision",
    "out": "outputs are `abeq gate`'s options",
    "record": "outputs are `abeq gate`'s options",
    "markdown": "outputs are `abeq gate`'s options",
    "csv": "outputs are `abeq gate`'s options",
    "junit": "outputs are `abeq gate`'s options",
    "quiet": "`abeq gate --quiet`",
    "review": "each document's runs are kept under the document's path",
}
HINT = "docs/guides/gate.md lists what abeq.toml holds."


def check_settings(table: dict[str, Any], line_of: Callable[[str], int]) -> RunSettings:
    """A document's settings (the defaults with its own on top) checked by RunSettings once; each
    problem names its key and the line it stands on."""
    from ..execution.settings import RunSettings

    def name(key: str) -> str:
        n = line_of(key)
        return f"line {n}: '{key}'" if n else repr(key)

    return RunSettings.load(table, "abeq.toml", name=name)


def _defaults() -> RunSettings:
    from ..execution.settings import RunSettings

    return RunSettings()


@dataclass
class Entry:
    """One [[document]] table: a path or glob, its set, and its settings (the defaults with its own
    on top, checked once; a setting the file leaves out has RunSettings' default, from the table)."""

    path: str
    transfer_set: str
    settings: RunSettings = field(default_factory=_defaults)
    line: int = 0
    require_coverage: bool = False

    def matches(self, path: str) -> bool:
        return bool(glob_regex(self.path).fullmatch(path))

    def set_for(self, doc_path: str) -> str:
        folder = str(PurePosixPath(doc_path).parent)
        return self.transfer_set.replace("{dir}", "" if folder == "." else folder).lstrip("/")


@dataclass
class Project:
    entries: list[Entry]
    overrides: str | None = None
    where: str = NAME


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob: `*` and `?` within one folder, `**/` any folders (none too), `[...]` a class."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif c == "*":
            out, i = out + "[^/]*", i + 1
        elif c == "?":
            out, i = out + "[^/]", i + 1
        elif c == "[" and (end := pattern.find("]", i + 1)) > i:
            out, i = out + "[" + re.escape(pattern[i + 1 : end]).replace("\\-", "-") + "]", end + 1
        else:
            out, i = out + re.escape(c), i + 1
    return re.compile(out)


def _lines(text: str) -> dict[tuple[str, int, str], int]:
    """(table, index of an array table, key) -> line number, read from the text (tomllib keeps no
    positions). The table "" is the top level; a key's line is where `key =` stands."""
    out: dict[tuple[str, int, str], int] = {}
    table, counts = "", {"document": -1}
    for n, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if m := re.match(r"^\[\[\s*([\w.-]+)\s*\]\]", s):
            table = m.group(1)
            counts[table] = counts.get(table, -1) + 1
            out[(table, counts[table], "")] = n
        elif m := re.match(r"^\[\s*([\w.-]+)\s*\]", s):
            table = m.group(1)
            out[(table, 0, "")] = n
        elif m := re.match(r"^([\w-]+|\"[^\"]+\")\s*=", s):
            out.setdefault((table, max(0, counts.get(table, 0)), m.group(1).strip('"')), n)
    return out


def parse(text: str, where: str) -> Project:
    """The project file's entries; an InputError naming the key and the line of the first problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"not valid TOML: {e}", path=where, hint=HINT) from None
    lines = _lines(text)

    def bad(message: str, table: str, index: int, key: str, hint: str = HINT) -> InputError:
        n = lines.get((table, index, key)) or lines.get((table, index, "")) or 0
        return InputError(f"line {n}: {message}" if n else message, path=where, hint=hint)

    for key in data:
        if key not in TOP_KEYS:
            raise bad(f"unknown key '{key}'", "", 0, key, f"abeq.toml holds {', '.join(TOP_KEYS)}. {HINT}")
    overrides = data.get("overrides")
    if overrides is not None and not (isinstance(overrides, str) and overrides.strip()):
        raise bad("'overrides' must be a path (text)", "", 0, "overrides")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise bad("'defaults' must be a table ([defaults])", "", 0, "defaults")
    docs = data.get("document", [])
    if not isinstance(docs, list) or not docs:
        raise InputError(
            "no [[document]] table: nothing to gate",
            path=where,
            hint='Add one per document, e.g. [[document]] path = "CLAUDE.md" transfer_set = "cases.json" '
            "(`abeq gate --init` writes a start).",
        )

    def refuse_not_settings(table: dict, name: str, index: int) -> None:
        for key in table:
            if key in NOT_SETTINGS:
                raise bad(f"'{key}' is not a setting here: {NOT_SETTINGS[key]}", name, index, key)

    refuse_not_settings(defaults, "defaults", 0)
    entries = []
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise bad("each [[document]] must be a table", "document", i, "")
        for key in DOC_KEYS:
            if not isinstance(doc.get(key), str) or not doc[key].strip():
                raise bad(
                    f"[[document]] {i + 1} needs '{key}' (a path from the repository root)",
                    "document",
                    i,
                    key,
                )
            if doc[key].startswith(("/", "../")) or "/../" in doc[key]:
                raise bad(f"'{key}' must stay inside the repository: {doc[key]}", "document", i, key)
        own = {k: v for k, v in doc.items() if k not in (*DOC_KEYS, *CHECK_KEYS)}
        refuse_not_settings(own, "document", i)

        def line_of(key: str, i: int = i, own: dict = own) -> int:  # where the value that counts stands
            return lines.get(("document", i, key), 0) if key in own else lines.get(("defaults", 0, key), 0)

        try:
            settings = check_settings({**defaults, **own}, line_of)
        except InputError as e:
            e.path, e.hint = where, e.hint or HINT
            e.args = (e.render(),)
            raise
        line = lines.get(("document", i, ""), 0)
        strict = doc.get("require_coverage", False)
        if not isinstance(strict, bool):
            raise bad("'require_coverage' is true or false", "document", i, "require_coverage")
        entries.append(Entry(doc["path"].strip(), doc["transfer_set"].strip(), settings, line, strict))
    return Project(entries, overrides.strip() if overrides else None, where)


# ------------------------------------------------------------------ abeq gate --init
def found_documents(paths: list[str]) -> list[str]:
    """The documents worth gating among a repository's files: agent instruction files (CLAUDE.md,
    AGENTS.md, … and the rule files of abeq.documents.rule_files) and skills."""
    from ..documents import detect_variant

    out = []
    for p in sorted(paths):
        if any(part in ("node_modules", "vendor", ".git") for part in p.split("/")[:-1]):
            continue
        if p.rsplit("/", 1)[-1].lower() == "skill.md" or detect_variant(p) == "instruction-file":
            out.append(p)
    return out


def template(documents: list[str]) -> str:
    """An abeq.toml for these documents, each with a transfer set beside it to write and confirm."""
    head = (
        "# abeq.toml: what `abeq gate` checks in a pull request (docs/guides/gate.md).\n"
        "# Each document's transfer set must exist and be confirmed (`abeq check-set --confirm`).\n\n"
        "[defaults]\n"
        "# any litellm model string; the workflow passes the provider's key (OPENAI_API_KEY here). The\n"
        "# embedded model (local/...) needs `pip install 'abeq[local]'`, which the Action does not install.\n"
        'runner_model = "openai/gpt-4o-mini"\n'
        'judge_model = "openai/gpt-4o"\n'
        "# judge_samples = 3\n"
        "# aa = true\n"
    )
    import json

    body = ""
    for d in documents:
        folder = str(PurePosixPath(d).parent)
        stem = PurePosixPath(d).stem.lower().replace(".", "-")
        hidden = folder == "." or folder.startswith(".")  # a rule folder is the tool's: sets go to evals/
        ts = f"evals/{stem}-cases.json" if hidden else f"{folder}/{stem}-cases.json"
        if d.lower().endswith("skill.md"):
            ts = f"{folder}/evals/cases.json"  # where skill-creator keeps a skill's evals
        # a JSON string is a TOML basic string: a quote or backslash in a path stays inside it
        body += f"\n[[document]]\npath = {json.dumps(d)}\ntransfer_set = {json.dumps(ts)}\n"
    return head + body
