"""The importers: one entry each, the one list `abeq import-set --from`, the desk's Transfer set page
and the docs (the transfer-sets guide's generated table) read.

An importer is a module of abeq/sets/ with two functions, named in its entry here:
- a detector, `detect(data, fmt) -> bool`: whether parsed content (`data`: the file's JSON, YAML, JSONL
  rows or first CSV row; None when it does not parse) is for this importer. The detectors are asked in
  the order below and the first that says yes reads the file, so an earlier entry's shape wins; a
  file name an entry `claims` (promptfoo's `promptfooconfig.*`) decides before any content is read;
- a reader, `read(path, text, *, trigger_queries=False) -> Imported`: the cases, untyped ones left for
  a person to type (abeq.sets.imported says why nothing is guessed).
Nothing else lists importers (tests/test_importers.py holds the CLI, the desk and the docs to this).
This module loads no importer: the CLI reads the names for `--help` without them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._common import Imported


@dataclass(frozen=True)
class Importer:
    name: str  # the `--from` name
    label: str  # what it reads, in the desk's list and the docs
    detector: str  # "module:function" in abeq.sets
    reader: str  # "module:function" in abeq.sets
    claims: tuple[str, ...] = ()  # file-name prefixes that are this importer's whatever the content

    def detect(self, data: Any, fmt: str) -> bool:
        """Whether this importer reads a file whose parsed content is `data` (`fmt`: its extension's)."""
        return bool(_load(self.detector)(data, fmt))

    def read(self, path: str, text: str, *, trigger_queries: bool = False) -> Imported:
        """The cases of `text` (the file at `path`, whose references are read relative to it)."""
        return _load(self.reader)(path, text, trigger_queries=trigger_queries)


IMPORTERS: tuple[Importer, ...] = (
    # first: a skill-creator trigger eval in CSV has no id or input column, as a promptfoo CSV has not
    Importer(
        "skill-creator",
        "skill-creator evals.json or trigger eval",
        "skill_creator:detect",
        "skill_creator:read",
    ),
    Importer(
        "promptfoo",
        "promptfoo config or tests file",
        "promptfoo:detect",
        "promptfoo:read",
        claims=("promptfooconfig",),
    ),
    Importer(
        "dataset",
        "OpenAI evals, Inspect AI, DeepEval, Ragas or LangSmith rows",
        "datasets:detect",
        "datasets:read",
    ),
)
BY_NAME: dict[str, Importer] = {i.name: i for i in IMPORTERS}
# abeq's own format, by extension (abeq.sets.parse): one entry on the desk, one `--from` name each
ABEQ_FORMATS: tuple[str, ...] = ("csv", "yaml", "jsonl", "json")
ABEQ_LABEL = "abeq set (.json, .yaml, .csv, .jsonl)"
FORMATS: tuple[str, ...] = (*BY_NAME, *ABEQ_FORMATS)  # every `--from` name but "detect"


def _load(ref: str) -> Callable[..., Any]:
    module, function = ref.split(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)
