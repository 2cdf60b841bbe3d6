"""Coverage: which sections of the original the cases exercise, the thin-set minimum, and the warnings.

What counts as a section, and how the names cases give are matched to headings, is abeq.documents.sections.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..documents.sections import Match, SectionIndex, first_rule, outline
from ..errors import ThinSetError
from ..schemas import Coverage, TransferSet
from ..vocab import CASE_TYPES

MIN_CASES = 5
COVERAGE_WARN = 0.70
MAP_HINT = (
    "map each case to the sections it exercises (the desk's Transfer set page, “Map cases to "
    "sections”, or `exercises_sections` in the file)"
)


@dataclass
class CoverageReport:
    sections_identified: list[str]
    sections_covered: list[str]
    coverage_pct: float
    per_type: dict[str, int]
    warnings: list[str] = field(default_factory=list)
    thin: bool = False
    runnable: bool = True
    unknown_sections: list[str] = field(default_factory=list)  # names no heading of the original has
    how: str = ""  # how the sections were found, in the user's terms
    empty_headings: list[str] = field(default_factory=list)  # headings with no text of their own
    sections_named: bool = True  # False: no case names any section (an imported set, typically)

    def as_dict(self) -> dict:
        return {
            "sections_identified": self.sections_identified,
            "sections_covered": self.sections_covered,
            "coverage_pct": self.coverage_pct,
            "per_type": self.per_type,
            "warnings": self.warnings,
            "thin": self.thin,
            "runnable": self.runnable,
            "unknown_sections": self.unknown_sections,
            "sections_found": self.how,
            "headings_without_text": self.empty_headings,
            "cases_name_sections": self.sections_named,
        }

    def as_coverage(self) -> Coverage:
        return Coverage(
            sections_identified=self.sections_identified,
            sections_covered=self.sections_covered,
            thin_coverage_warnings=self.warnings,
        )


def canonical_sections(document_text: str, names: list[str]) -> tuple[list[str], list[str]]:
    """The original's own names for `names` (matched tolerantly), and the names that match no
    section (unknown, ambiguous, or a heading with no text of its own)."""
    index = SectionIndex(document_text)
    out, bad = [], []
    for s in names:
        sec = index.resolve(s).section
        if sec is None:
            bad.append(s)
        elif sec.name not in out:
            out.append(sec.name)
    return out, bad


def coverage(
    document_text: str,
    ts: TransferSet,
    *,
    truncated: dict[str, str] | None = None,
    allow_thin: bool = False,
) -> CoverageReport:
    """Sections exercised by at least one case over sections identified, with warnings.

    `truncated` maps case id -> the section its gate stopped in (or "" when unknown); such a
    case covers only the sections it names up to and including that one, in document order.
    When the section is "" or not one of the original's, nothing is known about how far the
    case got, so it covers none: coverage is a claim, and an unfounded one is worse than a low one.
    """
    doc = outline(document_text)
    index = SectionIndex(doc)
    identified = [h.name for h in doc.sections]
    covered_names: set[str] = set()
    unknown: list[str] = []
    problems: dict[str, str] = {}  # a name a case gives -> why it counts for nothing
    ids = {c.id for c in ts.cases}
    truncated = {k: v for k, v in (truncated or {}).items() if k in ids}
    for c in ts.cases:
        limit = None
        if c.id in truncated:
            m = index.resolve(truncated[c.id]) if truncated[c.id] else None
            limit = m.heading.position if m is not None and m.heading is not None else -1
        for s in c.exercises_sections:
            m = index.resolve(s)
            if m.section is None:
                problems.setdefault(s, _why(s, m, index))
                if m.status == "unknown" and s not in unknown:
                    unknown.append(s)
                continue
            if limit is not None and m.section.position > limit:
                continue
            covered_names.add(m.section.name)
    covered = [s for s in identified if s in covered_names]
    ratio = len(covered) / max(1, len(identified))
    pct = round(100.0 * ratio, 1)
    per_type: dict[str, int] = {t: sum(1 for c in ts.cases if c.type == t) for t in CASE_TYPES}
    named = any(c.exercises_sections for c in ts.cases)
    warnings = []
    if ts.cases and not named:
        why = (
            "the drafting model tagged none of its cases with a section the original has"
            if all(c.status == "derived" for c in ts.cases)  # drafted, not imported
            else "imported promptfoo and skill-creator cases never do: those formats have no such field"
        )
        warnings.append(f"coverage is 0% because no case names a section it exercises ({why}); {MAP_HINT}")
    elif ratio < COVERAGE_WARN:  # the exact ratio: 69.96% must not round up to "70%, fine"
        bodies = {h.name: h.body for h in doc.sections}
        missing = [
            f"{s} (untested: “{rule}”)" if (rule := first_rule(bodies.get(s, ""))) else s
            for s in identified
            if s not in covered_names
        ]
        warnings.append(
            f"coverage {pct:g}% is below {COVERAGE_WARN * 100:g}%; no case exercises: "
            + "; ".join(missing)
            + " — the behaviour those sections induce is untested"
        )
    warnings += problems.values()
    for cid, sec in truncated.items():
        m = index.resolve(sec) if sec else None
        if m is not None and m.heading is not None:
            warnings.append(f"case {cid} stopped at a gate in '{sec}'; sections after it are not counted")
        else:
            warnings.append(
                f"case {cid} stopped at a gate in "
                + (f"'{sec}', which the original does not have" if sec else "an unknown section")
                + "; none of its sections are counted"
            )
    missing_types = [t for t, n in per_type.items() if n == 0]
    thin = len(ts.cases) < MIN_CASES or bool(missing_types)
    if thin:
        reasons = []
        if len(ts.cases) < MIN_CASES:
            reasons.append(f"{len(ts.cases)} case(s), the minimum is {MIN_CASES}")
        if missing_types:
            reasons.append("no case of type " + ", ".join(missing_types))
        warnings.append("thin transfer set: " + "; ".join(reasons))
    return CoverageReport(
        identified,
        covered,
        pct,
        per_type,
        warnings,
        thin,
        runnable=(not thin) or allow_thin or ts.thin_accepted,
        unknown_sections=unknown,
        how=doc.how(),
        empty_headings=[h.name for h in doc.headings if h.kind == "empty"],
        sections_named=named,
    )


def _why(given: str, m: Match, index: SectionIndex) -> str:
    """Why a section name a case gives counts for nothing, and what to write instead."""
    if m.status == "heading" and m.heading is not None:
        subs = index.subsections(m.heading)
        return f"a case names '{given}', a heading with no text of its own, so it counts for no section" + (
            f"; name the subsection(s) it exercises: {', '.join(repr(s) for s in subs)}" if subs else ""
        )
    if m.status == "ambiguous":
        return (
            f"a case names '{given}', which matches more than one section "
            f"({' and '.join(repr(t) for t in m.candidates)}); name one of them"
        )
    return f"a case names section '{given}', which the original does not have" + (
        f"; the closest headings are {', '.join(repr(t) for t in m.candidates)}" if m.candidates else ""
    )


THIN_HINT = "Add cases, or accept a thin set explicitly (--allow-thin; the report records it)."


def thin_refusal(cov: CoverageReport, path: str | None = "<transfer set>") -> ThinSetError | None:
    """The refusal of a thin set nobody accepted as thin (None when the set is runnable): the one
    wording a run, a mutation test and a confirmation give."""
    if cov.runnable:
        return None
    return ThinSetError(next(w for w in cov.warnings if w.startswith("thin")), path=path, hint=THIN_HINT)


def require_runnable(
    document_text: str, ts: TransferSet, allow_thin: bool, path: str = "<transfer set>"
) -> CoverageReport:
    cov = coverage(document_text, ts, allow_thin=allow_thin)
    refused = thin_refusal(cov, path)
    if refused:
        raise refused
    return cov


_STOP = set(
    "a an and are as at be but by can do does for from has have how if in into is it its may must not "
    "of on or so than that the their them then there these this those to use used using was what when "
    "which who will with you your".split()
)


def _words(text: str) -> set[str]:
    import re

    return {w for w in re.findall(r"[^\W\d_]{3,}", text.casefold()) if w not in _STOP}


def suggest_sections(document_text: str, case_input: str, n: int = 3) -> list[str]:
    """The sections whose words the case input shares most, rarer words counting more: a hint for
    the person mapping cases to sections (never applied by itself)."""
    import math

    secs = outline(document_text).sections
    bags = [(h.name, _words(h.name + " " + h.body)) for h in secs]
    want = _words(case_input)
    df = {w: sum(1 for _, b in bags if w in b) for w in want}
    scored = [
        (sum(math.log(1 + len(bags) / df[w]) for w in want & bag), i, name)
        for i, (name, bag) in enumerate(bags)
    ]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [name for score, _, name in scored[:n] if score > 0]
