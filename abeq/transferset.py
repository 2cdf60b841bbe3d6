"""Transfer sets: parsing with clear errors, the frozen hash, confirmation and coverage."""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from pydantic import ValidationError

from .documents import (check_document_text, first_rule, normalize_newlines, read_text_file, section_texts,
                        sections as doc_sections)
from .errors import InputError, ThinSetError, json_problem
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


_SHAPE_HINT = ('Write {"cases": [...]} (or a list of cases), each case an object like '
               '{"id": "happy-1", "type": "happy", "input": "..."}; see SPEC §7.')


def from_obj(obj: Any, path: str = "<transfer set>", labels: Optional[list[str]] = None) -> TransferSet:
    """Validate a parsed transfer set, naming the file, case and field of the first problem.

    `labels` names each raw case where the user will look for it ("row 3" in a CSV, "line 4" in
    JSONL); without it cases are counted from 1.
    """
    if isinstance(obj, list):
        obj = {"cases": obj}
    if not isinstance(obj, dict):
        raise InputError("a transfer set must be an object with a 'cases' list", path=path,
                         hint=_SHAPE_HINT)
    raw_cases = obj.get("cases")
    if not isinstance(raw_cases, list):
        raise InputError("missing the 'cases' list", path=path, hint="See SPEC §7 for the shape.")
    if not raw_cases:
        raise InputError("the transfer set has no cases", path=path, hint="Add cases or draft them with `abeq draft-set`.")
    cases, seen = [], {}
    for i, raw in enumerate(raw_cases):
        if not isinstance(raw, dict):
            raise InputError(f"{_case_label(i, raw, labels)} is not an object (it is a {type(raw).__name__})",
                             path=path, hint=_SHAPE_HINT)
        try:
            case = Case.model_validate(raw)
        except ValidationError as e:
            raise InputError(f"{_case_label(i, raw, labels)}: {_fmt_validation(e)}", path=path,
                             hint=f"Case types are {', '.join(CASE_TYPES)}; 'id' and 'input' are required; "
                                  f"a case's fields are {', '.join(Case.model_fields)}.") from None
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
        raise InputError(f"transfer set: {_fmt_validation(e)}", path=path,
                         hint=f"A transfer set's fields are {', '.join(TransferSet.model_fields)}; "
                              "fix or remove the one named.") from None


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


def _open_quote_line(text: str, start: int) -> int:
    """The line where the quote left open at the end of the file opened, reading from line `start`
    (the first line of the record the csv reader could not finish)."""
    chars = "\n".join(text.split("\n")[start - 1:])
    line, quoted, field_start, opened, i = start, False, True, start, 0
    while i < len(chars):
        ch = chars[i]
        if quoted and ch == '"':
            if chars[i + 1:i + 2] == '"':
                i += 1  # "" is a quote inside the cell
            else:
                quoted = False
        elif not quoted and ch == '"' and field_start:
            quoted, opened = True, line
        field_start = not quoted and ch in ",\n"
        line += ch == "\n"
        i += 1
    return opened


def _csv_records(text: str, path: str):
    """(row, first line, cells) for each non-blank record. Strict, because a lenient reader lets a
    quote left open swallow the rows after it into one cell and the set silently loses cases."""
    reader = csv.reader(io.StringIO(text), strict=True)
    row = 0
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            where = f"row {row + 1} (line {start})"
            if "end of data" in str(e):
                opened = _open_quote_line(text, start)
                raise InputError(f"{where}: the quote opened at line {opened} is never closed; the file ends inside it",
                                 path=path, hint='Close the quoted cell with a " where it ends; inside a quoted cell '
                                                 'write a quote as "".') from None
            raise InputError(f"{where}: {e} (at line {reader.line_num})", path=path,
                             hint='Inside a quoted cell write a quote as ""; check that every quoted cell from line '
                                  f'{start} on is closed where it ends.') from None
        if cells:
            row += 1
            yield row, start, cells


def _swallowed_row(cell: str, header: list[str]) -> Optional[str]:
    """A line inside a multi-line cell that reads as a row of its own: a closing quote is missing."""
    if "\n" not in cell or "id" not in header or "type" not in header:
        return None
    i, t = header.index("id"), header.index("type")
    for line in cell.split("\n")[1:]:
        cells = next(csv.reader([line]), [])
        if max(i, t) < len(cells) <= len(header) and cells[i].strip() and cells[t].strip() in CASE_TYPES:
            return line
    return None


