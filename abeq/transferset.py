"""Transfer sets: parsing with clear errors, the frozen hash, confirmation and coverage."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from pydantic import ValidationError

from .documents import read_text_file, sections as doc_sections
from .errors import InputError, ThinSetError
from .schemas import CASE_TYPES, Case, Coverage, TransferSet

MAX_SET_BYTES = 5_000_000
MIN_CASES = 5
COVERAGE_WARN = 0.70


def _fmt_validation(e: ValidationError) -> str:
    parts = []
    for err in e.errors(include_url=False)[:3]:
        loc = ".".join(str(x) for x in err["loc"])
        parts.append(f"{loc}: {err['msg']}")
    more = f" (+{len(e.errors()) - 3} more)" if len(e.errors()) > 3 else ""
    return "; ".join(parts) + more


def _case_label(i: int, raw: Any, labels: Optional[list[str]] = None) -> str:
    cid = raw.get("id") if isinstance(raw, dict) else None
    where = labels[i] if labels and i < len(labels) else f"case {i + 1}"
    return where + (f" (id '{cid}')" if cid else "")


def from_obj(obj: Any, path: str = "<transfer set>", labels: Optional[list[str]] = None) -> TransferSet:
    """Validate a parsed transfer set, naming the file, case and field of the first problem.

    `labels` names each raw case where the user will look for it ("row 3" in a CSV, "line 4" in
    JSONL); without it cases are counted from 1.
    """
    if isinstance(obj, list):
        obj = {"cases": obj}
    if not isinstance(obj, dict):
        raise InputError("a transfer set must be an object with a 'cases' list", path=path)
    raw_cases = obj.get("cases")
    if not isinstance(raw_cases, list):
        raise InputError("missing the 'cases' list", path=path, hint="See SPEC §7 for the shape.")
    if not raw_cases:
        raise InputError("the transfer set has no cases", path=path, hint="Add cases or draft them with `abeq draft-set`.")
    cases, seen = [], {}
    for i, raw in enumerate(raw_cases):
        if not isinstance(raw, dict):
            raise InputError(f"{_case_label(i, raw, labels)} is not an object", path=path)
        try:
            case = Case.model_validate(raw)
        except ValidationError as e:
            raise InputError(f"{_case_label(i, raw, labels)}: {_fmt_validation(e)}", path=path,
                             hint=f"Case types are {', '.join(CASE_TYPES)}; 'id' and 'input' are required.") from None
        if case.id in seen:
            first, again = (_case_label(j, {}, labels) for j in (seen[case.id], i))
            raise InputError(f"duplicate case id '{case.id}' ({first} and {again})", path=path,
                             hint="Give every case a unique id.")
        seen[case.id] = i
        cases.append(case)
    rest = {k: v for k, v in obj.items() if k != "cases"}
    try:
        return TransferSet.model_validate({**rest, "cases": [c.model_dump() for c in cases]})
    except ValidationError as e:
        raise InputError(f"transfer set: {_fmt_validation(e)}", path=path) from None


def _list_cell(cell: str, split) -> list[str]:
    """A list in one CSV cell: a JSON list when it is one, else split the plain text."""
    cell = cell.strip()
    if cell.startswith("["):
        try:
            val = json.loads(cell)
            if isinstance(val, list):
                return [str(x).strip() for x in val if str(x).strip()]
        except json.JSONDecodeError:
            pass
    return [x.strip() for x in split(cell) if x.strip()]


def _parse_csv_rows(text: str, path: str) -> tuple[list[dict], list[str]]:
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "input" not in reader.fieldnames:
        raise InputError("CSV needs a header row with at least 'id', 'type' and 'input' columns", path=path)
    unknown = [c for c in reader.fieldnames if c and c not in Case.model_fields]
    if unknown:  # a column, not a row: say so once, in the header's terms
        raise InputError(f"row 1 (the header) has unknown column(s): {', '.join(unknown)}", path=path,
                         hint="Columns are " + ", ".join(Case.model_fields) + ".")
    rows, labels = [], []
    for n, row in enumerate(reader, start=2):  # spreadsheet numbering: the header is row 1
        if None in row:
            raise InputError(f"row {n} has more cells than the header", path=path)
        case: dict = {k: (v or "").strip() for k, v in row.items() if k}
        secs = case.pop("exercises_sections", "")
        case["exercises_sections"] = _list_cell(secs, lambda c: c.replace("|", ";").split(";"))
        if "expectations" in case:
            # one expectation per line of the cell (they are sentences and may contain ';')
            case["expectations"] = _list_cell(case.pop("expectations"), str.splitlines)
        gates = case.pop("gate_responses", "")
        if gates:
            try:
                case["gate_responses"] = json.loads(gates)
            except json.JSONDecodeError as e:
                raise InputError(f"row {n}: gate_responses is not valid JSON ({e.msg})", path=path) from None
        for optional in ("status", "rationale"):
            if not case.get(optional):
                case.pop(optional, None)
        rows.append(case)
        labels.append(f"row {n}")
    return rows, labels


def parse_text(text: str, fmt: str, path: str = "<transfer set>") -> Any:
    """Parse transfer-set text in json, yaml, csv or jsonl into plain data."""
    return parse_located(text, fmt, path)[0]


def parse_located(text: str, fmt: str, path: str = "<transfer set>") -> tuple[Any, Optional[list[str]]]:
    """Like parse_text, plus where each case came from ("row 3", "line 4") for CSV and JSONL."""
    try:
        if fmt == "json":
            return json.loads(text), None
        if fmt == "jsonl":
            out, labels = [], []
            for n, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        raise InputError(f"line {n} is not valid JSON ({e.msg})", path=path) from None
                    labels.append(f"line {n}")
            return out, labels
        if fmt == "yaml":
            import yaml

            try:
                return yaml.safe_load(text), None
            except yaml.YAMLError as e:
                mark = getattr(e, "problem_mark", None)
                where = f" at line {mark.line + 1}" if mark else ""
                raise InputError(f"malformed YAML{where}: {getattr(e, 'problem', e)}", path=path) from None
        if fmt == "csv":
            return _parse_csv_rows(text, path)
    except json.JSONDecodeError as e:
        raise InputError(f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}", path=path,
                         hint="Fix the JSON syntax (a validator or `python -m json.tool` shows where).") from None
    raise InputError(f"unknown transfer-set format '{fmt}'", path=path, hint="Use .json, .yaml, .csv or .jsonl.")


def format_of(path: str | Path) -> str:
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"yml": "yaml", "ndjson": "jsonl"}.get(suffix, suffix or "json")


def load(path: str | Path) -> TransferSet:
    """Read a transfer set file (JSON, YAML, CSV or JSONL by its extension)."""
    p = str(path)
    text = read_text_file(p, what="transfer set", max_bytes=MAX_SET_BYTES)
    data, labels = parse_located(text, format_of(p), p)
    return from_obj(data, p, labels)


def dump(ts: TransferSet) -> str:
    return ts.model_dump_json(indent=2)


# ---------------------------------------------------------------- hashing and confirmation
def set_hash(ts: TransferSet) -> str:
    """Hash of what the runner and judge see of the set; status and confirmation are excluded,
    so confirming does not change it and any edit to a case does."""
    cases = [c.model_dump(include={"id", "type", "input", "exercises_sections", "gate_responses"}) for c in ts.cases]
    blob = json.dumps(cases, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def confirm(ts: TransferSet, document_hash: str, *, thin_accepted: Optional[bool] = None) -> TransferSet:
    """A person accepted the set: freeze it (every case confirmed) and stamp the time."""
    cases = [c.model_copy(update={"status": "confirmed"}) for c in ts.cases]
    upd: dict = {"cases": cases, "user_confirmed": True, "confirmation_timestamp": now_iso(),
                 "document_hash": document_hash}
    if thin_accepted is not None:
        upd["thin_accepted"] = thin_accepted
    return ts.model_copy(update=upd)


def edit(ts: TransferSet, cases: list[Case]) -> TransferSet:
    """Replace the cases: any change to a confirmed set makes a new, unconfirmed version.

    Provenance: a new id is user-added, a changed case user-modified, an unchanged one keeps
    its status.
    """
    old = {c.id: c for c in ts.cases}
    marked = []
    for c in cases:
        prev = old.get(c.id)
        if prev is None:
            c = c.model_copy(update={"status": "user-added"})
        elif c.model_dump(exclude={"status"}) != prev.model_dump(exclude={"status"}):
            c = c.model_copy(update={"status": "user-modified"})
        else:
            c = c.model_copy(update={"status": prev.status})
        marked.append(c)
    new = ts.model_copy(update={"cases": marked})
    # Any change un-confirms, even one the hash ignores (expectations, rationale): the person
    # accepted that exact set.
    before = [c.model_dump(exclude={"status"}) for c in ts.cases]
    after = [c.model_dump(exclude={"status"}) for c in cases]
    if after != before:
        new = new.model_copy(update={"user_confirmed": False, "confirmation_timestamp": None})
    return new


# ---------------------------------------------------------------- coverage
@dataclass
class CoverageReport:
    sections_identified: list[str]
    sections_covered: list[str]
    coverage_pct: float
    per_type: dict[str, int]
    warnings: list[str] = field(default_factory=list)
    thin: bool = False
    runnable: bool = True
    unknown_sections: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"sections_identified": self.sections_identified, "sections_covered": self.sections_covered,
                "coverage_pct": self.coverage_pct, "per_type": self.per_type, "warnings": self.warnings,
                "thin": self.thin, "runnable": self.runnable}

    def as_coverage(self) -> Coverage:
        return Coverage(sections_identified=self.sections_identified, sections_covered=self.sections_covered,
                        thin_coverage_warnings=self.warnings)


def _norm(s: str) -> str:
    return " ".join(s.lower().replace("#", " ").split())


def coverage(document_text: str, ts: TransferSet, *, truncated: Optional[dict[str, str]] = None,
             allow_thin: bool = False) -> CoverageReport:
    """Sections exercised by at least one case over sections identified, with warnings.

    `truncated` maps case id -> the section its gate stopped in (or "" when unknown); such a
    case covers only the sections it names up to and including that one, in document order.
    When the section is "" or not one of the original's, nothing is known about how far the
    case got, so it covers none: coverage is a claim, and an unfounded one is worse than a low one.
    """
    identified = doc_sections(document_text)
    index = {_norm(s): i for i, s in enumerate(identified)}
    covered_idx: set[int] = set()
    unknown: list[str] = []
    ids = {c.id for c in ts.cases}
    truncated = {k: v for k, v in (truncated or {}).items() if k in ids}
    for c in ts.cases:
        limit = None
        if c.id in truncated:
            limit = index.get(_norm(truncated[c.id]), -1)
        for s in c.exercises_sections:
            i = index.get(_norm(s))
            if i is None:
                if s not in unknown:
                    unknown.append(s)
                continue
            if limit is not None and i > limit:
                continue
            covered_idx.add(i)
    covered = [identified[i] for i in sorted(covered_idx)]
    ratio = len(covered) / max(1, len(identified))
    pct = round(100.0 * ratio, 1)
    per_type = {t: sum(1 for c in ts.cases if c.type == t) for t in CASE_TYPES}
    warnings = []
    if ratio < COVERAGE_WARN:  # the exact ratio: 69.96% must not round up to "70%, fine"
        missing = [s for i, s in enumerate(identified) if i not in covered_idx]
        warnings.append(f"coverage {pct:g}% is below {COVERAGE_WARN * 100:g}%; no case exercises: "
                        + "; ".join(missing) + " — the behaviour those sections induce is untested")
    for s in unknown:
        warnings.append(f"a case names section '{s}', which the original does not have")
    for cid, sec in truncated.items():
        if _norm(sec) in index:
            warnings.append(f"case {cid} stopped at a gate in '{sec}'; sections after it are not counted")
        else:
            warnings.append(f"case {cid} stopped at a gate in " + (f"'{sec}', which the original does not have"
                            if sec else "an unknown section") + "; none of its sections are counted")
    missing_types = [t for t, n in per_type.items() if n == 0]
    thin = len(ts.cases) < MIN_CASES or bool(missing_types)
    if thin:
        why = []
        if len(ts.cases) < MIN_CASES:
            why.append(f"{len(ts.cases)} case(s), the minimum is {MIN_CASES}")
        if missing_types:
            why.append("no case of type " + ", ".join(missing_types))
        warnings.append("thin transfer set: " + "; ".join(why))
    return CoverageReport(identified, covered, pct, per_type, warnings, thin,
                          runnable=(not thin) or allow_thin or ts.thin_accepted, unknown_sections=unknown)


def require_runnable(document_text: str, ts: TransferSet, allow_thin: bool, path: str = "<transfer set>") -> CoverageReport:
    cov = coverage(document_text, ts, allow_thin=allow_thin)
    if not cov.runnable:
        raise ThinSetError(next(w for w in cov.warnings if w.startswith("thin")), path=path,
                           hint="Add cases, or accept a thin set explicitly (--allow-thin; the report records it).")
    return cov
