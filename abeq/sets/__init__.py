"""Transfer sets: parsed strictly, confirmed and hashed, measured for coverage, imported from the
files people already have (the importers: abeq.sets.importers), drafted from the original, and written
back out.

The names below load on first use: the CLI reads the importers' names for `--help` without loading a
parser or the schemas (tests/test_startup.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:
    from .confirmation import UNCONFIRMED, confirm, confirmation_problem, edit, set_hash
    from .coverage_report import (
        COVERAGE_WARN,
        MIN_CASES,
        CoverageReport,
        canonical_sections,
        coverage,
        require_runnable,
        suggest_sections,
    )
    from .export import export_text
    from .formats import parse_located, parse_text
    from .imported import Imported, import_set, read_source
    from .importers import FORMATS
    from .parse import MAX_SET_BYTES, dump, format_of, from_obj
    from .reading import load, load_text

_EXPORTS = {
    "load": "reading",
    "load_text": "reading",
    "from_obj": "parse",
    "dump": "parse",
    "format_of": "parse",
    "MAX_SET_BYTES": "parse",
    "parse_text": "formats",
    "parse_located": "formats",
    "set_hash": "confirmation",
    "confirm": "confirmation",
    "edit": "confirmation",
    "confirmation_problem": "confirmation",
    "UNCONFIRMED": "confirmation",
    "coverage": "coverage_report",
    "canonical_sections": "coverage_report",
    "suggest_sections": "coverage_report",
    "require_runnable": "coverage_report",
    "CoverageReport": "coverage_report",
    "MIN_CASES": "coverage_report",
    "COVERAGE_WARN": "coverage_report",
    "import_set": "imported",
    "read_source": "imported",
    "Imported": "imported",
    "FORMATS": "importers",
    "export_text": "export",
}
__all__ = [
    "load",
    "load_text",
    "from_obj",
    "dump",
    "format_of",
    "parse_text",
    "parse_located",
    "MAX_SET_BYTES",
    "set_hash",
    "confirm",
    "edit",
    "confirmation_problem",
    "UNCONFIRMED",
    "coverage",
    "canonical_sections",
    "suggest_sections",
    "require_runnable",
    "CoverageReport",
    "MIN_CASES",
    "COVERAGE_WARN",
    "import_set",
    "read_source",
    "Imported",
    "FORMATS",
    "export_text",
]

__getattr__ = exports(__name__, _EXPORTS)
