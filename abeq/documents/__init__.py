"""The documents under test, the first stage of the pipeline: a document read and checked (document),
its sections (sections), an instruction file's @imports (doc_imports) and rule files (rule_files), a
skill's folder (skill_folder), and all of these read at a git revision (git_source).

The names below load on first use: the gate reads a document's footprint (git_source) without
loading the loader."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:
    from .document import (
        Document,
        check_document_text,
        compression_ratio,
        detect_variant,
        document_hash,
        estimate_tokens,
        load_document,
        normalize_newlines,
        read_text_file,
        sha256,
        size_stats,
    )

__all__ = [
    "Document",
    "load_document",
    "read_text_file",
    "check_document_text",
    "normalize_newlines",
    "detect_variant",
    "document_hash",
    "sha256",
    "estimate_tokens",
    "size_stats",
    "compression_ratio",
]

__getattr__ = exports(__name__, dict.fromkeys(__all__, "document"))  # all from the loader
