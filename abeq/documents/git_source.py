"""Documents and transfer sets read at a git revision: `git:REV:PATH`, as `git show REV:PATH` reads it.

`PATH` is from the repository's root (the repository the current folder is in). What travels with
the file is read at the same revision: an instruction file's `@imports`, a skill's folder, a
transfer set's folder and the `file://` files it names. They are written into a temporary folder
that mirrors the repository (with an empty `.git`, so the project's bounds are the repository's),
and the ordinary loaders read them there; every message naming that folder is given back the
`git:REV:` name.

Git is run with an argument list, never a shell; a revision is resolved with `git rev-parse --verify
--end-of-options`, and one starting with `-` is refused before git sees it. Every blob is read with
its size known first (`git ls-tree -l`): one over its limit is refused, never read.
"""

from __future__ import annotations

import posixpath
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError

PREFIX = "git:"
MAX_FILE_BYTES = 5_000_000  # a transfer set's limit; a document's own (200 KB) is checked by its loader
MAX_FOLDER_FILES = 2_000  # a set's or skill's folder beyond this is not read whole
MAX_FOLDER_BYTES = 20_000_000
_HINT = "Write it as git:REV:PATH, e.g. git:main:CLAUDE.md (PATH from the repository's root)."
_FILE_REF = re.compile(r"file://([^\s'\"`,\]\}]+)")


def is_git(spec: object) -> bool:
    return isinstance(spec, str) and spec.startswith(PREFIX)


@dataclass(frozen=True)
class Blob:
    mode: str
    oid: str
    size: int


@dataclass
class Repo:
    """One repository, asked through git's plumbing (argument lists, no shell)."""

    root: Path
    _trees: dict[str, dict[str, Blob]] = field(default_factory=dict)

    @classmethod
    def at(cls, cwd: str | Path | None = None) -> Repo:
        out = _git(["rev-parse", "--show-toplevel"], cwd=cwd, what="the current folder")
        return cls(Path(out.strip()))

    def git(self, args: list[str], what: str) -> str:
        return _git(args, cwd=self.root, what=what)

    def commit(self, rev: str) -> str:
        """The commit id a revision names; an InputError naming it when there is none."""
        if not rev or rev.startswith("-"):
            raise InputError(f"the revision '{rev}' is refused (it is empty or starts with '-')", hint=_HINT)
        try:
            return self.git(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], what=rev
            ).strip()
        except InputError:
            raise InputError(
                f"unknown revision '{rev}' in {self.root}",
                hint="Name a branch, tag or commit of this repository (a CI checkout needs fetch-depth: 0).",
            ) from None

    def tree(self, commit: str) -> dict[str, Blob]:
        """Every file of a commit by its path from the root, with its mode, blob id and size."""
        if commit not in self._trees:
            raw = self.git(["ls-tree", "-r", "-l", "-z", "--full-tree", commit], what=commit)
            files: dict[str, Blob] = {}
            for entry in raw.split("\0"):
                if not entry:
                    continue
                meta, _, path = entry.partition("\t")
                mode, kind, oid, size = meta.split()
                if kind == "blob":
                    files[path] = Blob(mode, oid, int(size) if size.isdigit() else 0)
            self._trees[commit] = files
        return self._trees[commit]

    def _checked(self, commit: str, path: str, max_bytes: int) -> Blob:
        """The blob of a path, or an InputError: missing, a link, or over `max_bytes` (never read)."""
        blob = self.tree(commit).get(path)
        name = f"git:{commit[:12]}:{path}"
        if blob is None:
            raise InputError(f"{path} does not exist at {commit[:12]}", path=name, hint=_HINT)
        if blob.mode == "120000":
            raise InputError("it is a symbolic link at this revision; abeq reads files only", path=name)
        if blob.size > max_bytes:
            raise InputError(
                f"it is {blob.size:,} bytes at this revision; the limit is {max_bytes:,} bytes", path=name
            )
        return blob

    def read(self, commit: str, path: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
        """A file's bytes at a commit; refused (never read) when it is over `max_bytes`."""
        return self.read_many(commit, {path: max_bytes})[path]

    def read_many(self, commit: str, limits: dict[str, int]) -> dict[str, bytes]:
        """Several files at a commit in one `git cat-file --batch` (path -> its limit); every size is
        checked before anything is read."""
        blobs = {p: self._checked(commit, p, n) for p, n in limits.items()}
        if not blobs:
            return {}
        ids = "".join(f"{b.oid}\n" for b in blobs.values()).encode()
        proc = subprocess.run(["git", "cat-file", "--batch"], cwd=self.root, input=ids, capture_output=True)
        if proc.returncode:
            raise InputError(f"git could not read {len(blobs)} file(s) at {commit[:12]}", path=str(self.root))
        out, data, at = {}, proc.stdout, 0
        for path, blob in blobs.items():
            header_end = data.index(b"\n", at)
            oid, kind, size = data[at:header_end].decode().split()
            if oid != blob.oid or kind != "blob":
                raise InputError(
                    f"git gave back something else for {path} at {commit[:12]}", path=str(self.root)
                )
            start = header_end + 1
            out[path] = data[start : start + int(size)]
            at = start + int(size) + 1  # the content, then a newline
        return out


def _git(args: list[str], *, cwd: str | Path | None, what: str) -> str:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, check=False, text=True, encoding="utf-8"
        )
    except FileNotFoundError:
        raise InputError(
            "git is not installed here", hint="Install git to read git:REV:PATH inputs."
        ) from None
    if proc.returncode:
        said = (proc.stderr or "").strip().splitlines()
        raise InputError(
            f"git could not read {what}" + (f": {said[-1]}" if said else ""),
            path=str(cwd) if cwd else None,
            hint="Run abeq inside the repository: git:REV:PATH reads the one the current folder is in.",
        )
    return proc.stdout


