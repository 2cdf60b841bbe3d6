"""What a pull request changed among the configured documents: base (the merge base) against head.

A document counts as changed when any file that travels with it changed: the file itself, an
`@import`ed file, a file in a skill's folder (abeq.git_source.footprint). Nothing here reads a model
library: a pull request that changed no document costs two `git ls-tree` and nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputError
from ..git_source import Repo, footprint
from .project import Entry, Project

NEW, REMOVED, CHANGED, UNCHANGED = "new", "removed", "changed", "unchanged"


@dataclass
class Target:
    """One configured document between two revisions."""

    path: str
    entry: Entry
    state: str  # new | removed | changed | unchanged
    transfer_set: str
    set_changed: bool = False
    changed_files: list[str] = field(default_factory=list)  # what differs among the files that travel


@dataclass
class Revisions:
    base: str  # the merge base's commit
    head: str
    base_rev: str  # as the user wrote them
    head_rev: str


def revisions(repo: Repo, base: str, head: str = "HEAD") -> Revisions:
    b, h = repo.commit(base), repo.commit(head)
    merge = repo.git(["merge-base", b, h], what=f"the merge base of {base} and {head}").strip()
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


def targets(repo: Repo, revs: Revisions, project: Project) -> list[Target]:
    """Every configured document found at head or base, with what happened to it."""
    base_tree, head_tree = repo.tree(revs.base), repo.tree(revs.head)
    out: list[Target] = []
    seen: set[str] = set()
    for entry in project.entries:
        paths = sorted(p for p in {*head_tree, *base_tree} if entry.matches(p))
        for path in paths:
            if path in seen:
                continue  # the first table naming a document decides its settings
            seen.add(path)
            ts = entry.set_for(path)
            if path not in base_tree:
                out.append(Target(path, entry, NEW, ts))
                continue
            if path not in head_tree:
                out.append(Target(path, entry, REMOVED, ts))
                continue
            old, new = (footprint(repo, c, path, "document") for c in (revs.base, revs.head))
            differ = sorted(p for p in {*old, *new} if old.get(p) != new.get(p))
            set_old, set_new = (footprint(repo, c, ts, "set") for c in (revs.base, revs.head))
            out.append(Target(path, entry, CHANGED if differ else UNCHANGED, ts, set_old != set_new, differ))
    return out
