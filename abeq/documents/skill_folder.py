"""A skill is a folder: SKILL.md and the files it brings (references/, scripts/, assets/…).

What travels with a SKILL.md: every file in the skill folder's subfolders, and the files beside it
that it names (`see forms.md`). Other files beside it (a candidate, a transfer set kept next to
the skill) do not. They are text files within a workspace's bounds; a link, a binary or an
oversized file is refused, naming it.

Left out, as skill-creator's packaging (package_skill.py) leaves them out of a .skill file: the
skill's own `evals/` folder at its root (its tests: expected behaviours the runner must not see),
`__pycache__` and `node_modules` anywhere, and `*.pyc` files. `left_out` says which.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..files import LINK, SPECIAL, read_regular

MAX_FILE_BYTES = 500_000
MAX_FOLDER_BYTES = 5_000_000
MAX_FOLDER_FILES = 1_000
HINT = (
    f"A skill's folder travels with it as text files (each up to {MAX_FILE_BYTES:,} bytes, "
    f"{MAX_FOLDER_BYTES:,} bytes and {MAX_FOLDER_FILES:,} files in all); move other files elsewhere."
)


def is_skill_file(path: Path) -> bool:
    return path.name.lower() == "skill.md"


ROOT_EXCLUDED_DIRS = ("evals",)
EXCLUDED_DIRS = ("__pycache__", "node_modules")


def left_out(skill_md: Path) -> list[str]:
    """What of the skill's folder stays behind, as skill-creator packages a skill: a line each."""
    folder = skill_md.parent
    out = []
    for name in ROOT_EXCLUDED_DIRS:
        d = folder / name
        if d.is_dir() and not d.is_symlink():
            n = sum(len(files) for _, _, files in os.walk(d))
            out.append(
                f"left out the skill's {name}/ folder ({n} file{'s' if n != 1 else ''}): its evals test the "
                "skill and are not part of it (skill-creator's packaging leaves them out too), so the runner "
                "never sees the expected behaviours"
            )
    return out


def _kept(name: str) -> bool:
    return not name.startswith(".") and name not in EXCLUDED_DIRS and not name.endswith(".pyc")


def skill_files(skill_md: Path, text: str) -> dict[str, str]:
    """The files that travel with this SKILL.md (relative POSIX path -> text)."""
    folder = skill_md.parent
    found: list[Path] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.name == skill_md.name:
            continue
        if entry.is_dir() and not entry.is_symlink():
            if entry.name in ROOT_EXCLUDED_DIRS or entry.name in EXCLUDED_DIRS:
                continue
            for dirpath, dirnames, filenames in os.walk(entry):
                dirnames[:] = sorted(d for d in dirnames if _kept(d))
                found += [Path(dirpath) / n for n in sorted(filenames) if _kept(n)]
        elif entry.name in text:  # a file beside SKILL.md travels when SKILL.md names it
            found.append(entry)
    files: dict[str, str] = {}
    total = 0
    for full in found:
        rel = full.relative_to(folder).as_posix()
        try:
            data = read_regular(full, MAX_FILE_BYTES)  # never through a link, counted while reading
        except OSError as e:
            raise InputError(f"cannot read the skill's file {rel} ({e.strerror})", path=str(full)) from None
        if data == LINK:
            raise InputError(f"the skill's file {rel} is a symbolic link", path=str(full), hint=HINT)
        if data == SPECIAL:
            raise InputError(f"the skill's file {rel} is not a regular file", path=str(full), hint=HINT)
        if not isinstance(data, bytes) or len(data) > MAX_FILE_BYTES or b"\x00" in data:
            raise InputError(
                f"the skill's file {rel} is binary or over {MAX_FILE_BYTES:,} bytes",
                path=str(full),
                hint=HINT,
            )
        try:
            files[rel] = data.decode("utf-8").replace("\r\n", "\n")
        except UnicodeDecodeError:
            raise InputError(f"the skill's file {rel} is not UTF-8 text", path=str(full), hint=HINT) from None
        total += len(data)
        if len(files) > MAX_FOLDER_FILES or total > MAX_FOLDER_BYTES:
            raise InputError(f"the skill's folder {folder} is over its bounds", path=str(folder), hint=HINT)
    return files


def differences(original: dict[str, str], candidate: dict[str, str]) -> dict[str, list[str]]:
    """Which of a skill's files the candidate adds, drops or changes."""
    return {
        "added": sorted(set(candidate) - set(original)),
        "removed": sorted(set(original) - set(candidate)),
        "changed": sorted(p for p in set(original) & set(candidate) if original[p] != candidate[p]),
    }
