"""Transfer sets as the rows of the desk's table editor, and back (validated by abeq.sets)."""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .. import sets
from ..documents import check_document_text, read_text_file
from ..errors import InputError, MissingTypesError, json_problem
from ..schemas import Case, TransferSet
from ..sets import importers, workspace
from ..sets.parse import MAX_SET_BYTES

COLUMNS = [
    "id",
    "type",
    "input",
    "exercises_sections",
    "gate_responses",
    "status",
    "assertions",
    "expectations",
]
REQUIRED = ("id", "type", "input")
NO_CASES = "the table has no cases"


def to_frame(ts: TransferSet) -> pd.DataFrame:
    """One row per case; sections as comma-separated text, gate responses as JSON text."""
    rows = [
        {
            "id": c.id,
            "type": c.type,
            "input": c.input,
            "exercises_sections": ", ".join(c.exercises_sections),
            "gate_responses": json.dumps([g.model_dump() for g in c.gate_responses], ensure_ascii=False)
            if c.gate_responses
            else "",
            "status": c.status,
            # checks as JSON: promptfoo-style assertions (defaults left out), expectations as a list
            "assertions": json.dumps(
                [a.model_dump(exclude_defaults=True) for a in c.assertions], ensure_ascii=False
            )
            if c.assertions
            else "",
            "expectations": json.dumps(c.expectations, ensure_ascii=False) if c.expectations else "",
        }
        for c in ts.cases
    ]
    return pd.DataFrame(rows, columns=COLUMNS).astype(object)


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v)


def _split_sections(cell: str, known: dict[str, str]) -> list[str]:
    """Comma-separated titles, where a known title that itself contains commas stays whole."""
    parts = [p.strip() for p in cell.split(",")]
    out, i = [], 0
    while i < len(parts):
        for j in range(len(parts), i + 1, -1):  # the longest run of parts that spells a known title
            title = known.get(_squeeze(",".join(parts[i:j])))
            if title is not None:
                out.append(title)
                break
        else:
            j = i + 1
            if parts[i]:
                out.append(parts[i])
        i = j
    return out


def _squeeze(s: str) -> str:
    return "".join(s.split())


_ASSERTION_EG = '[{"type": "contains", "value": "(#482)"}, {"type": "llm-rubric", "value": "…"}]'


def _json_list(cell: str, n: int, name: str, example: str) -> list:
    """A JSON list cell (one object alone counts as a list of one); empty is an empty list."""
    if not cell:
        return []
    try:
        value = json.loads(cell)
    except json.JSONDecodeError as e:
        raise InputError(
            f"row {n}: {name} is not valid JSON ({json_problem(e)})",
            hint=f"Write a JSON list, e.g. {example}.",
        ) from None
    return value if isinstance(value, list) else [value]


def from_frame(df: pd.DataFrame, ts: TransferSet, sections: Sequence[str] = ()) -> list[Case]:
    """The edited rows as cases; an InputError names the row and field of the first problem.

    `sections` are the original's titles; with those the set already names, they let a title
    that contains a comma ("Review, and handoff") survive the comma-separated cell.
    """
    old = {c.id: c for c in ts.cases}
    titles = [
        *sections,
        *ts.coverage.sections_identified,
        *(s for c in ts.cases for s in c.exercises_sections),
    ]
    known = {_squeeze(t): t for t in reversed(titles) if "," in t}  # the first spelling wins
    raw = []
    for n, rec in enumerate(df.to_dict("records"), start=1):
        cells = {k: _cell(rec.get(k)).strip() for k in COLUMNS}
        if not any(cells[k] for k in COLUMNS if k != "status"):
            continue  # an added row left blank
        missing = [k for k in REQUIRED if not cells[k]]
        if missing:  # refused with its row, never dropped: the reviewer typed something into it
            name = f"row {n}" + (f" ({cells['id']})" if cells["id"] else "")
            raise InputError(
                f"{name}: {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} empty",
                hint="Fill it in, or delete the row: a half-filled row is not saved.",
            )
        gates: Any = []
        if cells["gate_responses"]:
            try:
                gates = json.loads(cells["gate_responses"])
            except json.JSONDecodeError as e:
                raise InputError(
                    f"row {n}: gate_responses is not valid JSON ({json_problem(e)})",
                    hint='Write a JSON list, e.g. [{"pattern": "confirm", "response": "yes"}].',
                ) from None
            if isinstance(gates, dict):
                gates = [gates]
        case = {
            "id": cells["id"],
            "type": cells["type"],
            "input": _cell(rec.get("input")),
            "exercises_sections": _split_sections(cells["exercises_sections"], known),
            "gate_responses": gates,
            "assertions": _json_list(cells["assertions"], n, "assertions", _ASSERTION_EG),
            "expectations": _json_list(
                cells["expectations"], n, "expectations", '["The notes name the version"]'
            ),
        }
        prev = old.get(cells["id"])
        if prev is not None:  # fields the table does not show (expectations, rationale) travel with the case
            case = {**prev.model_dump(exclude=set(case)), **case, "status": prev.status}
        raw.append(case)
    if not raw:
        raise InputError(NO_CASES, hint="Add at least one row.")
    # a case's workspace folder was read when its set was loaded: the edited case keeps its files
    return workspace.carry(ts.cases, sets.from_obj({"cases": raw}, "transfer-set table").cases)