_CSV_TRIMMED = ("id", "type", "status", "exercises_sections", "expectations")


def _parse_csv_rows(text: str, path: str) -> tuple[list[dict], list[str]]:
    records = _csv_records(text, path)
    fieldnames = next(records, (0, 0, []))[2]
    if "input" not in fieldnames:
        raise InputError("CSV needs a header row with at least 'id', 'type' and 'input' columns", path=path,
                         hint="Make the first row the column names, e.g. id,type,input,exercises_sections.")
    repeated = [c for c in dict.fromkeys(fieldnames) if c and fieldnames.count(c) > 1]
    if repeated:  # a DictReader keeps the last of them and drops the rest without a word
        c = repeated[0]
        cols = " and ".join(str(i + 1) for i, f in enumerate(fieldnames) if f == c)
        raise InputError(f"row 1 (the header) has column '{c}' more than once (columns {cols})", path=path,
                         hint="Keep one column of each name: delete or rename the others.")
    unknown = [c for c in fieldnames if c and c not in Case.model_fields]
    if unknown:  # a column, not a row: say so once, in the header's terms
        raise InputError(f"row 1 (the header) has unknown column(s): {', '.join(unknown)}", path=path,
                         hint="Columns are " + ", ".join(Case.model_fields) + ".")
    rows, labels = [], []
    for n, start, cells in records:  # spreadsheet numbering: the header is row 1
        if len(cells) > len(fieldnames):
            raise InputError(f"row {n} has more cells than the header", path=path,
                             hint='Put a cell that contains a comma in quotes ("like, this"), or add the '
                                  'missing column to the header.')
        for col, cell in zip(fieldnames, cells):
            swallowed = _swallowed_row(cell, fieldnames)
            if swallowed is not None:
                raise InputError(f"row {n} (line {start}): the quoted '{col}' cell runs on over a line that reads "
                                 f"as a row of its own ({swallowed[:60]!r}); a closing quote is probably missing",
                                 path=path, hint='Close the quoted cell with a " where it ends; inside a quoted '
                                                 'cell write a quote as "".')
        # names and keywords are trimmed; text (input, rationale, gate responses) is kept exactly as written
        case: dict = {k: (cells[i] if i < len(cells) else "") for i, k in enumerate(fieldnames) if k}
        case.update({k: case[k].strip() for k in _CSV_TRIMMED if k in case})
        secs = case.pop("exercises_sections", "")
        case["exercises_sections"] = _list_cell(secs, lambda c: c.replace("|", ";").split(";"))
        if "expectations" in case:
            # one expectation per line of the cell (they are sentences and may contain ';')
            # ("\n" only: splitlines() would also cut an expectation at U+2028, \x0c...)
            case["expectations"] = _list_cell(case.pop("expectations"), lambda c: c.split("\n"))
        gates = case.pop("gate_responses", "")
        if gates.strip():
            try:
                case["gate_responses"] = json.loads(gates)
            except json.JSONDecodeError as e:
                raise InputError(f"row {n}: gate_responses is not valid JSON (column {e.colno}: {json_problem(e, position=False)})",
                                 path=path, hint='Write a JSON list, e.g. [{"pattern": "confirm", "response": "yes"}].'
                                 ) from None
        for optional in ("status", "rationale"):
            if not case.get(optional, "").strip():
                case.pop(optional, None)
        rows.append(case)
        labels.append(f"row {n}")
    return rows, labels


_DUPLICATE_HINT = "Only one value can count: keep one of the two and delete or rename the other."


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key, self.pos = key, None


def _unique_pairs(pairs: list) -> dict:
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise _DuplicateKey(k)
        seen.add(k)
    return dict(pairs)


def _duplicate_at(text: str) -> _DuplicateKey:
    """The first repeated key and where its object starts. Only on the error path: the pure-Python
    decoder is slow, but unlike the C one it lets us see where each object begins."""
    dec = json.JSONDecoder(object_pairs_hook=_unique_pairs)

    def parse_object(s_and_end, *args):
        try:
            return json.decoder.JSONObject(s_and_end, *args)
        except _DuplicateKey as e:
            e.pos = s_and_end[1] - 1 if e.pos is None else e.pos  # the innermost object is the one
            raise

    dec.parse_object = parse_object
    dec.scan_once = json.scanner.py_make_scanner(dec)
    try:
        dec.decode(text)
    except _DuplicateKey as e:
        return e
    raise AssertionError("no duplicate key found on the second pass")


