"""What the importers share: the imported cases before their types are supplied, naming cases,
reading a type a source declares, wording refusals."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..documents import read_text_file
from ..errors import InputError, MissingTypesError
from ..schemas import TransferSet
from ..vocab import CASE_TYPES
from .parse import from_obj

MAX_CASES = 5000  # a var matrix can multiply; past this the file is not a transfer set

# the files an import reads besides the one named (file:// tests, vars, prompts), resolved
_READS: ContextVar[list[Path] | None] = ContextVar("abeq_import_reads", default=None)


def read_referenced(path: str | Path, **kw) -> str:
    """read_text_file for a file another file names; the import's list of files read gets it."""
    reads = _READS.get()
    if reads is not None:
        reads.append(Path(path).resolve())
    return read_text_file(path, **kw)


MAX_GLOB_MATCHES = 1000


def glob_paths(base: Path, pattern: str, where: str) -> list[Path]:
    """The paths a file:// glob names, relative to `base` or absolute (promptfoo takes both; a file
    outside the config's project is named in a warning when it is read), sorted, at most
    MAX_GLOB_MATCHES of them; an InputError for a pattern that cannot be a glob."""
    p = Path(pattern)
    root, rel = (Path(p.anchor), str(p.relative_to(p.anchor))) if p.is_absolute() else (base, pattern)
    found: list[Path] = []
    try:
        for m in root.glob(rel):
            found.append(m)
            if len(found) > MAX_GLOB_MATCHES:
                raise InputError(
                    f"file://{pattern} matches more than {MAX_GLOB_MATCHES:,} files",
                    path=where,
                    hint="Name the test files more narrowly.",
                )
    except (ValueError, NotImplementedError, OSError) as e:
        raise InputError(
            f"file://{pattern} is not a glob abeq can follow ({e})",
            path=where,
            hint="Write it relative to the config (file://tests/*.yaml).",
        ) from None
    return sorted(found)


@contextmanager
def recording_reads() -> Iterator[list[Path]]:
    """Collect every file read_referenced reads inside the block."""
    reads: list[Path] = []
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


def outside_project(config: str, reads: list[Path]) -> list[str]:
    """The files read that lie outside the config's project (the nearest .git folder, else its own)."""
    from ..documents.doc_imports import project_root

    root = project_root(Path(config).resolve())
    return sorted({str(p) for p in reads if not p.is_relative_to(root)})


def _kind(v: Any) -> str:
    kinds: dict[type, str] = {dict: "mapping", list: "list", str: "text"}
    return kinds.get(type(v), type(v).__name__)


def _need_mapping(val: Any, label: str, key: str, path: str) -> None:
    if not isinstance(val, dict):
        raise InputError(
            f"{label}: '{key}' must be a mapping of names to values, not a {_kind(val)}",
            path=path,
            hint=f"Write it as 'name: value' lines under '{key}:' "
            + (
                "(e.g. metadata: {case_type: edge})."
                if key == "metadata"
                else "(e.g. vars: {question: ...})."
            ),
        )


def _json_text(v: Any) -> str:
    """JSON for a non-text value; YAML also gives dates, sets and bytes, which are written as text."""
    if not isinstance(v, (dict, list, int, float, type(None))):
        return str(v)  # a YAML date 2024-05-01 is the input "2024-05-01", not '"2024-05-01"'
    return json.dumps(v, ensure_ascii=False, default=str)


def _declared_type(obj: dict, path: str, label: str) -> str | None:
    """A case type the source itself declares, or None. A misspelt explicit one is an error."""
    for key in ("case_type", "abeq_type"):
        if key in obj and obj[key] not in (None, ""):
            if obj[key] not in CASE_TYPES:
                raise InputError(
                    f"{label}: {key} '{obj[key]}' is not a case type",
                    path=path,
                    hint=f"Use one of {', '.join(CASE_TYPES)}.",
                )
            return obj[key]
    t = obj.get("type")
    return t if t in CASE_TYPES else None  # 'type' may mean something else to the other tool


def _as_list(x: Any) -> list:
    if x is None:
        return []
    return x if isinstance(x, list) else [x]


def slugify(text: str) -> str:
    """A lowercase ASCII id from free text ("Handles >20 changes!" -> "handles-20-changes")."""
    ascii_ = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_.lower()).strip("-")[:60].rstrip("-")


def unique_id(want: str, taken: set) -> str:
    """`want`, or `want-2`, `want-3`... whichever is free; records it as taken."""
    cid, n = want, 2
    while cid in taken:
        cid, n = f"{want}-{n}", n + 1
    taken.add(cid)
    return cid


@dataclass
class Imported:
    """Cases read from a file, before a person has supplied the types the source lacked."""

    path: str
    source: str
    cases: list[dict]
    labels: list[str]
    warnings: list[str] = field(default_factory=list)
    rest: dict = field(default_factory=dict)  # set-level fields, for abeq's own formats
    outside: list[str] = field(default_factory=list)  # files read from outside the source's project

    @property
    def untyped(self) -> list[str]:
        """Ids of the cases that have no type."""
        return [str(c.get("id", "")) for c in self.cases if isinstance(c, dict) and not c.get("type")]

    def resolve(
        self, types: dict[str, str] | None = None, default_type: str | None = None
    ) -> tuple[TransferSet, list[str]]:
        """The transfer set, with each missing type taken from `types` (by id) or `default_type`."""
        types = dict(types or {})
        for t in [*types.values(), *([default_type] if default_type else [])]:
            if t not in CASE_TYPES:
                raise InputError(
                    f"'{t}' is not a case type", path=self.path, hint=f"Use one of {', '.join(CASE_TYPES)}."
                )
        cases: list[Any] = []
        missing: list[str] = []
        defaulted: list[str] = []
        chosen: list[str] = []
        for c in self.cases:
            if isinstance(c, dict) and not c.get("type"):
                cid = str(c.get("id", ""))
                given = types.get(cid) or default_type
                if given is None:
                    missing.append(cid)
                    continue
                (chosen if cid in types else defaulted).append(cid)
                c = {**c, "type": given, "status": "user-modified"}
            cases.append(c)
        if missing:
            raise MissingTypesError(
                f"{len(missing)} case(s) have no type and {_no_type_reason(self.source)}: {_names(missing)}",
                case_ids=missing,
                path=self.path,
                hint=f"Give each a type ({', '.join(CASE_TYPES)}){_where_types_go(self.source)}, or pass "
                "--default-type TYPE to give them all one (marked user-modified; review before confirming).",
            )
        notes = list(self.warnings)
        if defaulted:
            notes.append(
                f"gave {len(defaulted)} case(s) the default type '{default_type}' (marked user-modified; "
                f"check each before confirming): {_names(defaulted)}"
            )
        rest = dict(self.rest)
        if (defaulted or chosen) and rest.get("user_confirmed"):
            # supplying a type is an edit; a confirmed set that was edited is no longer confirmed
            rest.update(user_confirmed=False, confirmation_timestamp=None, confirmed_hash=None)
            notes.append("the file was a confirmed set; with types added it is unconfirmed again")
        return from_obj({**rest, "cases": cases}, self.path, self.labels), notes


def _names(ids: list[str], limit: int = 15) -> str:
    shown = ", ".join(i or "(no id)" for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _no_type_reason(source: str) -> str:
    if source in ("promptfoo", "skill-creator"):
        return f"{source} files have no field for one"
    return "the file gives none"


def _where_types_go(source: str) -> str:
    return {
        "promptfoo": " in each test's metadata.case_type",
        "skill-creator": " as a case_type key on each eval",
    }.get(source, " in the 'type' field")
