"""`@path` imports in agent instruction files (CLAUDE.md style): the files a document pulls in, read
the way the agent would read them, so the runner sees what the agent sees.

Rules (Claude Code's, made explicit where abeq must be stricter than silent):
- an import is `@path` at the start of a line or after whitespace, outside code spans and fenced
  code; a path is relative to the file that names it; a token that names no file (`@someone`,
  `@types/node`) is not an import unless it looks like a file path, and then it is reported;
- each file is read once; a file naming itself is noted and skipped;
- imports nest at most MAX_DEPTH deep (deeper ones are reported and not read);
- a cycle (A imports B, B imports A) is refused: it names the chain;
- paths in the home directory (`@~/…`), absolute paths, and paths that leave the project (the
  nearest folder above the document with a `.git`, else the document's folder) are not read: a
  review must not depend on one person's machine. They are reported, and the runner sees only the
  reference, as written.

The expanded text is the document with each imported file put where it is imported, as the agent
reads it: after the paragraph (or table, or list) holding the `@path`, between two marker comments
that name it by its path relative to the document. The imported file's ATX headings are moved down
by the level of the heading the import stands under (`## Overview` then `@docs/overview.md`: the
file's `# Overview` becomes `### Overview`), so its text belongs to that heading and its own
sections nest inside it. A file is put in once, where it is first imported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError

MAX_DEPTH = 5  # Claude Code follows imports five hops deep
# @path, or a quoted path that may hold spaces (@'~/My Drive/x.md', @"docs/a b.md")
_TOKEN = re.compile(r"(?:^|(?<=\s))@(?:'([^'\n]+)'|\"([^\"\n]+)\"|((?:[^\s\\`]|\\ )+))")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_PATHLIKE = re.compile(r"(^\.{0,2}/|^~|\.[A-Za-z0-9]{1,8}$)")
_TRAILING = ".,;:!?)]}'\""
_MARK = re.compile(r"^<!-- abeq: (?P<path>.+?), imported by @(?P<ref>\S+) in (?P<by>.+?) -->$", re.M)


@dataclass
class Expanded:
    """A document with its imports: the text the runner gets, the files read, and what to know."""

    text: str
    read: list[str] = field(default_factory=list)  # the document first, then each import (relative paths)
    notes: list[str] = field(default_factory=list)  # imports not read, and why


def references(text: str) -> list[str]:
    """The `@path` tokens of a text, in order, outside fenced code and code spans."""
    out: list[str] = []
    for _, tokens in _lines(text):
        out += [t for t in tokens if t not in out]
    return out


def _lines(text: str):
    """(line number, its @path tokens) for each line outside fenced code."""
    fence: str | None = None
    for n, line in enumerate(text.split("\n")):
        if fence is not None:
            if re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
                fence = None
            continue
        if f := _FENCE.match(line):
            fence = f.group(1)
            continue
        tokens = []
        for m in _TOKEN.finditer(_CODE_SPAN.sub(" ", line)):
            quoted = m.group(1) or m.group(2)
            token = quoted if quoted else m.group(3).replace("\\ ", " ").rstrip(_TRAILING)
            if token and token not in tokens:
                tokens.append(token)
        yield n, tokens


_ATX = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def _fenced(lines: list[str]) -> Iterator[tuple[str, bool]]:
    """Each line, and whether it belongs to fenced code (its opening and closing fences included)."""
    fence = None
    for line in lines:
        if fence is not None:
            if re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
                fence = None
            yield line, True
        elif f := _FENCE.match(line):
            fence = f.group(1)
            yield line, True
        else:
            yield line, False


def _heading_levels(lines: list[str]) -> list[int]:
    """For each line, the level of the heading it sits under (0 before any), fenced code skipped."""
    levels, level = [], 0
    for i, (line, fenced) in enumerate(_fenced(lines)):
        if not fenced and (m := _ATX.match(line)):
            level = len(m.group(2))
        elif (
            not fenced
            and (s := _SETEXT.match(line))
            and i
            and lines[i - 1].strip()
            and not _ATX.match(lines[i - 1])
            and not re.match(r"^\s*([-*+]|\d+[.)])\s", lines[i - 1])
        ):
            level = 1 if s.group(1)[0] == "=" else 2
        levels.append(level)
    return levels


def _nest(text: str, by: int) -> str:
    """ATX headings moved down `by` levels (at most to 6), fenced code left alone."""
    if not by:
        return text
    out = []
    for line, fenced in _fenced(text.split("\n")):
        if not fenced and (m := _ATX.match(line)):
            line = m.group(1) + "#" * min(6, len(m.group(2)) + by) + line[m.end() :]
        out.append(line)
    return "\n".join(out)


def project_root(path: Path) -> Path:
    """The nearest folder above `path` holding a `.git`, else the folder of `path`."""
    for d in [path.parent, *path.parent.parents]:
        if (d / ".git").exists():
            return d
    return path.parent


def expand(path: str | Path, text: str, read_file: Callable[[Path], str]) -> Expanded:
    """The document at `path` (its text already read) with every import it reaches appended.
    `read_file` reads an imported file with the checks a document gets (size, binary, UTF-8)."""
    top = Path(path).resolve()
    root = project_root(top)
    out = Expanded(text, [top.name])
    seen = {top}

    def show(p: Path) -> str:
        try:
            return p.relative_to(top.parent).as_posix()
        except ValueError:
            return p.relative_to(root).as_posix() if p.is_relative_to(root) else p.name

    def visit(file: Path, body: str, chain: list[Path]) -> str:
        """`body` with each file it imports put after the block that imports it."""
        lines = body.split("\n")
        levels = _heading_levels(lines)
        after: dict[int, list[str]] = {}  # line number → the imported texts that follow it
        for n, tokens in _lines(body):
            for token in tokens:
                block = visit_one(file, token, chain, levels[n])
                if block:
                    end = n
                    while end + 1 < len(lines) and lines[end + 1].strip():
                        end += 1  # after the paragraph, table or list the import stands in
                    after.setdefault(end, []).append(block)
        if not after:
            return body
        parts = []
        for n, line in enumerate(lines):
            parts.append(line)
            parts += after.get(n, [])
        return "\n".join(parts)

    def visit_one(file: Path, token: str, chain: list[Path], level: int) -> str:
        target, why = _target(token, file, root)
        where = f"{show(file)} imports @{token}"
        if target is None:
            if why:
                out.notes.append(f"{where}: {why}; not read (the runner sees the reference only)")
            return ""
        if target == file:
            out.notes.append(f"{where}, which is the file itself; nothing more to read")
            return ""
        if target in chain:
            loop = " → ".join(show(p) for p in [*chain[chain.index(target) :], target])
            raise InputError(
                f"imports form a cycle: {loop}",
                path=str(path),
                hint=f"Remove the @{token} in {show(file)} (or the import that leads back to it): "
                "each file should be imported once, from one place.",
            )
        if target in seen:
            return ""
        if len(chain) > MAX_DEPTH:
            out.notes.append(
                f"{where}: imports nest more than {MAX_DEPTH} deep; not read (Claude Code stops there)"
            )
            return ""
        seen.add(target)
        try:
            content = read_file(target)
        except InputError as e:
            raise InputError(f"{where} ({show(target)}): {e.message}", path=str(path), hint=e.hint) from None
        out.read.append(show(target))
        inner = visit(target, _nest(content.rstrip(), level), [*chain, target])
        return (
            f"\n<!-- abeq: {show(target)}, imported by @{token} in {show(file)} -->\n"
            f"{inner}\n<!-- abeq: end of {show(target)} -->"
        )

    out.text = visit(top, text, [top])
    return out


def _target(token: str, file: Path, root: Path) -> tuple[Path | None, str]:
    """The file an import token names, or (None, why it is not read; "" when it is no import)."""
    pathlike = bool(_PATHLIKE.search(token))
    if token.startswith("~"):
        return None, "a file in your home directory (each person's differs)"
    if Path(token).is_absolute():
        return None, "an absolute path (it would tie the review to this machine)"
    target = (file.parent / token).resolve()
    if not target.is_relative_to(root):
        return None, f"it is outside the project ({root.name}/)"
    if target.is_dir():
        return None, "a folder, not a file"
    if not target.is_file():
        return None, ("no such file next to it" if pathlike else "")
    return target, ""


def imported_files(text: str) -> list[dict]:
    """The files an expanded text holds besides the document: [{path, ref, by}] in order."""
    return [m.groupdict() for m in _MARK.finditer(text)]


def unfollowed_imports(text: str) -> list[str]:
    """The file-like @imports of a text that was not expanded (pasted or uploaded text has no
    folder to resolve them in)."""
    if imported_files(text):
        return []
    return [t for t in references(text) if _PATHLIKE.search(t)]
