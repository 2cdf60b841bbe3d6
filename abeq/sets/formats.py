"""Reading transfer-set text strictly: JSON and JSONL (repeated keys refused), YAML 1.2 (see yaml12;
repeated keys, self-containing aliases and alias bombs refused), CSV (quotes left open refused) —
each problem named by line, row or column, with what to do."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any

from ..errors import InputError, json_problem
from ..schemas import Case
from ..untrusted import csv_uncell
from ..vocab import CASE_TYPES
from .yaml12 import loader as yaml12_loader
from .yaml12 import loader_without_aliases


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
    chars = "\n".join(text.split("\n")[start - 1 :])
    line, quoted, field_start, opened, i = start, False, True, start, 0
    while i < len(chars):
        ch = chars[i]
        if quoted and ch == '"':
            if chars[i + 1 : i + 2] == '"':
                i += 1  # "" is a quote inside the cell
            else:
                quoted = False
        elif not quoted and ch == '"' and field_start:
            quoted, opened = True, line
        field_start = not quoted and ch in ",\n"
        line += ch == "\n"
        i += 1
    return opened


def _csv_records(text: str, path: str) -> Iterator[tuple[int, int, list[str]]]:
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
                raise InputError(
                    f"{where}: the quote opened at line {opened} is never closed; the file ends inside it",
                    path=path,
                    hint='Close the quoted cell with a " where it ends; inside a quoted cell '
                    'write a quote as "".',
                ) from None
            raise InputError(
                f"{where}: {e} (at line {reader.line_num})",
                path=path,
                hint='Inside a quoted cell write a quote as ""; check that every quoted cell from line '
                f"{start} on is closed where it ends.",
            ) from None
        if cells:
            row += 1
            yield row, start, cells


def _swallowed_row(cell: str, header: list[str]) -> str | None:
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
_JSON_CELLS = {
    "gate_responses": '[{"pattern": "confirm", "response": "yes"}]',
    "assertions": '[{"type": "contains", "value": "Fixes"}]',
    "metadata": '{"category": "billing"}',
    "files": '{"notes.md": "text of the file"}',
    "command_outputs": '[{"pattern": "git status", "output": "clean"}]',
}


def _parse_csv_rows(text: str, path: str) -> tuple[list[dict], list[str]]:
    records = _csv_records(text, path)
    fieldnames = next(records, (0, 0, []))[2]
    if "input" not in fieldnames:
        raise InputError(
            "CSV needs a header row with at least 'id', 'type' and 'input' columns",
            path=path,
            hint="Make the first row the column names, e.g. id,type,input,exercises_sections.",
        )
    repeated = [c for c in dict.fromkeys(fieldnames) if c and fieldnames.count(c) > 1]
    if repeated:  # a DictReader keeps the last of them and drops the rest without a word
        c = repeated[0]
        cols = " and ".join(str(i + 1) for i, f in enumerate(fieldnames) if f == c)
        raise InputError(
            f"row 1 (the header) has column '{c}' more than once (columns {cols})",
            path=path,
            hint="Keep one column of each name: delete or rename the others.",
        )
    unknown = [c for c in fieldnames if c and c not in Case.model_fields]
    if unknown:  # a column, not a row: say so once, in the header's terms
        raise InputError(
            f"row 1 (the header) has unknown column(s): {', '.join(unknown)}",
            path=path,
            hint="Columns are " + ", ".join(Case.model_fields) + ".",
        )
    rows, labels = [], []
    for n, start, cells in records:  # spreadsheet numbering: the header is row 1
        if len(cells) > len(fieldnames):
            raise InputError(
                f"row {n} has more cells than the header",
                path=path,
                hint='Put a cell that contains a comma in quotes ("like, this"), or add the '
                "missing column to the header.",
            )
        for col, cell in zip(fieldnames, cells):
            swallowed = _swallowed_row(cell, fieldnames)
            if swallowed is not None:
                raise InputError(
                    f"row {n} (line {start}): the quoted '{col}' cell runs on over a line that reads "
                    f"as a row of its own ({swallowed[:60]!r}); a closing quote is probably missing",
                    path=path,
                    hint='Close the quoted cell with a " where it ends; inside a quoted '
                    'cell write a quote as "".',
                )
        # names and keywords are trimmed; text (input, rationale, gate responses) is kept exactly as written
        # a ' before a formula character is how abeq's CSV export keeps a spreadsheet from running it
        case: dict = {
            k: csv_uncell(cells[i] if i < len(cells) else "") for i, k in enumerate(fieldnames) if k
        }
        case.update({k: case[k].strip() for k in _CSV_TRIMMED if k in case})
        secs = case.pop("exercises_sections", "")
        case["exercises_sections"] = _list_cell(secs, lambda c: c.replace("|", ";").split(";"))
        if "expectations" in case:
            # one expectation per line of the cell (they are sentences and may contain ';')
            # ("\n" only: splitlines() would also cut an expectation at U+2028, \x0c...)
            case["expectations"] = _list_cell(case.pop("expectations"), lambda c: c.split("\n"))
        for col, example in _JSON_CELLS.items():  # structured fields travel as JSON in one cell
            cell = case.pop(col, "")
            if cell.strip():
                try:
                    case[col] = json.loads(cell)
                except json.JSONDecodeError as e:
                    raise InputError(
                        f"row {n}: {col} is not valid JSON (column {e.colno}: "
                        f"{json_problem(e, position=False)})",
                        path=path,
                        hint=f"Write JSON, e.g. {example}.",
                    ) from None
        for optional in ("status", "rationale", "workspace"):
            if not case.get(optional, "").strip():
                case.pop(optional, None)
        rows.append(case)
        labels.append(f"row {n}")
    return rows, labels


_DUPLICATE_HINT = "Only one value can count: keep one of the two and delete or rename the other."


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key
        self.pos: int | None = None  # where the object starts: set by _duplicate_at


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
            return json.decoder.JSONObject(s_and_end, *args)  # type: ignore[attr-defined]  # not in typeshed
        except _DuplicateKey as e:
            e.pos = s_and_end[1] - 1 if e.pos is None else e.pos  # the innermost object is the one
            raise

    # the pure-Python decoder's parts, which typeshed leaves out
    dec.parse_object = parse_object  # type: ignore[attr-defined]
    dec.scan_once = json.scanner.py_make_scanner(dec)  # type: ignore[attr-defined]
    try:
        dec.decode(text)
    except _DuplicateKey as e:
        return e
    raise AssertionError("no duplicate key found on the second pass")


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_lone_surrogate(data: Any, path: str, line: int | None) -> None:
    """A JSON escape of half a character (\\ud800 without its pair) makes a string no file or
    database can hold: refused here, naming it, rather than failing wherever it is written."""
    stack = [data]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            m = _LONE_SURROGATE.search(v)
            if m:
                raise InputError(
                    f"{'line ' + str(line) + ': ' if line else ''}a string holds \\u{ord(m.group()):04x}, "
                    "half of a character (a lone UTF-16 surrogate), near "
                    f"{v[max(0, m.start() - 20) : m.start()]!r}",
                    path=path,
                    hint="Write the whole character (its pair of \\u escapes, or the character itself).",
                )
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def load_json(text: str, path: str, line: int | None = None) -> Any:
    """JSON a user gave, or an InputError naming the file: a repeated key, a number too long to
    read, half a character."""
    data = _load_json(text, path, line)
    if _ESCAPED_SURROGATE.search(text):
        _no_lone_surrogate(data, path, line)
    return data


def _load_json(text: str, path: str, line: int | None = None) -> Any:
    """json.loads, refusing a repeated key (json would keep the last one without a word)."""
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError:
        raise
    except _DuplicateKey:
        dup = _duplicate_at(text)
        pos = dup.pos or 0
        ln = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        where = f"line {line}, column {col}" if line else f"line {ln}, column {col}"
        raise InputError(
            f"key '{dup.key}' appears twice in the object at {where}", path=path, hint=_DUPLICATE_HINT
        ) from None
    except ValueError as e:  # an integer of more than 4,300 digits (Python's bound on int parsing)
        raise InputError(
            f"{'line ' + str(line) + ': ' if line else ''}a number too long to read ({str(e).split(':')[0]})",
            path=path,
            hint="Write the number as a string (in quotes), or shorten it.",
        ) from None


def parse_text(text: str, fmt: str, path: str = "<transfer set>") -> Any:
    """Parse transfer-set text in json, yaml, csv or jsonl into plain data."""
    return parse_located(text, fmt, path)[0]


def parse_located(
    text: str, fmt: str, path: str = "<transfer set>", aliases: bool = True
) -> tuple[Any, list[str] | None]:
    """Like parse_text, plus where each case came from ("row 3", "line 4") for CSV and JSONL.
    `aliases=False` refuses YAML aliases (abeq's own sets)."""
    try:
        data, labels = _parse_located(text, fmt, path, aliases)
    except RecursionError:
        raise _too_deep(path) from None
    if fmt != "csv":
        check_shape(data, path)
    return data, labels


MAX_DEPTH = 100  # a transfer set is ~5 levels deep; promptfoo vars may hold some nested JSON
# what the data holds once YAML aliases are expanded (JSON/JSONL cannot reach either in a 5 MB file):
# values, and characters of text (one 100 KB string aliased a million times is 1 value per alias but
# 100 GB for whatever writes it out)
MAX_VALUES = 2_000_000
MAX_EXPANDED_CHARS = 20_000_000


def _too_deep(path: str) -> InputError:
    return InputError(
        f"the data is nested more than {MAX_DEPTH} levels deep",
        path=path,
        hint="A transfer set is a list of flat cases; check for brackets or indentation that never close.",
    )


def check_shape(
    data: Any, path: str, max_values: int = MAX_VALUES, max_chars: int = MAX_EXPANDED_CHARS
) -> None:
    """Refuse what later steps cannot handle without a traceback: nesting deeper than MAX_DEPTH, a
    YAML structure that contains itself (an alias to an enclosing node), or aliases that expand
    past MAX_VALUES values or MAX_EXPANDED_CHARS characters of text. Iterative, and each shared node
    is measured once."""
    done: dict[int, tuple[int, int, int]] = {}  # id -> (depth, values, characters) of a finished container
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
            items = [*node.keys(), *node.values()] if isinstance(node, dict) else node
            chars = sum(done[id(k)][2] for k in kids) + sum(len(x) for x in items if isinstance(x, str))
            if depth > MAX_DEPTH:
                raise _too_deep(path)
            if values > max_values or chars > max_chars:
                what = f"{max_values:,} values" if values > max_values else f"{max_chars:,} characters"
                raise InputError(
                    f"the data expands to more than {what} (YAML aliases repeating one another?)",
                    path=path,
                    hint="Write the cases out instead of nesting aliases.",
                )
            done[key] = (depth, values, chars)
            continue
        if key in done:
            continue
        if key in open_:
            raise InputError(
                "the data contains itself (a YAML alias refers to a node that encloses it)",
                path=path,
                hint="Replace the *alias with the values it should stand for.",
            )
        if len(open_) >= MAX_DEPTH:
            raise _too_deep(path)
        open_.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in done)


