"""skill-creator evals.json files as abeq cases (types are supplied later: see imported.py)."""

from __future__ import annotations

import json

from ..errors import InputError
from ._common import Imported, _declared_type, _kind
from .formats import parse_text

# skill-creator's evals.json fields (references/schemas.md), plus the type keys abeq reads
_EVAL_FIELDS = ("id", "prompt", "expected_output", "files", "expectations", "case_type", "abeq_type", "type")


def read_skill_creator(path: str, text: str) -> Imported:
    data = parse_text(text, "json", path)
    evals = data.get("evals") if isinstance(data, dict) else data
    if not isinstance(evals, list):
        raise InputError(
            "a skill-creator file has an 'evals' list",
            path=path,
            hint='Expected {"skill_name": ..., "evals": [{"id": 1, "prompt": ..., "expectations": [...]}]}.',
        )
    if not evals:
        raise InputError("the 'evals' list is empty: nothing to import", path=path)
    cases, labels, warnings = [], [], []
    for i, ev in enumerate(evals):
        label = f"evals[{i}]" + (f" (id {ev.get('id')})" if isinstance(ev, dict) and "id" in ev else "")
        if not isinstance(ev, dict):
            raise InputError(f"{label} is not an object", path=path)
        unknown = [k for k in ev if k not in _EVAL_FIELDS]
        if unknown:  # a misspelt 'expectations' would otherwise drop every check without a word
            raise InputError(
                f"{label} has unknown field(s): {', '.join(map(str, unknown))}",
                path=path,
                hint=f"An eval's fields are {', '.join(_EVAL_FIELDS)}; rename or remove the others.",
            )
        prompt = ev.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise InputError(f"{label}: 'prompt' is missing or empty; it is the case input", path=path)
        _check_eval_types(ev, label, path)
        if "id" in ev and ev["id"] not in (None, ""):
            cid = f"eval-{ev['id']}"
        else:
            cid = f"eval-{i + 1}"
            warnings.append(f"{label} has no id; named it '{cid}' by position")
        expectations = ev.get("expectations", [])
        if isinstance(expectations, str):
            expectations = [expectations]
        if not isinstance(expectations, list) or not all(isinstance(x, str) for x in expectations):
            raise InputError(f"{label}: 'expectations' must be a list of statements", path=path)
        expected = ev.get("expected_output")
        if isinstance(expected, str) and expected.strip():
            expectations = [f"Expected output: {expected.strip()}", *expectations]
        inp = prompt
        files = ev.get("files") or []
        if files:
            # The runner gets text only; naming the files keeps the task as the skill saw it.
            inp += "\n\nInput files: " + ", ".join(map(str, files))
            warnings.append(
                f"{label} comes with files ({', '.join(map(str, files))}); abeq names them in the input "
                "but does not attach their contents"
            )
        case: dict = {"id": cid, "input": inp, "expectations": expectations, "status": "user-added"}
        t = _declared_type(ev, path, label)
        if t:
            case["type"] = t
        cases.append(case)
        labels.append(label)
    return Imported(path, "skill-creator", cases, labels, warnings)


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