@dataclass(frozen=True)
class GitPath:
    """A `git:REV:PATH` resolved: the revision as written, its commit, and the path from the root."""

    rev: str
    commit: str
    path: str

    @property
    def name(self) -> str:
        """How the record names it: the commit and the path."""
        return f"git:{self.commit}:{self.path}"


def parse(spec: str, repo: Repo | None = None) -> tuple[Repo, GitPath]:
    """The repository and the resolved GitPath of a `git:REV:PATH`; an InputError naming what is wrong."""
    body = spec[len(PREFIX) :]
    rev, sep, path = body.partition(":")
    path = posixpath.normpath(path.strip("/")) if path else ""
    if not sep or not rev or not path or path in (".", "..") or path.startswith("../"):
        raise InputError(f"'{spec}' is not git:REV:PATH", hint=_HINT)
    repo = repo or Repo.at()
    commit = repo.commit(rev)
    tree = repo.tree(commit)
    if path not in tree and not any(p.startswith(path + "/") for p in tree):
        raise InputError(f"{path} does not exist at {rev} ({commit[:12]})", path=spec, hint=_HINT)
    return repo, GitPath(rev, commit, path)


def _under(tree: dict[str, Blob], folder: str) -> list[str]:
    prefix = "" if folder in ("", ".") else folder + "/"
    return [p for p in tree if p.startswith(prefix)]


def footprint(repo: Repo, commit: str, path: str, kind: str) -> dict[str, str]:
    """The files (path → blob id) that travel with `path` at `commit`: what a change to any of them
    changes in the document or set (`kind`: "document" or "set")."""
    tree = repo.tree(commit)
    if path in tree:
        target = path
    else:  # a skill named by its folder
        target = next((p for p in sorted(_under(tree, path)) if p.lower().endswith("/skill.md")), path)
    out: dict[str, str] = {}
    if target not in tree:
        return out
    out[target] = tree[target].oid
    folder = posixpath.dirname(target)
    base = target.rsplit("/", 1)[-1].lower()
    if kind == "document" and base == "skill.md":
        out.update(_skill_folder(repo, commit, target))
    elif kind == "document":
        _follow_imports(repo, commit, target, out, depth=0)
    else:
        # a set at the root: its references only; a link in its folder is not followed (nor read)
        inside = [p for p in _under(tree, folder) if tree[p].mode != "120000"] if folder else []
        if len(inside) <= MAX_FOLDER_FILES and sum(tree[p].size for p in inside) <= MAX_FOLDER_BYTES:
            out.update({p: tree[p].oid for p in inside})
        _follow_file_refs(repo, commit, target, out, depth=0)
    return out


