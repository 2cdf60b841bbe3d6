"""A transfer set read where abeq expects one of its own (check-set, run, the desk): another tool's
file (a promptfoo config, evals.json, goldens…) is named with the `abeq import-set` command that reads
it, not left as "missing the 'cases' list" or a list of missing fields. Kept apart from the parser,
which the importers build on, so that neither imports the other."""

from __future__ import annotations

from pathlib import Path

from ..documents import read_text_file
from ..errors import InputError
from ..schemas import TransferSet
from .datasets import bare_rows, dataset_kind, not_a_dataset
from .imported import _peek, detect_format
from .importers import BY_NAME
from .parse import MAX_SET_BYTES, format_of
from .parse import load as _load
from .parse import load_text as _load_text
from .skill_creator import trigger_items


def load(path: str | Path) -> TransferSet:
    """abeq.sets.parse.load, and another tool's file named with its command."""
    try:
        return _load(path)
    except InputError as e:
        try:
            text = read_text_file(str(path), what="transfer set", max_bytes=MAX_SET_BYTES)
        except InputError:
            raise e from None
        raise _foreign(str(path), text) or e from None


def load_text(text: str, name: str) -> TransferSet:
    """abeq.sets.parse.load_text, and another tool's file named with its command."""
    try:
        return _load_text(text, name)
    except InputError as e:
        raise _foreign(name, text) or e from None


def _foreign(name: str, text: str) -> InputError | None:
    try:
        told = not_a_dataset(_rows_peeked(name, text))
        found = None if told else foreign_kind(name, text)
    except (RecursionError, ValueError, InputError):  # a file too deep or broken to say what it is
        return None
    if told is not None:  # results, judge rows, prompts alone: no importer makes a set of them as they are
        return InputError(told[1], path=name, hint=told[2])
    if found is None:
        return None
    what, command = found
    return InputError(
        f"this file holds {what}, not an abeq transfer set",
        path=name,
        hint=f"Import it first: `{command}`, then use set.json as the transfer set.",
    )


def _rows_peeked(name: str, text: str) -> object:
    return bare_rows(_peek(text, format_of(name)))


def foreign_kind(name: str, text: str) -> tuple[str, str] | None:
    """What another tool's file is and the `abeq import-set` command that reads it, for a file given
    where an abeq set was expected (check-set, run); None when no importer takes it."""
    importer = detect_format(name, text)
    if importer not in BY_NAME:
        return None
    data = _peek(text, format_of(name))
    base = Path(name).name
    command = f"abeq import-set --from {importer} {base} --out set.json"
    if importer == "skill-creator":
        if trigger_items(data) is not None:
            return "a skill trigger eval (queries with should_trigger)", command + " --trigger-queries"
        return "skill-creator evals (evals.json: prompts with expectations)", command
    if importer == "promptfoo":
        config = isinstance(data, dict) and any(k in data for k in ("prompts", "providers", "targets"))
        what = (
            "a promptfoo config"
            if config or base.lower().startswith("promptfooconfig")
            else "promptfoo tests"
        )
        return what, command
    kind = dataset_kind(data if isinstance(data, list) else [])
    return (f"{kind.title} ({kind.columns})" if kind else "dataset rows with reference answers"), command