def _load_json(text: str, path: str, line: Optional[int] = None) -> Any:
    """json.loads, refusing a repeated key (json would keep the last one without a word)."""
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except _DuplicateKey:
        dup = _duplicate_at(text)
        ln = text.count("\n", 0, dup.pos) + 1
        col = dup.pos - (text.rfind("\n", 0, dup.pos) + 1) + 1
        where = f"line {line}, column {col}" if line else f"line {ln}, column {col}"
        raise InputError(f"key '{dup.key}' appears twice in the object at {where}", path=path,
                         hint=_DUPLICATE_HINT) from None


@functools.lru_cache(maxsize=1)
def _yaml_loader():
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        """safe_load, refusing a key repeated in one mapping (YAML would keep the last one)."""

        def construct_mapping(self, node, deep=False):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *defaults` may be overridden by the mapping's own keys
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:
                    continue  # an unhashable key: SafeLoader reports it
                if first is not key_node:
                    raise _yaml_duplicate(key, first, key_node)
            return super().construct_mapping(node, deep)

    return UniqueKeyLoader


def _yaml_duplicate(key: Any, first: Any, again: Any) -> Exception:
    import yaml

    err = yaml.constructor.ConstructorError(None, None, f"key '{key}'", again.start_mark)
    err.first_line = first.start_mark.line + 1
    return err


def parse_text(text: str, fmt: str, path: str = "<transfer set>") -> Any:
    """Parse transfer-set text in json, yaml, csv or jsonl into plain data."""
    return parse_located(text, fmt, path)[0]


def parse_located(text: str, fmt: str, path: str = "<transfer set>") -> tuple[Any, Optional[list[str]]]:
    """Like parse_text, plus where each case came from ("row 3", "line 4") for CSV and JSONL."""
    try:
        data, labels = _parse_located(text, fmt, path)
    except RecursionError:
        raise _too_deep(path) from None
    if fmt != "csv":
        _check_shape(data, path)
    return data, labels


MAX_DEPTH = 100  # a transfer set is ~5 levels deep; promptfoo vars may hold some nested JSON
MAX_VALUES = 2_000_000  # what the data holds once YAML aliases are expanded (JSON/JSONL cannot reach it in 5 MB)


def _too_deep(path: str) -> InputError:
    return InputError(f"the data is nested more than {MAX_DEPTH} levels deep", path=path,
                      hint="A transfer set is a list of flat cases; check for brackets or indentation that never close.")


def _check_shape(data: Any, path: str) -> None:
    """Refuse what later steps cannot handle without a traceback: nesting deeper than MAX_DEPTH, a
    YAML structure that contains itself (an alias to an enclosing node), or aliases that expand
    past MAX_VALUES values. Iterative, and each shared node is measured once."""
    done: dict[int, tuple[int, int]] = {}  # id -> (depth, values) of a finished container
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, finished = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        key = id(node)
        kids = [k for k in (node.values() if isinstance(node, dict) else node) if isinstance(k, (dict, list))]
        if finished:
            open_.discard(key)
            depth = 1 + max((done[id(k)][0] for k in kids), default=0)
            values = len(node) + sum(done[id(k)][1] for k in kids)
            if depth > MAX_DEPTH:
                raise _too_deep(path)
            if values > MAX_VALUES:
                raise InputError(f"the data expands to more than {MAX_VALUES:,} values (YAML aliases repeating "
                                 "one another?)", path=path, hint="Write the cases out instead of nesting aliases.")
            done[key] = (depth, values)
            continue
        if key in done:
            continue
        if key in open_:
            raise InputError("the data contains itself (a YAML alias refers to a node that encloses it)",
                             path=path, hint="Replace the *alias with the values it should stand for.")
        if len(open_) >= MAX_DEPTH:
            raise _too_deep(path)
        open_.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in done)


def _parse_located(text: str, fmt: str, path: str) -> tuple[Any, Optional[list[str]]]:
    try:
        if fmt == "json":
            return _load_json(text, path), None
        if fmt == "jsonl":
            out, labels = [], []
            # "\n" only: str.splitlines() also breaks at U+2028, U+0085, \x0c..., which JSON keeps raw in strings
            for n, line in enumerate(text.split("\n"), start=1):
                line = line.removesuffix("\r")
                if line.strip():
                    try:
                        out.append(_load_json(line, path, line=n))
                    except json.JSONDecodeError as e:
                        raise InputError(f"line {n} is not valid JSON (column {e.colno}: {json_problem(e, position=False)})",
                                         path=path, hint="Each line of a JSONL file is one whole JSON object; a "
                                                         "string cannot run onto the next line (write \\n inside it)."
                                         ) from None
                    labels.append(f"line {n}")
            return out, labels
        if fmt == "yaml":
            import yaml

            try:
                return yaml.load(text, Loader=_yaml_loader()), None
            except yaml.YAMLError as e:
                mark = getattr(e, "problem_mark", None)
                where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
                if hasattr(e, "first_line"):
                    raise InputError(f"{e.problem}{where} repeats the one at line {e.first_line} in the same mapping",
                                     path=path, hint=_DUPLICATE_HINT) from None
                raise InputError(f"malformed YAML{where}: {getattr(e, 'problem', e)}", path=path,
                                 hint="Fix the YAML there: check the indentation, and quote a value that contains "
                                      "': ' or ' #' or starts with a quote, '[' or '{'.") from None
        if fmt == "csv":
            return _parse_csv_rows(text, path)
    except json.JSONDecodeError as e:
        raise InputError(f"malformed JSON at line {e.lineno}, column {e.colno}: {json_problem(e, position=False)}", path=path,
                         hint="Fix the JSON syntax (a validator or `python -m json.tool` shows where).") from None
    raise InputError(f"unknown transfer-set format '{fmt}'", path=path, hint="Use .json, .yaml, .csv or .jsonl.")


def format_of(path: str | Path) -> str:
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"yml": "yaml", "ndjson": "jsonl"}.get(suffix, suffix or "json")


def load(path: str | Path) -> TransferSet:
    """Read a transfer set file (JSON, YAML, CSV or JSONL by its extension)."""
    p = str(path)
    return load_text(read_text_file(p, what="transfer set", max_bytes=MAX_SET_BYTES), p)


def load_text(text: str, name: str) -> TransferSet:
    """A transfer set from text that arrived without a path (an upload): the checks `load` makes."""
    check_document_text(text, name, what="transfer set", max_bytes=MAX_SET_BYTES, document=False)
    text = normalize_newlines(text)
    data, labels = parse_located(text, format_of(name), name)
    return from_obj(data, name, labels)


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
                 "document_hash": document_hash, "confirmed_hash": set_hash(ts)}
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
        new = new.model_copy(update=UNCONFIRMED)
    return new


UNCONFIRMED = {"user_confirmed": False, "confirmation_timestamp": None, "confirmed_hash": None}


def confirmation_problem(ts: TransferSet, original_hash: Optional[str] = None) -> str:
    """Why this set cannot count as confirmed for this original ("" when it can).

    A set counts only as a person confirmed it: its cases still hash to what was confirmed (so a
    file edited by hand afterwards, or marked confirmed by hand, is not), for the same original.
    """
    if not ts.user_confirmed:
        return "the transfer set is not confirmed"
    if not ts.confirmed_hash:
        return "the transfer set is marked confirmed but carries no confirmation hash (it was not confirmed by abeq)"
    if ts.confirmed_hash != set_hash(ts):
        return "the transfer set's cases changed after it was confirmed"
    if original_hash and not ts.document_hash:
        return "the transfer set is marked confirmed but names no original (its document_hash is empty)"
    if original_hash and ts.document_hash != original_hash:
        return "the transfer set was confirmed for a different version of the original"
    return ""


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
        bodies = dict(section_texts(document_text))
        missing = [f"{s} (untested: “{rule}”)" if (rule := first_rule(bodies.get(s, ""))) else s
                   for i, s in enumerate(identified) if i not in covered_idx]
        warnings.append(f"coverage {pct:g}% is below {COVERAGE_WARN * 100:g}%; no case exercises: "
                        + "; ".join(missing) + " — the behaviour those sections induce is untested")
    for s in unknown:
        # a title the original uses under several parents is named with its parent: say which
        named = [t for t in identified if _norm(t.rsplit(" › ", 1)[-1]) == _norm(s)]
        warnings.append(f"a case names section '{s}', which the original does not have"
                        + (f" (it has {' and '.join(repr(t) for t in named)})" if named else ""))
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
