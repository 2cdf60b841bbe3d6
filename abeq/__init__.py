"""abeq: does a rewritten prompt, skill or instruction file still make the model do the same things?

The public surface, importable from `abeq` directly (loaded on first use, so `import abeq` stays
instant and never imports litellm):

    prepare_run, run, PreparedRun, run_problems   one review run, every check before a call (abeq.api)
    RunSettings                                    a run's settings, as every entry point gives them
    load_document, Document                        a document under test (abeq.documents)
    load_set, import_set, check_set, confirm_set   transfer sets (abeq.sets)
    draft_set                                      cases drafted from the original by a model
    compare                                        the blind comparator (abeq.comparator)
    calibrate                                      a judge measured on a labelled suite (abeq.calibration)
    mutate, prepare_mutation                       would this set notice a loss? (abeq.mutation)
    Store, open_store, build_report                the database and the report (abeq.results)
    ModelSpec                                      a model and its sampling (abeq.models)
    AbeqError, InputError                          what a user should read
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "prepare_run": "abeq.api",
    "run": "abeq.api",
    "PreparedRun": "abeq.api",
    "run_problems": "abeq.api",
    "RunSettings": "abeq.execution.settings",
    "mutate": "abeq.mutation.run",
    "prepare_mutation": "abeq.mutation.run",
    "load_document": "abeq.documents.document",
    "Document": "abeq.documents.document",
    "load_set": ("abeq.sets.parse", "load"),
    "import_set": "abeq.sets.imported",
    "check_set": ("abeq.sets.coverage_report", "coverage"),
    "confirm_set": ("abeq.sets.confirmation", "confirm"),
    "draft_set": ("abeq.sets.drafting", "draft"),
    "compare": ("abeq.comparator.comparator", "compare"),
    "calibrate": ("abeq.calibration.measure", "calibrate"),
    "Store": "abeq.results.store.store",
    "open_store": "abeq.results.store.store",
    "build_report": "abeq.results.reports.report",
    "ModelSpec": "abeq.models.spec",
    "AbeqError": "abeq.errors",
    "InputError": "abeq.errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'abeq' has no attribute {name!r}")
    module, attr = target if isinstance(target, tuple) else (target, name)
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
