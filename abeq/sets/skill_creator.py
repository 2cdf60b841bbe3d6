"""skill-creator evals.json files as abeq cases (types are supplied later: see imported.py).

Per eval: `prompt` is the input (with `files` named after it: the runner gets text only);
`expectations` stay the case's expectations; `assertions` (text, or objects with a text) become
natural-language assertions (type "llm-rubric", the text as value, an id as metric, a name as
description, other keys in options); `expected_output` (a description for the person reading the
results, not a check) and every other field (`name`, `category`, `checks`, …) go to the case's
metadata, with a warning naming them. Refused: what would change the meaning — an eval without a
prompt, fields of the wrong type, and a trigger eval (`query` + `should_trigger`), which tests
whether a skill is loaded, not what it makes a model do once it is.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import InputError
from ._common import Imported, _declared_type, _kind
from .formats import parse_text

_EVAL_FIELDS = (
    "id",
    "prompt",
    "expected_output",
    "files",
    "expectations",
    "assertions",
    "case_type",
    "abeq_type",
    "type",
)
# fields some authors use for checks; kept in metadata, and the warning says how to make them run
_CHECKLIKE = {
    "check",
    "scorer",
    "must_have",
    "must_not_have",
    "must_include",
    "must_not_include",
    "expected_behavior",
    "expected_behaviour",
    "forbidden_behavior",
    "verifier",
    "criteria",
    "criterion",
    "success_criteria",
    "rubric",
}


def _checklike(field: str) -> bool:
    """A field that reads like a check, singular or plural (`checks`, `expected_behaviors`, `must_have`)."""
    k = field.lower().replace("-", "_")
    return k in _CHECKLIKE or k.removesuffix("s") in _CHECKLIKE or k.removesuffix("es") in _CHECKLIKE


_TEXT_KEYS = ("text", "assertion", "statement", "check", "expectation", "criterion", "description")
_PLACEHOLDER = re.compile(r"\{\{?\s*[A-Z][A-Z0-9_]*\s*\}?\}")
TRIGGER_HINT = (
    "A trigger eval is for skill-creator's description optimiser (it tunes the skill's `description` "
    "so Claude loads the skill for the right requests). To use its should_trigger: true queries as case "
    "inputs here, run `abeq import-set --from skill-creator FILE --trigger-queries --out cases.json`."
)


def detect(data: Any, fmt: str) -> bool:
    """skill-creator's evals (`{"skill_name", "evals": [...]}` or the bare list: a `prompt` with its
    expectations or assertions and no `input`) or a trigger eval (`should_trigger` rows)."""
    from .imported import looks_like_evals

    if isinstance(data, dict) and "cases" not in data:
        if "skill_name" in data or isinstance(data.get("evals"), list):
            return True
    return trigger_items(data) is not None or looks_like_evals(data)


def read(path: str, text: str, *, trigger_queries: bool = False) -> Imported:
    """skill-creator's evals or trigger eval as cases (the importer's reader, abeq.sets.importers)."""
    return read_skill_creator(path, text, trigger_queries)


def read_skill_creator(path: str, text: str, trigger_queries: bool = False) -> Imported:
    from .parse import format_of

    data = _csv_triggers(path, text) if format_of(path) == "csv" else parse_text(text, "json", path)
    trig = trigger_items(data)
    if trig is not None:
        if not trigger_queries:
            keys = (
                "prompt + expected_trigger"
                if any("expected_trigger" in x for x in trig)
                else "query + should_trigger"
            )
            raise InputError(
                f"this is a skill-creator trigger eval ({len(trig)} entries of {keys}): it tests whether a "
                "skill's description makes Claude load the skill for a request, not what the skill makes "
                "a model do once loaded, which is what abeq compares",
                path=path,
                hint=TRIGGER_HINT,
            )
        return _trigger_cases(path, trig)
    evals = data.get("evals") if isinstance(data, dict) else data
    if not isinstance(evals, list):
        raise InputError(_not_evals(data), path=path, hint=_EVALS_SHAPE)
    if not evals:
        raise InputError("the 'evals' list is empty: nothing to import", path=path)
    cases, labels, warnings = [], [], []
    extra_fields: dict[str, int] = {}
    if isinstance(data, dict):
        rest = [k for k in data if k not in ("evals", "skill_name")]
        if rest:
            warnings.append(
                f"the file's own fields {', '.join(rest)} are not carried into the set (a set has no place "
                "for them); read them beside the cases"
            )
    for i, ev in enumerate(evals):
        label = f"evals[{i}]" + (f" (id {ev.get('id')})" if isinstance(ev, dict) and "id" in ev else "")
        if not isinstance(ev, dict):
            raise InputError(f"{label} is not an object", path=path)
        prompt = ev.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise InputError(f"{label}: 'prompt' is missing or empty; it is the case input", path=path)
        _check_eval_types(ev, label, path)
        if ev.get("id") not in (None, ""):
            cid = f"eval-{ev['id']}"
        else:
            cid = f"eval-{i + 1}"
            warnings.append(f"{label} has no id; named it '{cid}' by position")
        expectations = ev.get("expectations", [])
        if isinstance(expectations, str):
            expectations = [expectations]
        if not isinstance(expectations, list) or not all(isinstance(x, str) for x in expectations):
            raise InputError(
                f"{label}: 'expectations' must be a list of statements",
                path=path,
                hint='Write "expectations": ["The output has a Fixes heading", …].',
            )
        metadata = {k: v for k, v in ev.items() if k not in _EVAL_FIELDS}
        for k in metadata:
            extra_fields[k] = extra_fields.get(k, 0) + 1
        if isinstance(ev.get("expected_output"), str) and ev["expected_output"].strip():
            metadata["expected_output"] = ev["expected_output"]
        inp = prompt
        files = ev.get("files") or []
        if files:
            # The runner gets text only; naming the files keeps the task as the skill saw it.
            inp += "\n\nInput files: " + ", ".join(map(str, files))
            metadata["files"] = files
            warnings.append(
                f"{label} comes with files ({', '.join(map(str, files))}); abeq names them in the input "
                "but does not attach their contents"
            )
        if _PLACEHOLDER.search(prompt):
            found = ", ".join(sorted(set(_PLACEHOLDER.findall(prompt))))
            warnings.append(
                f"{label}: the prompt has placeholders ({found}) that your eval harness fills in; abeq "
                "passes the prompt as written"
            )
        case: dict = {"id": cid, "input": inp, "status": "user-added"}
        if expectations:
            case["expectations"] = expectations
        asserts = [
            _assertion(a, f"{label}: assertions[{j}]", path)
            for j, a in enumerate(_list(ev, "assertions", label, path))
        ]
        if asserts:
            case["assertions"] = asserts
        if metadata:
            case["metadata"] = metadata
        t = _declared_type(ev, path, label)
        if t:
            case["type"] = t
        cases.append(case)
        labels.append(label)
    if extra_fields:
        checklike = sorted(k for k in extra_fields if _checklike(k))
        warnings.append(
            "fields skill-creator does not define are kept in each case's metadata: "
            + ", ".join(f"{k} ({n} eval{'s' if n > 1 else ''})" for k, n in extra_fields.items())
            + (
                f"; {', '.join(checklike)} read like checks but are not run as checks — to have them "
                "checked, write them as 'expectations' (statements) or 'assertions'"
                if checklike
                else ""
            )
        )
    return Imported(path, "skill-creator", cases, labels, warnings)


_EVALS_SHAPE = 'Expected {"skill_name": ..., "evals": [{"id": 1, "prompt": ..., "expectations": [...]}]}.'


def _not_evals(data: Any) -> str:
    if isinstance(data, dict):
        keys = ", ".join(list(data)[:8]) or "none"
        for key, what in (("test_cases", "test cases"), ("cases", "cases"), ("scenarios", "scenarios")):
            if isinstance(data.get(key), list):
                return (
                    f"this file keeps its {what} under '{key}', not 'evals': it is not a skill-creator "
                    f"evals.json (its top-level fields: {keys})"
                )
        return f"a skill-creator file has an 'evals' list; this one has none (its top-level fields: {keys})"
    return f"a skill-creator file is an object with an 'evals' list, not a {_kind(data)}"


_TRUTH = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def _csv_triggers(path: str, text: str) -> list[dict]:
    """A trigger eval kept as CSV (`id,should_trigger,prompt`, as Codex's skill guide writes it): rows
    with should_trigger read as true or false."""
    import csv
    import io

    try:
        rows = [dict(r) for r in csv.DictReader(io.StringIO(text), strict=True)]
    except csv.Error as e:
        raise InputError(f"the CSV does not parse: {e}", path=path) from None
    if not rows or not ({"should_trigger", "expected_trigger"} & set(rows[0])):
        raise InputError(
            "a skill-creator CSV is a trigger eval, with a should_trigger column; this one has "
            f"{', '.join(rows[0]) if rows else 'no rows'}",
            path=path,
            hint="Write evals as evals/evals.json, or give the CSV id,should_trigger,prompt columns.",
        )
    for n, r in enumerate(rows, start=2):
        key = "should_trigger" if "should_trigger" in r else "expected_trigger"
        val = _TRUTH.get(str(r.get(key) or "").strip().lower())
        if val is None:
            raise InputError(
                f"row {n}: {key} is {r.get(key)!r}, not true or false",
                path=path,
                hint="Write true or false in the should_trigger column.",
            )
        r[key] = val
    return rows


def trigger_items(data: Any) -> list[dict] | None:
    """The entries of a trigger eval (query + should_trigger, in its known shapes), or None."""
    lists = [data] if isinstance(data, list) else []
    if isinstance(data, dict):  # {"evals": [...]}, {"queries": [...]}, …: whichever list holds them
        lists = [v for v in data.values() if isinstance(v, list)]
    for items in lists:
        if items and all(
            isinstance(x, dict) and ("should_trigger" in x or "expected_trigger" in x) for x in items
        ):
            return items
    return None


def _trigger_cases(path: str, items: list[dict]) -> Imported:
    """The queries that should trigger the skill, as cases (asked for with --trigger-queries)."""
    cases, labels = [], []
    skipped = 0
    for i, x in enumerate(items):
        query = x.get("query", x.get("prompt"))
        should = x.get("should_trigger", x.get("expected_trigger"))
        if not isinstance(query, str) or not query.strip():
            raise InputError(f"entry {i}: has no query text", path=path)
        if should is not True:
            skipped += 1
            continue
        meta = {k: v for k, v in x.items() if k not in ("query", "prompt")}
        cid = (
            f"query-{x['id']}"
            if isinstance(x.get("id"), (str, int)) and str(x["id"]).strip()
            else f"query-{i + 1}"
        )
        cases.append({"id": cid, "input": query, "status": "user-added", "metadata": meta})
        labels.append(f"entry {i}")
    if not cases:
        raise InputError(
            "no query in this trigger eval should trigger the skill: nothing to import", path=path
        )
    warnings = [
        f"imported the {len(cases)} queries that should trigger the skill as case inputs"
        + (
            f"; the {skipped} that should not were left out (they test that the skill is not loaded, "
            "and abeq always gives the runner the document)"
            if skipped
            else ""
        )
    ]
    return Imported(path, "skill-creator", cases, labels, warnings)


def _list(ev: dict, key: str, label: str, path: str) -> list:
    v = ev.get(key, [])
    if isinstance(v, (str, dict)):
        return [v]
    if not isinstance(v, list):
        raise InputError(f"{label}: '{key}' must be a list, not a {_kind(v)}", path=path)
    return v


def _assertion(a: Any, label: str, path: str) -> dict:
    """A skill-creator assertion as a natural-language check the judge model grades."""
    if isinstance(a, str) and a.strip():
        return {"type": "llm-rubric", "value": a}
    if isinstance(a, dict):
        key = next((k for k in _TEXT_KEYS if isinstance(a.get(k), str) and a[k].strip()), None)
        if key is not None:
            out = {"type": "llm-rubric", "value": a[key]}
            if a.get("id") not in (None, ""):
                out["metric"] = str(a["id"])
            if isinstance(a.get("name"), str) and key != "name":
                out["description"] = a["name"]
            rest = {k: v for k, v in a.items() if k not in (key, "id", "name")}
            if rest:
                out["options"] = rest
            return out
    raise InputError(
        f"{label}: an assertion must be a statement (text) or an object with a 'text', "
        f"not {json.dumps(a, default=str)[:80]}",
        path=path,
        hint='Write "assertions": ["The output has a Fixes heading"] or [{"text": "…"}].',
    )


def _check_eval_types(ev: dict, label: str, path: str) -> None:
    """A field of the wrong type is refused, not read as something else (a string of files as letters)."""
    eid = ev.get("id")
    if isinstance(eid, bool) or not isinstance(eid, (int, str, type(None))):
        raise InputError(
            f"{label}: 'id' must be a number or text, not a {_kind(eid)}",
            path=path,
            hint='Number the evals: "id": 1, "id": 2, ...',
        )
    expected = ev.get("expected_output")
    if expected is not None and not isinstance(expected, str):
        raise InputError(
            f"{label}: 'expected_output' must be text, not a {_kind(expected)}",
            path=path,
            hint='Write "expected_output": "what a good answer does".',
        )
    files = ev.get("files")
    if isinstance(files, str):
        raise InputError(
            f"{label}: 'files' must be a list of file names, not text",
            path=path,
            hint=f'Write "files": [{json.dumps(files[:60], ensure_ascii=False)}] (one name per item).',
        )
    if files is not None and (not isinstance(files, list) or not all(isinstance(f, str) for f in files)):
        raise InputError(
            f"{label}: 'files' must be a list of file names (text), not a {_kind(files)}"
            + ("" if not isinstance(files, list) else " holding other values"),
            path=path,
            hint='Write "files": ["input.csv", "notes.md"].',
        )