def _parse_located(text: str, fmt: str, path: str, aliases: bool) -> tuple[Any, list[str] | None]:
    try:
        if fmt == "json":
            return load_json(text, path), None
        if fmt == "jsonl":
            out, labels = [], []
            # "\n" only: str.splitlines() also breaks at U+2028, U+0085, \x0c..., which JSON keeps raw in
            # strings
            for n, line in enumerate(text.split("\n"), start=1):
                line = line.removesuffix("\r")
                if line.strip():
                    try:
                        out.append(load_json(line, path, line=n))
                    except json.JSONDecodeError as e:
                        raise InputError(
                            f"line {n} is not valid JSON (column {e.colno}: "
                            f"{json_problem(e, position=False)})",
                            path=path,
                            hint="Each line of a JSONL file is one whole JSON object; a "
                            "string cannot run onto the next line (write \\n inside it).",
                        ) from None
                    labels.append(f"line {n}")
            return out, labels
        if fmt == "yaml":
            import yaml

            try:
                loader = yaml12_loader() if aliases else loader_without_aliases()
                return yaml.load(text, Loader=loader), None  # YAML 1.2: see yaml12
            except yaml.YAMLError as e:
                mark = getattr(e, "problem_mark", None)
                where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
                first_line = getattr(e, "first_line", None)  # yaml12's DuplicateKeyError
                if first_line is not None:
                    key = getattr(e, "problem", "")
                    raise InputError(
                        f"{key}{where} repeats the one at line {first_line} in the same mapping",
                        path=path,
                        hint=_DUPLICATE_HINT,
                    ) from None
                raise InputError(
                    f"malformed YAML{where}: {getattr(e, 'problem', e)}",
                    path=path,
                    hint="Fix the YAML there: check the indentation, and quote a value that contains "
                    "': ' or ' #' or starts with a quote, '[' or '{'.",
                ) from None
        if fmt == "csv":
            return _parse_csv_rows(text, path)
    except json.JSONDecodeError as e:
        raise InputError(
            f"malformed JSON at line {e.lineno}, column {e.colno}: {json_problem(e, position=False)}",
            path=path,
            hint="Fix the JSON syntax (a validator or `python -m json.tool` shows where).",
        ) from None
    raise InputError(
        f"unknown transfer-set format '{fmt}'", path=path, hint="Use .json, .yaml, .csv or .jsonl."
    )