def _skill_folder(repo: Repo, commit: str, skill_md: str) -> dict[str, str]:
    """The files skill_folder.skill_files takes with a SKILL.md, as they are at this commit: its
    subfolders' files (not the root's evals/, nor caches), and the files beside it that it names."""
    from .skill_folder import EXCLUDED_DIRS, ROOT_EXCLUDED_DIRS

    tree = repo.tree(commit)
    folder = posixpath.dirname(skill_md)
    text = _text(repo, commit, skill_md)
    out: dict[str, str] = {}
    for p in _under(tree, folder):
        rel = p[len(folder) + 1 :] if folder else p
        parts = rel.split("/")
        if (
            p == skill_md
            or any(x.startswith(".") or x in EXCLUDED_DIRS for x in parts)
            or rel.endswith(".pyc")
        ):
            continue
        if len(parts) == 1 and parts[0] not in text:  # beside SKILL.md: only when it names the file
            continue
        if len(parts) > 1 and parts[0] in ROOT_EXCLUDED_DIRS:
            continue
        out[p] = tree[p].oid
        if len(out) > MAX_FOLDER_FILES:
            break
    return out


def _text(repo: Repo, commit: str, path: str) -> str:
    try:
        return repo.read(commit, path).decode("utf-8", errors="replace")
    except InputError:
        return ""


def _follow_imports(repo: Repo, commit: str, path: str, out: dict[str, str], depth: int) -> None:
    """An instruction file's @imports at this commit, to the depth abeq.documents.doc_imports reads."""
    from .doc_imports import MAX_DEPTH, references

    if depth > MAX_DEPTH:
        return
    tree = repo.tree(commit)
    for token in references(_text(repo, commit, path)):
        if token.startswith("~") or token.startswith("/"):
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), token))
        if target.startswith("../") or target not in tree or target in out:
            continue
        out[target] = tree[target].oid
        _follow_imports(repo, commit, target, out, depth + 1)


def _follow_file_refs(repo: Repo, commit: str, path: str, out: dict[str, str], depth: int) -> None:
    """The `file://` files (and globs) a promptfoo file names, and the files they name in turn."""
    import fnmatch

    if depth > 4 or not path.lower().endswith((".yaml", ".yml", ".json", ".jsonl", ".csv")):
        return
    tree = repo.tree(commit)
    for ref in _FILE_REF.findall(_text(repo, commit, path)):
        rel = ref.split(":", 1)[0] if re.search(r"\.(py|js|mjs|cjs|ts):", ref) else ref
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), rel))
        if target.startswith("../"):
            continue
        hits = (
            [p for p in tree if fnmatch.fnmatchcase(p, target)]
            if any(c in target for c in "*?[")
            else [target]
        )
        for hit in hits:
            if hit in tree and hit not in out:
                out[hit] = tree[hit].oid
                _follow_file_refs(repo, commit, hit, out, depth + 1)


@dataclass
class Checkout:
    """A revision's files written to a temporary folder: `local` is where the named path lies there."""

    source: GitPath
    folder: Path
    local: Path

    def rename(self, e: InputError) -> InputError:
        """The error with the temporary folder's paths given back their `git:REV:` names."""

        def fix(text: str | None) -> str | None:
            if not text:
                return text
            return text.replace(str(self.folder) + "/", f"git:{self.source.rev}:").replace(
                str(self.folder), f"git:{self.source.rev}:"
            )

        e.message, e.path, e.hint = fix(e.message) or "", fix(e.path), fix(e.hint)
        e.args = (e.render(),)
        return e


@contextmanager
def checkout(
    spec: str, kind: str = "document", max_bytes: int = MAX_FILE_BYTES, repo: Repo | None = None
) -> Iterator[Checkout]:
    """`git:REV:PATH` and what travels with it written to a temporary folder for the block; errors
    raised inside name the revision, never the folder. `kind`: "document" or "set"; `max_bytes`: the
    named file's own limit (each file that travels with it has the skill folder's)."""
    from .skill_folder import MAX_FILE_BYTES as FOLDER_FILE_BYTES

    repo, source = parse(spec, repo)
    folder = Path(tempfile.mkdtemp(prefix="abeq-git-"))
    try:
        (folder / ".git").mkdir()  # the project's bounds are the repository's, as in a checkout
        files = footprint(repo, source.commit, source.path, kind)
        # a crafted tree's path with '..' is never written outside the folder
        safe = [p for p in files if not p.startswith("/") and ".." not in p.split("/")]
        other = FOLDER_FILE_BYTES if kind == "document" else MAX_FILE_BYTES
        got = repo.read_many(source.commit, {p: max_bytes if p == source.path else other for p in safe})
        for p, data in got.items():
            dest = folder / p
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        out = Checkout(source, folder, folder / source.path)
        try:
            yield out
        except InputError as e:
            raise out.rename(e) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
