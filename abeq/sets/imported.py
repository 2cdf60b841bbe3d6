"""Transfer sets from the files people already have (promptfoo, skill-creator, abeq's own formats).

Case types. promptfoo tests and skill-creator evals have no field for abeq's case type, and a
type is what makes a set runnable (one of each is required), so guessing one would quietly
make the set look stronger than it is. Reading a file therefore gives an `Imported`, whose
`untyped` lists every case that has no type. `resolve()` turns it into a TransferSet once a
person has supplied them, per case (the desk asks) or all at once (`--default-type`); until
then it raises MissingTypesError naming the cases. A case whose type was supplied at import is
marked `user-modified` (a person changed what the source said) and is named in the warnings;
cases typed in the source keep their status (`user-added` when the file gives none). A type
the source does declare is read: promptfoo `metadata.case_type` (or `metadata.type` when its
value is one of abeq's types), and a `case_type` key on a skill-creator eval.
"""

from __future__ import annotations

from pathlib import Path

from ..documents import normalize_newlines, read_text_file
from ..errors import InputError
from ..schemas import TransferSet
from ._common import Imported
from .formats import parse_located
from .parse import MAX_SET_BYTES

FORMATS: tuple[str, ...] = ("promptfoo", "skill-creator", "csv", "yaml", "jsonl", "json")


def import_set(
    fmt: str,
    path: str | Path,
    default_type: str | None = None,
    types: dict[str, str] | None = None,
    *,
    trigger_queries: bool = False,
) -> tuple[TransferSet, list[str]]:
    """Read a transfer set in `fmt`; raises MissingTypesError when cases lack a type nobody supplied."""
    return read_source(fmt, path, trigger_queries=trigger_queries).resolve(types, default_type)


def read_source(
    fmt: str, path: str | Path, text: str | None = None, *, trigger_queries: bool = False
) -> Imported:
    """Read cases from a file (or from `text`, named `path`, e.g. an upload) without resolving types.
    `trigger_queries`: a skill-creator trigger eval's should-trigger queries become the cases."""
    p = str(path)
    if fmt not in FORMATS:
        raise InputError(f"unknown import format '{fmt}'", path=p, hint=f"Use one of {', '.join(FORMATS)}.")
    if text is None:
        text = read_text_file(p, what=f"{fmt} file", max_bytes=MAX_SET_BYTES)
    text = normalize_newlines(text)  # an upload reads like the same file on disk
    if fmt == "promptfoo":
        from .promptfoo import PromptfooReader

        return PromptfooReader(p).read(text)
    if fmt == "skill-creator":
        from .skill_creator import read_skill_creator

        return read_skill_creator(p, text, trigger_queries=trigger_queries)
    return _read_abeq(fmt, p, text)


# ---------------------------------------------------------------- abeq's own formats
def _read_abeq(fmt: str, path: str, text: str) -> Imported:
    data, labels = parse_located(text, fmt, path)
    if isinstance(data, list):
        data = {"cases": data}
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise InputError(
            "a transfer set must be an object with a 'cases' list (or a list of cases)",
            path=path,
            hint='Write {"cases": [{"id": "happy-1", "type": "happy", "input": "..."}]} (the README\'s '
            '"Transfer sets" section has every field); for promptfoo or skill-creator files use '
            "--from promptfoo|skill-creator.",
        )
    cases = []
    for c in data["cases"]:
        if isinstance(c, dict) and c.get("type") in (None, ""):
            c = {k: v for k, v in c.items() if k != "type"}  # a blank cell is a missing type, not a bad one
        cases.append(c)
    rest = {k: v for k, v in data.items() if k != "cases"}
    return Imported(path, fmt, cases, labels or [f"case {i + 1}" for i in range(len(cases))], rest=rest)
