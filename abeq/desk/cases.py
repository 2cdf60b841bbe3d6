"""One run's cases on the Review page: filters, prev/next, the two runs of a case side by side."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..results.report import CaseRow
from ..results.store import Store
from ..schemas import NOT_REPORTED, SELF_REPORT_FIELDS

FILTERS: dict[str, str] = {
    "all": "All",
    "candidate-regressed": "Regressed",
    "candidate-diverged": "Diverged",
    "equivalent": "Equivalent",
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


def matches(row: CaseRow, which: str) -> bool:
    if which == "all":
        return True
    if which == "errored":
        return row.status != "judged"
    if which == "uncertain":
        return row.uncertain
    if which == "overridden":
        return row.override is not None
    return row.status == "judged" and row.verdict == which


def filter_rows(rows: list[CaseRow], which: str) -> list[CaseRow]:
    """The matching cases, uncertain ones first: overruling those is the reviewer's main job."""
    return sorted((r for r in rows if matches(r, which)), key=lambda r: not r.uncertain)


def counts(rows: list[CaseRow]) -> dict[str, int]:
    return {k: sum(1 for r in rows if matches(r, k)) for k in FILTERS}


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
        judged = r.status == "judged"
        out.append(
            {
                "case": r.case_id,
                "verdict": r.verdict if judged else f"error ({r.error_stage or r.status})",
                "judge verdict": r.judge_verdict or "",
                "overridden": r.override is not None,
                "directness": f"{r.original_directness} → {r.candidate_directness}" if judged else "",
                "checks lost": f"{len(r.checks_lost)} of {len(r.checks)}" if r.checks else "",
                "calls": r.calls_made,
                "cost $": round(r.cost, 4),
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
    row = store.runner_result(key) if key else None
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
    """The six self-report fields as (label, original, candidate), in the SPEC's order."""
    return [
        (FIELD_LABELS[f], format_field(f, original.get(f)), format_field(f, candidate.get(f)))
        for f in SELF_REPORT_FIELDS
    ]
