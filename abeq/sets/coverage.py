"""Coverage: which sections of the original the cases exercise, the thin-set minimum, and the warnings."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..documents import first_rule, section_texts
from ..documents import sections as doc_sections
from ..errors import ThinSetError
from ..schemas import Coverage, TransferSet
from ..vocab import CASE_TYPES

MIN_CASES = 5
COVERAGE_WARN = 0.70


@dataclass
class CoverageReport:
    sections_identified: list[str]
    sections_covered: list[str]
    coverage_pct: float
    per_type: dict[str, int]
    warnings: list[str] = field(default_factory=list)
    thin: bool = False
    runnable: bool = True
    unknown_sections: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "sections_identified": self.sections_identified,
            "sections_covered": self.sections_covered,
            "coverage_pct": self.coverage_pct,
            "per_type": self.per_type,
            "warnings": self.warnings,
            "thin": self.thin,
            "runnable": self.runnable,
        }

    def as_coverage(self) -> Coverage:
        return Coverage(
            sections_identified=self.sections_identified,
            sections_covered=self.sections_covered,
            thin_coverage_warnings=self.warnings,
        )


def _norm(s: str) -> str:
    return " ".join(s.lower().replace("#", " ").split())


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
    identified = doc_sections(document_text)
    index = {_norm(s): i for i, s in enumerate(identified)}
    covered_idx: set[int] = set()
    unknown: list[str] = []
    ids = {c.id for c in ts.cases}
    truncated = {k: v for k, v in (truncated or {}).items() if k in ids}
    for c in ts.cases:
        limit = None
        if c.id in truncated:
            limit = index.get(_norm(truncated[c.id]), -1)
        for s in c.exercises_sections:
            i = index.get(_norm(s))
            if i is None:
                if s not in unknown:
                    unknown.append(s)
                continue
            if limit is not None and i > limit:
                continue
            covered_idx.add(i)
    covered = [identified[i] for i in sorted(covered_idx)]
    ratio = len(covered) / max(1, len(identified))
    pct = round(100.0 * ratio, 1)
    per_type = {t: sum(1 for c in ts.cases if c.type == t) for t in CASE_TYPES}
    warnings = []
    if ratio < COVERAGE_WARN:  # the exact ratio: 69.96% must not round up to "70%, fine"
        bodies = dict(section_texts(document_text))
        missing = [
            f"{s} (untested: “{rule}”)" if (rule := first_rule(bodies.get(s, ""))) else s
            for i, s in enumerate(identified)
            if i not in covered_idx
        ]
        warnings.append(
            f"coverage {pct:g}% is below {COVERAGE_WARN * 100:g}%; no case exercises: "
            + "; ".join(missing)
            + " — the behaviour those sections induce is untested"
        )
    for s in unknown:
        # a title the original uses under several parents is named with its parent: say which
        named = [t for t in identified if _norm(t.rsplit(" › ", 1)[-1]) == _norm(s)]
        warnings.append(
            f"a case names section '{s}', which the original does not have"
            + (f" (it has {' and '.join(repr(t) for t in named)})" if named else "")
        )
    for cid, sec in truncated.items():
        if _norm(sec) in index:
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
        why = []
        if len(ts.cases) < MIN_CASES:
            why.append(f"{len(ts.cases)} case(s), the minimum is {MIN_CASES}")
        if missing_types:
            why.append("no case of type " + ", ".join(missing_types))
        warnings.append("thin transfer set: " + "; ".join(why))
    return CoverageReport(
        identified,
        covered,
        pct,
        per_type,
        warnings,
        thin,
        runnable=(not thin) or allow_thin or ts.thin_accepted,
        unknown_sections=unknown,
    )


def require_runnable(
    document_text: str, ts: TransferSet, allow_thin: bool, path: str = "<transfer set>"
) -> CoverageReport:
    cov = coverage(document_text, ts, allow_thin=allow_thin)
    if not cov.runnable:
        raise ThinSetError(
            next(w for w in cov.warnings if w.startswith("thin")),
            path=path,
            hint="Add cases, or accept a thin set explicitly (--allow-thin; the report records it).",
        )
    return cov
