"""What a pull request changed among the configured documents: base (the merge base) against head.

A document counts as changed when any file that travels with it changed: the file itself, an
`@import`ed file, a file in a skill's folder (abeq.documents.git_source.footprint). Renames are followed with
git's own rename detection: a document (or a skill's folder) moved by the pull request is gated base
path against head path, like any change, never reported as one removed and one new. Nothing here
reads a model library: a pull request that changed no document costs a few `git ls-tree` and
nothing more.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from ..documents.git_source import Repo, footprint
from ..errors import InputError
from .project import Entry, Project

NEW, REMOVED, CHANGED, UNCHANGED = "new", "removed", "changed", "unchanged"
_DOC = "\0document"  # the document itself among its footprint's relative paths (its name may change)


@dataclass
class Target:
    """One configured document between two revisions."""

    path: str  # at head (at base when the pull request removed it)
    entry: Entry
    state: str  # new | removed | changed | unchanged
    transfer_set: str  # the set's path at head
    set_changed: bool = False
    changed_files: list[str] = field(default_factory=list)  # what differs among the files that travel
    base_path: str = ""  # at base, when the pull request moved it ("" : the same path)
    base_set: str = ""  # the set's path at base ("" : the same path)
    dropped: list[str] = field(default_factory=list)  # files the base's version took and the head's does not
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (base path, head path) of travelling files
    # filled when the run is prepared (gate.run.prepare): the case ids the pull request added, removed
    # or changed in the set, and why a change is not judged
    set_changes: dict[str, list[str]] = field(default_factory=dict)
    not_judged: str = ""

    @property
    def original_path(self) -> str:
        """Where the base revision holds the document."""
        return self.base_path or self.path

    @property
    def original_set(self) -> str:
        return self.base_set or self.transfer_set


@dataclass
class Revisions:
    base: str  # the merge base's commit
    head: str
    base_rev: str  # as the user wrote them
    head_rev: str


SHALLOW_HINT = (
    "On GitHub Actions give actions/checkout `fetch-depth: 0`; elsewhere run `git fetch --unshallow` "
    "(the gate reads the base's history back to the merge base)."
)


def _shallow(repo: Repo) -> bool:
    """Whether this clone holds only part of the history (actions/checkout's default: one commit)."""
    try:
        return repo.git(["rev-parse", "--is-shallow-repository"], what="the clone").strip() == "true"
    except InputError:
        return False


def revisions(repo: Repo, base: str, head: str = "HEAD") -> Revisions:
    try:
        b, h = repo.commit(base), repo.commit(head)
        merge = repo.git(["merge-base", b, h], what=f"the merge base of {base} and {head}").strip()
    except InputError as e:
        if not _shallow(repo):
            raise
        raise InputError(
            f"this clone is shallow, so git cannot find the merge base of {base} and {head} ({e.message})",
            hint=SHALLOW_HINT,
        ) from None
    if not merge:
        raise InputError(
            f"{base} and {head} have no common ancestor", hint="Give the branch the PR merges into."
        )
    return Revisions(merge, h, base, head)


def read_project(repo: Repo, commit: str, name: str = "abeq.toml") -> Project | None:
    """abeq.toml as the head revision holds it (None when it has none)."""
    from .project import parse

    if name not in repo.tree(commit):
        return None
    text = repo.read(commit, name, 1_000_000).decode("utf-8", errors="replace")
    return parse(text, f"{name} (at {commit[:12]})")


def renames(repo: Repo, revs: Revisions) -> dict[str, str]:
    """The files git sees renamed between base and head (base path → head path), by its own rename
    detection (`git diff -M`, as `git log --follow` and a pull request's page see them)."""
    raw = repo.git(
        ["diff", "-z", "--name-status", "-M", "--no-ext-diff", revs.base, revs.head, "--"],
        what="the renames between base and head",
    )
    parts, out, i = raw.split("\0"), {}, 0
    while i < len(parts) and parts[i]:
        status = parts[i]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                out[parts[i + 1]] = parts[i + 2]
            i += 3
        else:
            i += 2
    return out


def _moved_to(path: str, moves: dict[str, str], base_tree, head_tree) -> str | None:
    """Where the head holds a document the base held at `path`: git renamed the file itself, or (a
    skill rewritten past git's similarity threshold) the files of its folder moved to one folder.
    Only to a path the base does not hold: a document there already is gated as itself."""
    if moves.get(path) in head_tree and moves[path] not in base_tree:
        return moves[path]
    folder = posixpath.dirname(path)
    if not folder or path.rsplit("/", 1)[-1].lower() != "skill.md":
        return None
    for src, dst in sorted(moves.items()):
        if src.startswith(folder + "/"):
            rel = src[len(folder) + 1 :]
            if dst.endswith("/" + rel):
                moved = posixpath.join(dst[: -len(rel) - 1], posixpath.basename(path))
                if moved in head_tree and moved not in base_tree:
                    return moved
    return None


def _relative(files: dict[str, str], doc: str) -> dict[str, tuple[str, str]]:
    """A footprint by path relative to the document's folder (the document itself under _DOC), so a
    folder moved whole compares file by file: relative path → (full path, blob id)."""
    folder = posixpath.dirname(doc) or "."
    return {(_DOC if p == doc else posixpath.relpath(p, folder)): (p, oid) for p, oid in files.items()}


def targets(repo: Repo, revs: Revisions, project: Project) -> list[Target]:
    """Every configured document found at head or base, with what happened to it."""
    base_tree, head_tree = repo.tree(revs.base), repo.tree(revs.head)
    found: list[tuple[str, Entry]] = []
    seen: set[str] = set()
    for entry in project.entries:
        for path in sorted(p for p in {*head_tree, *base_tree} if entry.matches(p)):
            if path not in seen:  # the first table naming a document decides its settings
                seen.add(path)
                found.append((path, entry))
    known: list[dict[str, str]] = []

    def moves() -> dict[str, str]:  # asked only when a document's files went missing
        if not known:
            known.append(renames(repo, revs))
        return known[0]

    gone = [p for p, _ in found if p not in head_tree]
    follow = {p: d for p in gone if (d := _moved_to(p, moves(), base_tree, head_tree))}
    out: list[Target] = []
    for path, entry in found:
        if path in follow.values() and path not in base_tree:
            continue  # the head's end of a rename: gated with its base path below
        ts = entry.set_for(path)
        if path in follow:
            head_path = follow[path]
            head_entry = next((e for e in project.entries if e.matches(head_path)), entry)
            t = _compare(repo, revs, path, head_path, entry, ts, head_entry.set_for(head_path), moves)
            out.append(t)
        elif path not in base_tree:
            out.append(Target(path, entry, NEW, ts))
        elif path not in head_tree:
            out.append(Target(path, entry, REMOVED, ts))
        else:
            out.append(_compare(repo, revs, path, path, entry, ts, ts, moves))
    return out


def _compare(
    repo: Repo,
    revs: Revisions,
    base_path: str,
    head_path: str,
    entry: Entry,
    base_set: str,
    head_set: str,
    moves,
) -> Target:
    """One document at both revisions: the files that differ, those the head no longer takes, and
    those git saw renamed."""
    old = _relative(footprint(repo, revs.base, base_path, "document"), base_path)
    new = _relative(footprint(repo, revs.head, head_path, "document"), head_path)
    differ = sorted(r for r in {*old, *new} if old.get(r, ("", ""))[1] != new.get(r, ("", ""))[1])
    changed = sorted({(new.get(r) or old[r])[0] for r in differ})
    head_files = {p for p, _ in new.values()}
    lost = [old[r][0] for r in differ if r in old and r not in new]
    seen = moves() if lost else {}
    renamed = [(p, seen[p]) for p in lost if seen.get(p) in head_files]
    moved = {a for a, _ in renamed}
    dropped = [p for p in lost if p not in moved]
    set_old = _relative(footprint(repo, revs.base, base_set, "set"), base_set)
    set_new = _relative(footprint(repo, revs.head, head_set, "set"), head_set)
    set_changed = {r: v[1] for r, v in set_old.items()} != {r: v[1] for r, v in set_new.items()}
    moved_doc = base_path != head_path
    return Target(
        head_path,
        entry,
        CHANGED if differ or moved_doc else UNCHANGED,
        head_set,
        set_changed,
        changed,
        base_path if moved_doc else "",
        base_set if base_set != head_set else "",
        dropped,
        renamed,
    )
