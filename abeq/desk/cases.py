"""One run's cases on the Review page: the queue's order, filters and search, prev/next, and the two
runs of a case side by side."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass

from ..results.reports.report import CaseRow
from ..results.store.store import Store
from ..schemas import NOT_REPORTED, SELF_REPORT_FIELDS
from ..vocab import DIVERGED, EQUIVALENT, JUDGED, REGRESSED

FILTERS: dict[str, str] = {
    "all": "All",
    REGRESSED: "Regressed",
    DIVERGED: "Diverged",
    EQUIVALENT: "Equivalent",
    "errored": "Errored",
    "uncertain": "Uncertain",
    "overridden": "Overridden",
}
FIELD_LABELS = {
    "output_produced": "1 · Output produced",
    "steps_followed_skipped": "2 · Steps followed / skipped",
    "ambiguities": "3 · Ambiguities",
    "improvisation": "4 · Improvisation",
    "wanted_to_deviate": "5 · Wanted to deviate",
    "gates_hit": "6 · Gates hit",
}


REVIEWED: dict[str, str] = {"all": "All", "todo": "Not reviewed", "done": "Reviewed"}
# the queue: where a reviewer's reading changes most comes first
# (docs/reference/rules.md, "When unsure, regressed")
_QUEUE_RANK = {REGRESSED: 1, DIVERGED: 2}


def matches(row: CaseRow, which: str) -> bool:
    if which == "all":
        return True
    if which == "errored":
        return row.status != JUDGED
    if which == "uncertain":
        return row.uncertain
    if which == "overridden":
        return row.override is not None
    return row.status == JUDGED and row.verdict == which


def reviewed_matches(row: CaseRow, which: str) -> bool:
    """The Reviewed filter: a reviewed case is one a reviewer agreed with or overrode; a case to do
    is a judged one nobody has (an errored case has no verdict to review: it needs a re-run)."""
    if which == "done":
        return row.reviewed
    return which == "all" or (row.status == JUDGED and not row.reviewed)


def queue_key(row: CaseRow) -> tuple[int, int]:
    """Uncertain → regressed → diverged → the rest, by the judge's verdict, so a case keeps its place
    when a reviewer overrides it; within a group, the set's order."""
    if row.uncertain:
        return (0, 0)
    return (_QUEUE_RANK.get(row.judge_verdict or "", 3), 0)


def filter_rows(
    rows: list[CaseRow],
    which: str,
    reviewed: str = "all",
    found: set[str] | None = None,
    first: Collection[str] = (),
) -> list[CaseRow]:
    """The matching cases in queue order; `found` (a search's case ids) narrows them further. The
    cases in `first` (the reviewer's own, assigned to them) come before the others, each part in
    queue order; reviewed ones keep their place, so Previous and Next do not jump."""
    keep = [
        r
        for r in rows
        if matches(r, which) and reviewed_matches(r, reviewed) and (found is None or r.case_id in found)
    ]
    # sorted() is stable: the set's order within a group
    return sorted(keep, key=lambda r: (r.case_id not in first, *queue_key(r)))


def counts(rows: list[CaseRow]) -> dict[str, int]:
    return {k: sum(1 for r in rows if matches(r, k)) for k in FILTERS}


def reviewed_counts(rows: list[CaseRow]) -> dict[str, int]:
    return {k: sum(1 for r in rows if reviewed_matches(r, k)) for k in REVIEWED}


def search(store: Store, run_id: int, cases_by_id: dict, text: str) -> set[str]:
    """Case ids whose id, input or either transcript holds `text` (case-insensitive)."""
    needle = text.strip().casefold()
    found = {
        cid for cid, c in cases_by_id.items() if needle in cid.casefold() or needle in c.input.casefold()
    }
    for t in store.log.transcripts(run_id):
        if needle in t["case_id"].casefold() or any(
            needle in (t[k] or "").casefold() for k in ("teacher", "candidate")
        ):
            found.add(t["case_id"])
    return found


def neighbours(ids: list[str], current: str) -> tuple[str | None, str | None]:
    """(previous, next) case id in the filtered list, or None at either end."""
    if current not in ids:
        return None, (ids[0] if ids else None)
    i = ids.index(current)
    return (ids[i - 1] if i > 0 else None), (ids[i + 1] if i + 1 < len(ids) else None)


def table(rows: list[CaseRow]) -> list[dict]:
    """A compact row per case for the case list (errors show as errors, never as a verdict)."""
    out = []
    for r in rows:
        judged = r.status == JUDGED
        out.append(
            {
                "case": r.case_id,
                "verdict": r.verdict if judged else f"error ({r.error_stage or r.status})",
                "judge verdict": r.judge_verdict or "",
                "reviewed": ("agreed" if r.agreed else "overridden") if r.reviewed else "",
                "directness": f"{r.original_directness} → {r.candidate_directness}" if judged else "",
                "checks lost": f"{len(r.checks_lost)} of {len(r.checks)}" if r.checks else "",
                "calls": r.calls_made,
                # unpriced calls make the cost unknown, never $0 (a text column: "unknown" beside figures)
                "cost $": "unknown" if r.known_cost is None else f"{r.cost:.4f}",
                "delta": (r.behaviour_delta if judged else (r.error or ""))[:160],
            }
        )
    return out


@dataclass
class Side:
    transcript: str
    self_report: dict
    gate_truncated: bool


def side(store: Store, key: str | None) -> Side | None:
    row = store.cache.runner_result(key) if key else None
    if row is None:
        return None
    report = json.loads(row["self_report"])
    # fields a runner command did not report read "not reported" (an empty gates list is no "none")
    report.update(
        dict.fromkeys(json.loads(row.get("observed") or "{}").get("not_reported", []), NOT_REPORTED)
    )
    return Side(row["transcript"], report, bool(row["gate_truncated"]))


def format_field(name: str, value) -> str:
    if name != "gates_hit" or isinstance(value, str):
        return str(value or "")
    if not value:
        return "none encountered"
    lines = []
    for g in value:
        where = f" [{g.get('section')}]" if g.get("section") else ""
        lines.append(
            f"{g.get('gate_type', '')}{where}: {g.get('prompt_text', '')}\n  → {g.get('response_used', '')}"
        )
    return "\n".join(lines)


def self_report_rows(original: dict, candidate: dict) -> list[tuple[str, str, str]]:
    """The six self-report fields as (label, original, candidate), in the runner's order."""
    return [
        (FIELD_LABELS[f], format_field(f, original.get(f)), format_field(f, candidate.get(f)))
        for f in SELF_REPORT_FIELDS
    ]
