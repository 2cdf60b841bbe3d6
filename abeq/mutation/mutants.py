"""Mutants of a document, each made in code: one per section, that section deleted by its exact span.

A section (abeq.documents.sections) is a heading and its own text up to the next heading; the Preamble is the
text before the first heading; a document without headings has paragraphs for sections. Deleting
one removes exactly those lines of the source (front matter is metadata, never a mutant). An
instruction file's imported files are part of its text (abeq.documents.doc_imports): their sections are
mutants too, each naming its file, and the markers between files are never deleted. A model can
write subtler mutants besides (written.py); they are Mutants too, of kind "model".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..documents import Document
from ..documents.sections import outline, strip_front_matter

SECTION_DELETION = "section-deletion"
MODEL_REMOVAL = "model-removal"
# the markers doc_imports puts around an imported file
_MARK = re.compile(r"^<!-- abeq: (?:end of (?P<end>.+?)|(?P<path>.+?), imported by @\S+ in .+?) -->$", re.M)


@dataclass(frozen=True)
class Mutant:
    """One mutant: the original with `removed` deleted at [start, end) of its text."""

    section: str  # the section deleted (or, for a model's removal, the section it lies in)
    operator: str  # SECTION_DELETION or MODEL_REMOVAL
    document: Document  # the mutant, run like a candidate
    start: int
    end: int
    removed: str  # the text deleted
    file: str = ""  # the imported file the section is in ("" for the document itself)
    what: str = ""  # what a model's removal says it removed

    @property
    def kind(self) -> str:
        """section (a section deleted in code) or model (a behaviour a model weakened or removed)."""
        return "model" if self.operator == MODEL_REMOVAL else "section"

    @property
    def hash(self) -> str:
        return self.document.hash


def _line_starts(lines: list[str]) -> list[int]:
    out, at = [], 0
    for ln in lines:
        out.append(at)
        at += len(ln) + 1
    return out + [at]


def section_spans(text: str) -> list[tuple[str, int, int]]:
    """(section name, start, end): the characters of `text` each section's deletion removes."""
    body = strip_front_matter(text)
    off = len(text) - len(body)
    lines = body.split("\n")
    starts = _line_starts(lines)
    out: list[tuple[str, int, int]] = []
    doc = outline(text)
    if doc.by_paragraphs:
        at = 0
        for h in doc.sections:
            i = body.find(h.body, at)
            if i < 0:
                continue
            j = i + len(h.body)
            while j < len(body) and body[j] in " \t\n":  # with the blank lines after it
                j += 1
            out.append((h.name, off + i, off + j))
            at = j
        return out
    for h in doc.sections:
        end = h.end
        for n in range(h.line + 1, h.end):  # an import's marker ends a section: markers stay
            if _MARK.match(lines[n]):
                end = n
                break
        out.append((h.name, off + starts[h.line], off + min(starts[end], len(body))))
    return out


def variant_of(doc: Document, name: str, text: str) -> Document:
    """`doc` with another text: a skill's folder (its references/, scripts/…) travels with it, so
    a runner in a workspace finds the same files beside the mutant's SKILL.md as beside the original's."""
    return Document(name, text, files=doc.files)


def section_mutants(doc: Document) -> list[Mutant]:
    """One mutant per section of `doc`, in document order (a deletion that changes nothing, or
    repeats another's text, is left out)."""
    out: list[Mutant] = []
    seen = {doc.hash}
    for name, a, b in section_spans(doc.text):
        text = doc.text[:a] + doc.text[b:]
        mutant = variant_of(doc, f"{doc.name} without {name}", text)
        if mutant.hash in seen:
            continue
        seen.add(mutant.hash)
        out.append(Mutant(name, SECTION_DELETION, mutant, a, b, doc.text[a:b], file_at(doc.text, a)))
    return out


def file_at(text: str, at: int) -> str:
    """The imported file the text at `at` comes from ("" for the document itself)."""
    where = ""
    for m in _MARK.finditer(text[:at]):
        where = "" if m.group("end") else m.group("path")
    return where