def changed(ts: TransferSet, cases: list[Case]) -> bool:
    """True when the table differs from the stored set in anything the runner or judge sees."""
    return sets.set_hash(ts.model_copy(update={"cases": cases})) != sets.set_hash(ts)


def unsaved(ts: TransferSet, cases: list[Case]) -> dict[str, list[str]]:
    """What the table changes against the stored set: case ids added and deleted, and per edited
    case the fields that differ ("happy-1: input, type")."""
    old = {c.id: c for c in ts.cases}
    new = {c.id: c for c in cases}
    edited = []
    for cid, c in new.items():
        if cid in old:
            a, b = old[cid].model_dump(exclude={"status"}), c.model_dump(exclude={"status"})
            fields = [k for k in a if a[k] != b[k]]
            if fields:
                edited.append(f"{cid}: {', '.join(fields)}")
    return {
        "added": [cid for cid in new if cid not in old],
        "deleted": [cid for cid in old if cid not in new],
        "edited": edited,
    }


def import_text(text: str, filename: str, original_hash: str) -> TransferSet:
    """A set from an uploaded file; a confirmation made for a different original does not carry over.

    It meets the checks a file meets on the command line (size, binary, parsing, row and line labels).
    """
    return _for_original(sets.load_text(text, filename), original_hash)


def _for_original(ts: TransferSet, original_hash: str) -> TransferSet:
    if ts.user_confirmed and ts.document_hash != original_hash:
        ts = ts.model_copy(update=sets.UNCONFIRMED)
    return ts


# the importers the desk offers (abeq.sets.importers); "detect" looks at the file
# (abeq.sets.imported.detect_format); "abeq" is abeq's own format, read by its extension
IMPORT_FORMATS = {
    "detect": "Detect from the file",
    "abeq": importers.ABEQ_LABEL,
    **{i.name: i.label for i in importers.IMPORTERS},
}
TYPES_HINT = (
    "Choose a type for cases without one (they are marked user-modified: check each in the table before "
    "confirming), then import again."
)


@dataclass
class ImportResult:
    ts: TransferSet
    warnings: list[str]
    read_as: str  # the importer used: promptfoo, skill-creator, dataset, or abeq's format (json, yaml, …)


def import_uploads(
    files: dict[str, bytes],
    main: str,
    fmt: str,
    original_hash: str,
    *,
    default_type: str | None = None,
    trigger_queries: bool = False,
) -> ImportResult:
    """The set in the uploaded file `main`. The files uploaded with it sit beside it in a fresh
    folder, so a promptfoo config's `file://` references are found among them and never on this
    machine's own disk; nothing of that folder shows in a case or a message."""
    from ..files import file_name

    name = file_name(main)
    try:
        text = files[main].decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(
            "not valid UTF-8 text", path=name, hint="Save it as UTF-8, then upload it again."
        ) from None
    check_document_text(text, name, what="transfer set", max_bytes=MAX_SET_BYTES, document=False)
    read_as = _format(fmt, name, text)
    if read_as not in importers.BY_NAME:
        return ImportResult(import_text(text, name, original_hash), [], read_as)
    with tempfile.TemporaryDirectory(prefix="abeq-upload-") as d:
        for other, data in files.items():
            (Path(d) / file_name(other)).write_bytes(data)
        try:
            got = _imported(read_as, str(Path(d) / name), text, default_type, trigger_queries, original_hash)
        except InputError as e:
            raise _without(e, d, name, upload=True) from None
    return ImportResult(got.ts, [w.replace(d + "/", "").replace(d, ".") for w in got.warnings], read_as)


