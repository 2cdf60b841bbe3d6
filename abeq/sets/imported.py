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

Other tools' datasets (OpenAI evals, Inspect AI, DeepEval, Ragas, LangSmith) are read by
`datasets`, recognised by their fields: their reference answers become checks, never input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..documents import normalize_newlines, read_text_file
from ..errors import InputError
from ..schemas import TransferSet
from ._common import Imported
from .formats import parse_located
from .importers import BY_NAME, FORMATS, IMPORTERS
from .parse import MAX_SET_BYTES


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
    from ..documents.git_source import checkout, is_git

    if is_git(p) and text is None:  # read at a revision, with the files it names (abeq.documents.git_source)
        with checkout(p, "set") as co:
            got = read_source(fmt, co.local, trigger_queries=trigger_queries)
            got.path = p
            got.warnings = [co.rename(InputError(w)).message for w in got.warnings]
            got.outside = [co.rename(InputError(o)).message for o in got.outside]
        return got
    if fmt not in (*FORMATS, "detect"):
        raise InputError(f"unknown import format '{fmt}'", path=p, hint=f"Use one of {', '.join(FORMATS)}.")
    if text is None:
        text = read_text_file(
            p, what="transfer set" if fmt == "detect" else f"{fmt} file", max_bytes=MAX_SET_BYTES
        )
    text = normalize_newlines(text)  # an upload reads like the same file on disk
    if fmt == "detect":  # `fmt` "detect": the importer the file looks like it is for, and say so
        fmt = detect_format(p, text)
        got = read_source(fmt, p, text, trigger_queries=trigger_queries)
        got.warnings.insert(0, f"read as {fmt} (detected from the file; --from chooses another reader)")
        return got
    if fmt in BY_NAME:
        return BY_NAME[fmt].read(p, text, trigger_queries=trigger_queries)
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
            hint='Write {"cases": [{"id": "happy-1", "type": "happy", "input": "..."}]} '
            "(docs/guides/transfer-sets.md has every field); for promptfoo or skill-creator files use "
            "--from promptfoo|skill-creator.",
        )
    from .datasets import dataset_kind

    kind = dataset_kind(data["cases"])
    if kind is not None:
        raise InputError(
            f"these rows are {kind.title} ({kind.columns}), not abeq cases",
            path=path,
            hint=f"Import them with `abeq import-set --from dataset {Path(path).name} --out cases.json` "
            f"('{kind.input}' becomes the input, '{kind.reference}' a check).",
        )
    from .datasets import not_a_dataset

    told = not_a_dataset(data["cases"])  # results, judge rows, prompts alone: say so, not field by field
    if told is not None:
        raise InputError(told[1], path=path, hint=told[2])
    if looks_like_evals(data["cases"]):
        raise InputError(
            "these entries have a 'prompt' (and expectations or assertions) but no 'input': they read as "
            "skill-creator evals, not abeq cases",
            path=path,
            hint="Import them with `abeq import-set --from skill-creator "
            f"{Path(path).name} --out cases.json`.",
        )
    cases = []
    for c in data["cases"]:
        if isinstance(c, dict) and c.get("type") in (None, ""):
            c = {k: v for k, v in c.items() if k != "type"}  # a blank cell is a missing type, not a bad one
        cases.append(c)
    rest = {k: v for k, v in data.items() if k != "cases"}
    return Imported(path, fmt, cases, labels or [f"case {i + 1}" for i in range(len(cases))], rest=rest)


# ---------------------------------------------------------------- which importer a file is for
def detect_format(name: str, text: str) -> str:
    """The importer for a file, from its name and a look at its content (the desk's "detect"): the
    first importer whose detector takes it (abeq.sets.importers, in its order), otherwise abeq's own
    format by the extension. A file that does not parse is given to abeq's reader for its extension,
    which says what is wrong."""
    from .parse import format_of

    fmt = format_of(name)
    base = Path(name).name.lower()
    claimed = next((imp.name for imp in IMPORTERS if imp.claims and base.startswith(imp.claims)), None)
    if claimed:  # promptfooconfig.yaml is promptfoo's, whatever it holds
        return claimed
    data = _peek(text, fmt)
    return next((imp.name for imp in IMPORTERS if imp.detect(data, fmt)), fmt)


_EVAL_KEYS = {"prompt", "expectations", "assertions", "expected_output"}


def looks_like_evals(rows: object) -> bool:
    """Rows that are skill-creator evals (a `prompt` with its checks), not abeq cases (an `input`):
    skill-creator's own reader takes a bare list of evals as readily as {"evals": [...]}."""
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return False
    keys = set().union(*rows)
    return "input" not in keys and "prompt" in keys and bool(keys & (_EVAL_KEYS - {"prompt"}))


def _peek(text: str, fmt: str) -> Any:
    import csv
    import io
    import itertools
    import json

    import yaml

    try:
        if fmt == "json":
            return json.loads(text)
        if fmt == "jsonl":
            return [json.loads(ln) for ln in text.splitlines()[:20] if ln.strip()]
        if fmt == "csv":  # the header and the first row are enough
            return list(itertools.islice(csv.DictReader(io.StringIO(text)), 1))
        if fmt == "yaml":
            return yaml.safe_load(text)
    except (ValueError, yaml.YAMLError, csv.Error):
        return None
    return None
