"""A fresh temporary copy of a case's workspace for one run, the document placed where an agent
looks for it, and afterwards what the run changed (files added / changed / deleted, bounded diffs).

Placement follows the original, for both arms: the candidate is tested where the original lives
(a placement that differed per arm would itself be a difference the judge sees).
- instruction-file: at the root under the original's file name (AGENTS.md, CLAUDE.md, …; a
  Cursor rule under .cursor/rules/, Copilot's under .github/);
- skill: .claude/skills/<name>/SKILL.md, the name from the original's front matter, else its file stem.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...documents import Document
from ...models.http import redact
from ...schemas import Case, FileChange
from ...schemas.observed import ChangeStatus
from ...sets.workspace import initial_files

MAX_DIFF_CHARS = 4_000  # per file
MAX_DIFFS_CHARS = 20_000  # per run, all files together
MAX_CHANGES = 100  # files listed per run
MAX_TEXT_BYTES = 256_000  # larger files are compared by hash and size, not diffed
SKIP_DIRS = {".git"}  # a repository's internals: an agent's `git` commands are not file edits


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64] or "skill"


def front_matter_name(text: str) -> str:
    """The `name:` of a document's YAML front matter ("" when it has none)."""
    m = re.match(r"^---\n(.*?)\n---", text, re.S)
    if not m:
        return ""
    for line in m.group(1).splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "name":
            return value.strip().strip("'\"")
    return ""


def placement(original: Document, variant: str) -> str:
    """Where the document under test goes in the workspace (relative path)."""
    name = original.name.replace("\\", "/")
    base = Path(name).name
    if variant == "instruction-file":
        if "/" in name and ".." not in name.split("/") and not name.startswith("/"):
            return name  # a rule file where its tool looks for it (.kiro/steering/tech.md)
        if base.lower().endswith(".mdc"):
            return f".cursor/rules/{base}"
        if base.lower() == "copilot-instructions.md":
            return f".github/{base}"
        return base
    stem = Path(base).stem
    return f".claude/skills/{_slug(front_matter_name(original.text) or stem)}/SKILL.md"


@dataclass
class _Seen:
    size: int
    sha: str
    text: str | None  # None: binary or larger than MAX_TEXT_BYTES


MAX_HASHED_BYTES = 64 << 20  # a larger file is known by its size, time and first 64 MiB


def _snapshot(root: Path) -> dict[str, _Seen]:
    """Each regular file the run left (links, FIFOs and devices are not files it wrote), read without
    following a link and never whole past MAX_HASHED_BYTES: an agent may leave a 4 GB sparse file."""
    from ...files import read_fd, walk

    out = {}
    for rel, fd, st in walk(root, skip=frozenset(SKIP_DIRS)):
        if not isinstance(fd, int) or st is None:
            continue
        h = hashlib.sha256()
        try:
            data = read_fd(fd, MAX_TEXT_BYTES)
            if data is None:  # too large to diff: hashed in bounded chunks, the rest by size and time
                os.lseek(fd, 0, os.SEEK_SET)
                left = MAX_HASHED_BYTES
                while left and (chunk := os.read(fd, min(1 << 20, left))):
                    h.update(chunk)
                    left -= len(chunk)
                if not left:
                    h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
                size = st.st_size
            else:
                h.update(data)
                size = len(data)
        except OSError:  # the run made a file it cannot read back: listed, never diffed
            data, size = b"\x00unreadable", 0
            h.update(data)
        text = None
        if data is not None and b"\x00" not in data:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        out[rel] = _Seen(size, h.hexdigest(), text)
    return out


def _diff(path: str, a: _Seen | None, b: _Seen | None, budget: int) -> tuple[str, str]:
    """(bounded unified diff, note) for one file; labels carry no temp path or time (diffs compare)."""
    old, new = (a.text if a else ""), (b.text if b else "")
    if old is None or new is None:
        size = next(s.size for s in (b, a) if s is not None)
        return "", f"not text or over {MAX_TEXT_BYTES:,} bytes ({size:,} bytes): not diffed"
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}" if a else "/dev/null",
        tofile=f"b/{path}" if b else "/dev/null",
        n=2,
    )
    text = "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines)
    limit = min(MAX_DIFF_CHARS, budget)
    if len(text) > limit:
        return text[:limit], f"diff cut at {limit:,} of {len(text):,} characters"
    return text, ""


def diff_snapshots(before: dict[str, _Seen], after: dict[str, _Seen]) -> list[FileChange]:
    changes: list[FileChange] = []
    budget = MAX_DIFFS_CHARS
    for path in sorted(set(before) | set(after)):
        a, b = before.get(path), after.get(path)
        if a and b and a.sha == b.sha:
            continue
        status: ChangeStatus = "added" if a is None else "deleted" if b is None else "changed"
        if len(changes) == MAX_CHANGES:
            changes.append(FileChange(path="…", status="changed", note="more files changed: list cut here"))
            break
        diff, note = _diff(path, a, b, budget)
        diff = redact(diff)  # a run may write a key it was given into a file: it is never stored
        budget = max(0, budget - len(diff))
        changes.append(FileChange(path=path, status=status, diff=diff, note=note))
    return changes


class RunWorkspace:
    """`with RunWorkspace(case, document, placed_at) as ws:` a temporary copy, removed afterwards."""

    def __init__(self, case: Case, document: Document, placed_at: str):
        self.files = initial_files(case)
        self.document, self.placed_at = document, placed_at
        self.root: Path | None = None
        self._before: dict[str, _Seen] = {}

    def __enter__(self) -> RunWorkspace:
        self.root = Path(tempfile.mkdtemp(prefix="abeq-ws-"))
        beside = Path(self.placed_at).parent  # a skill's folder travels with its SKILL.md
        folder = {(beside / rel).as_posix(): text for rel, text in self.document.files}
        for rel, text in {**self.files, **folder, self.placed_at: self.document.text}.items():
            target = self.root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        self._before = _snapshot(self.root)
        return self

    def __exit__(self, *exc) -> None:
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)

    @property
    def dir(self) -> Path:
        """The copy's folder (inside the with block)."""
        assert self.root is not None, "a RunWorkspace is used in a with block"
        return self.root

    @property
    def document_path(self) -> Path:
        return self.dir / self.placed_at

    def changes(self) -> list[FileChange]:
        """What the run did to its copy, against the copy as it was handed over."""
        try:
            after = _snapshot(self.dir)
        except OSError:  # the run removed its folder, or put a link in its place: nothing of it is read
            after = {}
        return diff_snapshots(self._before, after)
