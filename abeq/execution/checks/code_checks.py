"""promptfoo's code-checkable assertion types, with its semantics: exact and case-sensitive unless
i-, nothing trimmed, *-any/*-all take a list or a comma-separated string, regex without flags,
`not-` (applied in abeq.execution.checks.checks) inverts. Each returns what it found, as the evidence."""

from __future__ import annotations

import csv
import json
import re
from typing import Any

CODE_TYPES = (
    "contains",
    "icontains",
    "contains-any",
    "contains-all",
    "icontains-any",
    "icontains-all",
    "starts-with",
    "equals",
    "regex",
    "is-json",
    "contains-json",
    "levenshtein",
    "word-count",
)

_NEEDS_VALUE = {"contains", "icontains", "starts-with", "equals", "regex", "levenshtein", "word-count"}


# ---------------------------------------------------------------- values, as promptfoo reads them
def js_string(v: Any) -> str:
    """JavaScript's String(v), which promptfoo applies to a number or boolean value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return v if isinstance(v, str) else (json.dumps(v, ensure_ascii=False) if isinstance(v, dict) else str(v))


def value_list(v: Any) -> list[str]:
    """The items of a *-any/*-all value: a list, or one comma-separated string ("quoted, commas" kept)."""
    if isinstance(v, list):
        return [js_string(x) for x in v]
    if v is None:
        return []
    row = next(csv.reader([js_string(v)], skipinitialspace=True), [])
    return [x.strip() for x in row if x.strip()]


def js_regex(pattern: str) -> re.Pattern:
    """A JavaScript pattern compiled for Python: named groups spelled the Python way; no flags, as
    promptfoo (case-sensitive, not multiline)."""
    p = re.sub(r"\(\?<([A-Za-z_]\w*)>", r"(?P<\1>", pattern)
    p = re.sub(r"\\k<([A-Za-z_]\w*)>", r"(?P=\1)", p)
    return re.compile(p)


# a JSON Schema in a check is small; what it expands to (YAML aliases) is bounded far below a set's
# bounds, since jsonschema walks every expanded node, each time the check is linted or run
MAX_SCHEMA_VALUES = 20_000
MAX_SCHEMA_CHARS = 1_000_000


def _schema(value: Any) -> dict | None:
    """is-json / contains-json: an optional JSON Schema, given as an object or as JSON/YAML text
    (read as a set is: YAML 1.2's safe rules, nesting and expanded size bounded)."""
    if value in (None, ""):
        return None
    from ...sets.formats import check_shape, parse_text

    if isinstance(value, str):
        if len(value) > MAX_SCHEMA_CHARS:
            raise ValueError(f"the schema is over {MAX_SCHEMA_CHARS:,} characters")
        value = parse_text(value, "yaml", "the schema")
    if not isinstance(value, dict):
        raise ValueError("the schema must be a JSON object")
    check_shape(value, "the schema", MAX_SCHEMA_VALUES, MAX_SCHEMA_CHARS)
    from jsonschema.validators import Draft7Validator, validator_for

    validator_for(value, default=Draft7Validator).check_schema(value)
    return value


def _validates(instance: Any, schema: dict | None) -> str:
    if schema is None:
        return ""
    from jsonschema.validators import Draft7Validator, validator_for

    err = next(iter(validator_for(schema, default=Draft7Validator)(schema).iter_errors(instance)), None)
    return "" if err is None else f"fails the schema: {err.message[:120]}"


def value_problem(t: str, value: Any) -> str:
    """Why a code check of base type t cannot be evaluated with this value ("" when it can)."""
    try:
        if t in _NEEDS_VALUE and (value is None or value == ""):
            return "it needs a value"
        if t.endswith(("-any", "-all")) and not value_list(value):
            return "it needs a list of values (or a comma-separated string)"
        if t == "regex":
            js_regex(js_string(value))
        elif t in ("is-json", "contains-json"):
            _schema(value)
        elif t == "word-count":
            _word_bounds(value)
    except Exception as e:  # re.error, yaml and jsonschema errors: all a user's to fix
        return str(e).splitlines()[0][:160]
    return ""


# ---------------------------------------------------------------- running a code check
def _snippet(text: str, start: int, end: int, pad: int = 30) -> str:
    s = text[max(0, start - pad) : end + pad].replace("\n", " ")
    return ("…" if start > pad else "") + s + ("…" if end + pad < len(text) else "")


def _word_bounds(v: Any) -> tuple[int, int]:
    if isinstance(v, dict):
        lo, hi = v.get("min", 0), v.get("max", 10**9)
    else:
        lo = hi = v
    if isinstance(lo, bool) or isinstance(hi, bool) or not all(isinstance(x, int) for x in (lo, hi)):
        raise ValueError("word-count takes a whole number, or {min, max}")
    return lo, hi


def _levenshtein(a: str, b: str, limit: int) -> int:
    """Edit distance, computed only within `limit` of the diagonal (limit + 1 means "more than limit")."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [limit + 1] * len(b)
        for j in range(max(1, i - limit), min(len(b), i + limit) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != b[j - 1]))
        if min(cur) > limit:
            return limit + 1
        prev = cur
    return min(prev[len(b)], limit + 1)


def json_objects(text: str) -> list:
    """The JSON objects embedded in text, left to right (promptfoo's extractJsonObjects)."""
    out, i, dec = [], 0, json.JSONDecoder()
    while (i := text.find("{", i)) != -1:
        try:
            obj, end = dec.raw_decode(text, i)
            out.append(obj)
            i = end
        except ValueError:  # not JSON here, or a number past Python's 4,300 digits
            i += 1
    return out


def _strict_equal(a: Any, b: Any) -> bool:
    """Node's isDeepStrictEqual over JSON values: true is not 1, 1 is 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def condition(t: str, value: Any, options: dict, text: str) -> tuple[bool, str]:
    """(the condition holds, what was found): before `not-` inverts it."""
    if t in ("contains", "icontains"):
        v = js_string(value)
        hay, needle = (text.lower(), v.lower()) if t == "icontains" else (text, v)
        at = hay.find(needle)
        return (True, f"found: {_snippet(text, at, at + len(v))}") if at >= 0 else (False, f"{v!r} not found")
    if t.endswith(("-any", "-all")):
        items = value_list(value)
        low = t.startswith("i")
        hay = text.lower() if low else text
        found = [x for x in items if (x.lower() if low else x) in hay]
        missing = [x for x in items if x not in found]
        if t.endswith("-any"):
            return bool(found), (f"found {found[0]!r}" if found else f"none of {items} found")
        return not missing, ("all found" if not missing else f"missing {missing}")
    if t == "starts-with":
        v = js_string(value)
        return text.startswith(v), f"starts with {text[: max(len(v), 20)]!r}"
    if t == "regex":
        m = js_regex(js_string(value)).search(text)
        return (True, f"matched: {_snippet(text, m.start(), m.end())}") if m else (False, "no match")
    if t == "equals":
        if isinstance(value, (dict, list)):
            try:
                same = _strict_equal(value, json.loads(text))
            except ValueError:  # not JSON (or a number past 4,300 digits)
                return False, "not JSON, so not equal to the expected value"
            return same, "equal" if same else "JSON, but not equal to the expected value"
        v = js_string(value)
        if text == v:
            return True, "equal"
        at = next((i for i, (x, y) in enumerate(zip(text, v)) if x != y), min(len(text), len(v)))
        return False, f"differs at character {at}: {_snippet(text, at, at + 1, 15)}"
    if t == "is-json":
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as e:
            return False, f"not JSON ({e.msg} at character {e.pos})"
        except ValueError as e:  # a number past Python's 4,300 digits
            return False, f"not JSON abeq can read ({str(e).split(':')[0]})"
        bad = _validates(parsed, _schema(value))
        return not bad, bad or "valid JSON"
    if t == "contains-json":
        found, schema = json_objects(text), _schema(value)
        ok = [o for o in found if not _validates(o, schema)]
        if ok:
            return True, f"{len(found)} JSON object(s), {len(ok)} fit"
        return False, "no JSON object" if not found else f"{len(found)} JSON object(s), none fits the schema"
    if t == "levenshtein":
        limit = int(options.get("threshold") or 5)
        d = _levenshtein(text, js_string(value), limit)
        return d <= limit, (f"distance {d}" if d <= limit else f"distance over {limit}")
    if t == "word-count":
        lo, hi = _word_bounds(value)
        n = len(text.split())
        return lo <= n <= hi, f"{n} words"
    raise ValueError(f"not a code check: {t}")
