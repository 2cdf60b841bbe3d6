"""Transfer sets from files and text: the shape checked case by case, each problem named by file,
case and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..documents import check_document_text, normalize_newlines, read_text_file
from ..errors import InputError
from ..schemas import Case, TransferSet
from ..vocab import CASE_TYPES
from .formats import parse_located
from .workspace import resolve

MAX_SET_BYTES = 5_000_000


def _fmt_validation(e: ValidationError) -> str:
    parts = []
    for err in e.errors(include_url=False)[:3]:
        loc = ".".join(str(x) for x in err["loc"])
        parts.append(f"{loc}: {err['msg']}")
    more = f" (+{len(e.errors()) - 3} more)" if len(e.errors()) > 3 else ""
    return "; ".join(parts) + more


def _case_label(i: int, raw: Any, labels: list[str] | None = None) -> str:
    cid = raw.get("id") if isinstance(raw, dict) else None
    where = labels[i] if labels and i < len(labels) else f"case {i + 1}"
    return where + (f" (id '{cid}')" if cid else "")


_SHAPE_HINT = (
    'Write {"cases": [...]} (or a list of cases), each case an object like '
    '{"id": "happy-1", "type": "happy", "input": "..."}; docs/guides/transfer-sets.md lists '
    "every field (or run `abeq check-set --help`)."
)


def from_obj(obj: Any, path: str = "<transfer set>", labels: list[str] | None = None) -> TransferSet:
    """Validate a parsed transfer set, naming the file, case and field of the first problem.

    `labels` names each raw case where the user will look for it ("row 3" in a CSV, "line 4" in
    JSONL); without it cases are counted from 1.
    """
    if isinstance(obj, list):
        obj = {"cases": obj}
    if not isinstance(obj, dict):
        raise InputError("a transfer set must be an object with a 'cases' list", path=path, hint=_SHAPE_HINT)
    raw_cases = obj.get("cases")
    if not isinstance(raw_cases, list):
        raise InputError("missing the 'cases' list", path=path, hint=_SHAPE_HINT)
    if not raw_cases:
        raise InputError(
            "the transfer set has no cases", path=path, hint="Add cases or draft them with `abeq draft-set`."
        )
    cases: list[Case] = []
    seen: dict[str, int] = {}  # case id -> its index
    for i, raw in enumerate(raw_cases):
        if not isinstance(raw, dict):
            raise InputError(
                f"{_case_label(i, raw, labels)} is not an object (it is a {type(raw).__name__})",
                path=path,
                hint=_SHAPE_HINT,
            )
        try:
            case = Case.model_validate(raw)
        except ValidationError as e:
            raise InputError(
                f"{_case_label(i, raw, labels)}: {_fmt_validation(e)}",
                path=path,
                hint=f"Case types are {', '.join(CASE_TYPES)}; 'id' and 'input' are required; "
                f"a case's fields are {', '.join(Case.model_fields)}.",
            ) from None
        if case.id in seen:
            first, again = (_case_label(j, {}, labels) for j in (seen[case.id], i))
            raise InputError(
                f"duplicate case id '{case.id}' ({first} and {again})",
                path=path,
                hint="Give every case a unique id.",
            )
        seen[case.id] = i
        cases.append(case)
    rest = {k: v for k, v in obj.items() if k != "cases"}
    if "document_hash" in rest and rest["document_hash"] is None:
        rest["document_hash"] = ""  # written by hand as null: not bound to an original yet
    try:
        return TransferSet.model_validate({**rest, "cases": [c.model_dump() for c in cases]})
    except ValidationError as e:
        raise InputError(
            f"transfer set: {_fmt_validation(e)}",
            path=path,
            hint=f"A transfer set's fields are {', '.join(TransferSet.model_fields)}; "
            "fix or remove the one named.",
        ) from None


def format_of(path: str | Path) -> str:
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"yml": "yaml", "ndjson": "jsonl"}.get(suffix, suffix or "json")


def load(path: str | Path) -> TransferSet:
    """Read a transfer set file (JSON, YAML, CSV or JSONL by its extension); `git:REV:PATH` reads it
    at a revision, with its folder (abeq.documents.git_source)."""
    from ..documents.git_source import checkout, is_git

    p = str(path)
    if is_git(p):
        with checkout(p, "set", MAX_SET_BYTES) as co:
            return load(co.local)
    text = read_text_file(p, what="transfer set", max_bytes=MAX_SET_BYTES)
    return _parse(text, p, base=Path(p).resolve().parent)


def load_text(text: str, name: str) -> TransferSet:
    """A transfer set from text that arrived without a path (an upload): the checks `load` makes
    (a case's workspace folder cannot be found without the file's location: refused)."""
    check_document_text(text, name, what="transfer set", max_bytes=MAX_SET_BYTES, document=False)
    return _parse(normalize_newlines(text), name, base=None)


def _parse(text: str, name: str, base: Path | None) -> TransferSet:
    data, labels = parse_located(text, format_of(name), name, aliases=False)
    return resolve(from_obj(data, name, labels), base, name)


def dump(ts: TransferSet) -> str:
    # a set nobody confirmed is written as before the field existed
    return ts.model_dump_json(indent=2, exclude={"confirmed_by"} if ts.confirmed_by is None else None)
