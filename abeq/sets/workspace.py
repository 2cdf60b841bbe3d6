"""A case's workspace as the set defines it: a folder (relative to the set file) read when the set is
loaded, and/or inline `files`. Its content, never its path, is part of the case's identity, so moving
the folder changes nothing and editing a file in it is a new case (a cache miss, an unconfirmed set).

A workspace holds text files only, within bounds: a missing folder, a binary, huge or unreadable
file, or a path that would land outside the copy is bad input, named before anything runs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath

from ..errors import InputError
from ..schemas import Case, TransferSet

MAX_FILE_BYTES = 500_000
MAX_WORKSPACE_BYTES = 5_000_000
MAX_WORKSPACE_FILES = 1_000
_HINT = "A workspace holds text files only (each up to {:,} bytes, {:,} bytes and {:,} files in all)."
HINT = _HINT.format(MAX_FILE_BYTES, MAX_WORKSPACE_BYTES, MAX_WORKSPACE_FILES)


def digest(files: dict[str, str]) -> str:
    """The content of a set of files (paths and text), independent of where they were read from."""
    blob = json.dumps(files, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def path_problem(rel: str) -> str:
    """Why this can not be a path inside a workspace ("" when it can)."""
    if not rel or not rel.strip():
        return "an empty path"
    if "\\" in rel or "\x00" in rel:
        return "a path with a backslash or NUL (write paths with /)"
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts:
        return "a path outside the workspace (absolute, or with ..)"
    if p.parts and p.parts[0] == ".git":
        return "a path inside .git (a workspace is copied as files, never as a repository's internals)"
    return ""


def _text(data: bytes, what: str, where: str) -> str:
    if b"\x00" in data:
        raise InputError(f"{what} looks binary (it contains NUL bytes)", path=where, hint=HINT)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{what} is not valid UTF-8 (byte {e.start})", path=where, hint=HINT) from None


def _one_tree(files: dict[str, str], case_id: str, where: str) -> None:
    """No path is both a file and a folder (inline files over a folder's can make that)."""
    folders = {str(parent) for rel in files for parent in PurePosixPath(rel).parents}
    clash = sorted(set(files) & folders)
    if clash:
        raise InputError(
            f"case '{case_id}': workspace path {clash[0]} is both a file and a folder",
            path=where,
            hint="Rename the file or the folder in `files` or in the workspace folder.",
        )


def _bounded(files: dict[str, str], case_id: str, where: str) -> None:
    total = sum(len(t.encode()) for t in files.values())
    if len(files) > MAX_WORKSPACE_FILES or total > MAX_WORKSPACE_BYTES:
        raise InputError(
            f"case '{case_id}': its workspace has {len(files):,} files, {total:,} bytes",
            path=where,
            hint=HINT + " Keep only what the task needs.",
        )


def read_folder(folder: Path, case_id: str, set_path: str) -> dict[str, str]:
    """Every file under `folder` as relative POSIX path -> text; an InputError names the file at fault."""
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "was not found"
        raise InputError(
            f"case '{case_id}': its workspace folder {folder} {what}",
            path=set_path,
            hint="A workspace folder is named relative to the transfer set file; check the path.",
        )
    from ..files import LINK, read_fd, walk

    files: dict[str, str] = {}
    try:
        # opened name by name without following links: a folder swapped for a link mid-walk is refused
        for rel, fd, _ in walk(folder, skip=frozenset({".git"})):  # a repository's internals are not files
            full = str(folder / rel)
            if fd == LINK:
                raise InputError(
                    f"case '{case_id}': workspace file {rel} is a symbolic link",
                    path=full,
                    hint="Copy the file into the workspace folder instead (a link could reach outside it).",
                )
            if not isinstance(fd, int):
                raise InputError(
                    f"case '{case_id}': workspace file {rel} is not a regular file "
                    "(a FIFO, socket or device)",
                    path=full,
                    hint=HINT,
                )
            data = read_fd(fd, MAX_FILE_BYTES)  # counted while reading, not taken from stat
            if data is None:
                raise InputError(
                    f"case '{case_id}': workspace file {rel} is over {MAX_FILE_BYTES:,} bytes",
                    path=full,
                    hint=HINT,
                )
            files[rel] = _text(data, f"case '{case_id}': workspace file {rel}", full)
            _bounded(files, case_id, str(folder))
    except OSError as e:
        raise InputError(
            f"case '{case_id}': cannot read its workspace folder ({e.strerror or e}"
            + (f": {e.filename}" if e.filename else "")
            + "); a folder in it may have been replaced by a symbolic link while it was read",
            path=str(folder),
            hint=HINT,
        ) from None
    return files


def check_inline(case: Case, where: str) -> None:
    """The inline `files` map: safe relative paths, text within bounds."""
    for rel, text in case.files.items():
        problem = path_problem(rel)
        if problem:
            raise InputError(
                f"case '{case.id}': files: {rel!r} is {problem}",
                path=where,
                hint="Name each file by its path inside the workspace, e.g. src/app.py.",
            )
        if "\x00" in text or len(text.encode()) > MAX_FILE_BYTES:
            raise InputError(f"case '{case.id}': files: {rel} is binary or too large", path=where, hint=HINT)
    _bounded(case.files, case.id, where)
    _one_tree(case.files, case.id, where)


def attach(case: Case, folder_files: dict[str, str] | None) -> Case:
    """The case carrying its folder's files (a copy: cases are shared)."""
    out = case.model_copy()
    out._folder_files = folder_files
    return out


def inside_project(workspace: str, base: Path, case_id: str, set_path: str) -> Path:
    """The workspace folder, resolved, when it lies inside the set's project (the nearest folder
    above the set holding a .git, else the set's own folder: the rule `@imports` follow); else an
    InputError, before anything in it is read. A set from someone else must not copy your files
    into the database and the runner's prompt (`../../secrets`, `/home/you/.ssh`, a symlink out)."""
    from ..documents.doc_imports import project_root

    base = base.resolve()
    root = project_root(base / Path(set_path).name)
    hint = (
        f"Keep the workspace folder inside the set's project ({root}) and name it relative to the set "
        "file, e.g. workspaces/case-1; or put the files inline under `files`."
    )
    if workspace.startswith("~") or PurePosixPath(workspace).is_absolute() or Path(workspace).is_absolute():
        raise InputError(
            f"case '{case_id}': its workspace '{workspace}' is an absolute path", path=set_path, hint=hint
        )
    folder = (base / workspace).resolve()  # follows every symlink on the way
    if not folder.is_relative_to(root):
        raise InputError(
            f"case '{case_id}': its workspace '{workspace}' is outside the set's project: it resolves "
            f"to {folder}",
            path=set_path,
            hint=hint,
        )
    return folder


def resolve(ts: TransferSet, base: Path | None, set_path: str) -> TransferSet:
    """Read each case's workspace folder (relative to `base`, the set file's folder) into the case.

    `base` None: the set arrived without a location (an upload), so a folder cannot be found.
    """
    cases = []
    for case in ts.cases:
        check_inline(case, set_path)
        if case.workspace is not None:
            if not case.workspace.strip():
                raise InputError(
                    f"case '{case.id}': workspace is blank",
                    path=set_path,
                    hint="Name a folder relative to the set file, or leave `workspace` out.",
                )
            if base is None:
                raise InputError(
                    f"case '{case.id}': its workspace folder '{case.workspace}' is found relative to the "
                    "set file, and this set has no file location",
                    path=set_path,
                    hint="Load the set from its path (abeq run --transfer-set PATH), or put the files "
                    "inline under `files`.",
                )
            folder = inside_project(case.workspace, base, case.id, set_path)
            case = attach(case, read_folder(folder, case.id, set_path))
            _bounded(initial_files(case), case.id, set_path)
            _one_tree(initial_files(case), case.id, set_path)
        cases.append(case)
    return ts.model_copy(update={"cases": cases})


def folder_files(case: Case) -> dict[str, str]:
    """The folder's files; an InputError when the case names a folder that was never read."""
    if case.workspace is not None and case._folder_files is None:
        raise InputError(
            f"case '{case.id}': its workspace folder '{case.workspace}' was not read",
            hint="Load the set with abeq.sets.load(PATH), or call abeq.sets.workspace.resolve(set, "
            "folder, name): the folder is found relative to the set file.",
        )
    return case._folder_files or {}


def initial_files(case: Case) -> dict[str, str]:
    """What a run of this case starts from: the folder's files, then the inline ones over them."""
    return {**folder_files(case), **case.files}


def has_workspace(case: Case) -> bool:
    return case.workspace is not None or bool(case.files)


def identity(case: Case) -> str:
    """The folder's content in the case's identity (its path is left out: moving it changes nothing)."""
    return digest(folder_files(case))


def trees(ts: TransferSet) -> dict[str, dict[str, str]]:
    """Case id -> folder files, for the store to keep with the set."""
    return {c.id: c._folder_files for c in ts.cases if c._folder_files is not None}


def reattach(ts: TransferSet, by_case: dict[str, dict[str, str]]) -> TransferSet:
    """A set read back from the store, its cases carrying their folders' files again."""
    if not by_case:
        return ts
    return ts.model_copy(update={"cases": [attach(c, by_case.get(c.id)) for c in ts.cases]})


def carry(old: list[Case], new: list[Case]) -> list[Case]:
    """Edited cases keep the folder files of the case they were, while they name the same folder."""
    before = {c.id: c for c in old}
    out = []
    for c in new:
        prev = before.get(c.id)
        if c._folder_files is None and prev is not None and prev.workspace == c.workspace:
            c = attach(c, prev._folder_files)
        out.append(c)
    return out