def import_path(
    path: str,
    fmt: str,
    original_hash: str,
    *,
    default_type: str | None = None,
    trigger_queries: bool = False,
) -> ImportResult:
    """The set in a file on this machine, its references (`file://`, a case's workspace) read
    relative to it, as `abeq import-set` reads it; `git:REV:PATH` at a revision
    (abeq.documents.git_source)."""
    from ..documents.git_source import checkout, is_git

    if is_git(path):
        with checkout(path, "set") as co:
            got = import_path(
                str(co.local), fmt, original_hash, default_type=default_type, trigger_queries=trigger_queries
            )
            got.warnings = [co.rename(InputError(w)).message for w in got.warnings]
            return got
    text = read_text_file(path, what="transfer set", max_bytes=MAX_SET_BYTES)
    read_as = _format(fmt, path, text)
    if read_as not in importers.BY_NAME:
        return ImportResult(_for_original(sets.load(path), original_hash), [], read_as)
    try:
        return _imported(read_as, path, text, default_type, trigger_queries, original_hash)
    except InputError as e:
        raise _without(e, None, path, upload=False) from None


def _format(fmt: str, name: str, text: str) -> str:
    from ..sets.imported import detect_format
    from ..sets.parse import format_of

    if fmt == "detect":
        return detect_format(name, text)
    return format_of(name) if fmt == "abeq" else fmt


def _imported(fmt, path, text, default_type, trigger_queries, original_hash) -> ImportResult:
    from ..sets.imported import read_source

    got = read_source(fmt, path, text, trigger_queries=trigger_queries)
    if got.outside:  # the desk may be driven by a page or a set from someone else: read only the project
        raise InputError(
            f"this {fmt} file reads {len(got.outside)} file(s) from outside its project: "
            + ", ".join(got.outside),
            path=path,
            hint="Move those files into the project (the folder with the .git), or import the set with "
            "`abeq import-set`, which reads them and names them in a warning.",
        )
    ts, warnings = got.resolve(None, default_type)
    return ImportResult(_for_original(ts, original_hash), warnings, fmt)


def _without(e: InputError, folder: str | None, name: str, *, upload: bool) -> InputError:
    """The error as the desk says it: the upload's name, never the folder it was read from, and what
    to do here rather than on the command line."""
    msg = e.message.replace(folder + "/", "").replace(folder, ".") if folder else e.message
    hint = e.hint
    if isinstance(e, MissingTypesError):
        hint = TYPES_HINT
    elif upload and "file://" in msg:
        hint = (
            "An upload brings only the files uploaded with it: select the files it names together with "
            "it, or give its path on this machine (From: Path)."
        )
    return InputError(msg, path=name, hint=hint)


MAP_COLUMNS = ["id", "input", "suggested", "exercises_sections"]


def mapping_frame(ts: TransferSet, document_text: str) -> pd.DataFrame:
    """One row per case for mapping it to the original's sections: the sections it names now (in
    the original's own words where they match one) and, as a hint, the sections it shares most words with."""
    rows = []
    for c in ts.cases:
        named, _ = sets.canonical_sections(document_text, c.exercises_sections)
        rows.append(
            {
                "id": c.id,
                "input": " ".join(c.input.split())[:160],
                "suggested": ", ".join(sets.suggest_sections(document_text, c.input)),
                "exercises_sections": named,
            }
        )
    return pd.DataFrame(rows, columns=MAP_COLUMNS).astype(object)


def apply_mapping(ts: TransferSet, df: pd.DataFrame) -> TransferSet:
    """The set with each case's sections as the mapping table says: an edit like any other (the
    cases changed are user-modified, and a confirmed set is no longer confirmed)."""
    chosen = {}
    for rec in df.to_dict("records"):
        secs = rec.get("exercises_sections")
        chosen[str(rec["id"])] = [str(s) for s in secs] if isinstance(secs, (list, tuple)) else []
    cases = [
        c.model_copy(update={"exercises_sections": chosen[c.id]}) if c.id in chosen else c for c in ts.cases
    ]
    return sets.edit(ts, cases)
