"""Transfer sets: parsed strictly, confirmed and hashed, measured for coverage, imported from the
files people already have, drafted from the original, and written back out."""

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
from .imported import FORMATS, Imported, import_set, read_source
from .parse import MAX_SET_BYTES, dump, format_of, from_obj, load, load_text

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
