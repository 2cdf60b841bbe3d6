"""HTML and Markdown the desk builds around untrusted text: everything is escaped here."""

from __future__ import annotations

import html

from ..errors import AbeqError
from ..results.reports.diff import marked_pair
from ..untrusted import md_escape
from ..vocab import DIVERGED, EQUIVALENT, REGRESSED

VERDICT_COLOR = {EQUIVALENT: "green", DIVERGED: "orange", REGRESSED: "red"}

_TABLE = (
    "width:100%;border-collapse:collapse;table-layout:fixed;color:#1f2328;"
    "font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace"
)
_TH = "text-align:left;padding:4px 8px;background:#f6f8fa;border:1px solid #d0d7de;font-weight:600"
_TD = (
    "vertical-align:top;padding:4px 8px;border:1px solid #d0d7de;white-space:pre-wrap;overflow-wrap:anywhere"
)
_LABEL = _TD + ";width:17%;font-weight:600;background:#f6f8fa;white-space:normal"
_DIFF = ";background:#fff8c5"


def md(text: str) -> str:
    """Text shown through a Markdown-rendering element (st.info, st.error…) as literal text."""
    return md_escape(text)


def error_md(e: AbeqError) -> str:
    """An error for st.error: what went wrong, then (a paragraph of its own) what to do."""
    head = f"{e.path}: {e.message}" if e.path else e.message
    return md(head) + (f"\n\n{md(e.hint)}" if e.hint else "")


def self_report_html(
    rows: list[tuple[str, str, str]], left_label: str = "Original", right_label: str = "Candidate"
) -> str:
    """The six fields side by side, one row per field; inside a row that differs, the words the
    candidate dropped are struck through on the left and the ones it added marked on the right."""
    e = html.escape
    head = (
        f'<tr><th style="{_TH};width:17%">Field</th><th style="{_TH}">{e(left_label)}</th>'
        f'<th style="{_TH}">{e(right_label)}</th></tr>'
    )
    body = []
    for label, a, b in rows:
        differs = a.strip() != b.strip()
        tint = _DIFF if differs else ""
        left, right, _ = marked_pair(a, b) if differs else (e(a), e(b), True)
        body.append(
            f'<tr><td style="{_LABEL}">{e(label)}{"<br><small>differs</small>" if differs else ""}</td>'
            f'<td style="{_TD}{tint}">{left}</td><td style="{_TD}{tint}">{right}</td></tr>'
        )
    return f'<table style="{_TABLE}">{head}{"".join(body)}</table>'


_OUTCOME_TINT = {
    "lost": ";background:#ffebe9",
    "failed-both": ";background:#f6f8fa",
    "gained": ";background:#dafbe1",
}


def checks_html(checks) -> str:
    """A case's checks on both arms: check, teacher ✓/✗, candidate ✓/✗, evidence (CheckResult list)."""
    e = html.escape

    def mark(v):
        return "—" if v is None else ("✓" if v else "✗")

    # the two mark columns are as wide as their headers (in em, not a share of a narrow table, where
    # "Teacher" and "Candidate" ran into each other); Check and Evidence share the rest
    mark_th = f"{_TH};white-space:nowrap;text-align:center"
    head = (
        f'<tr><th style="{_TH};width:32%">Check</th><th style="{mark_th};width:6.5em">Teacher</th>'
        f'<th style="{mark_th};width:7.5em">Candidate</th><th style="{_TH}">Evidence</th></tr>'
    )
    body = []
    for c in checks:
        tint = _OUTCOME_TINT.get(c.outcome, "")
        if c.outcome == "skipped":
            evidence = f"skipped: {c.reason}"
        else:
            evidence = f"teacher: {c.teacher_evidence}\ncandidate: {c.candidate_evidence}"
        note = {"lost": "lost on the candidate", "failed-both": "fails on both: no regression"}.get(
            c.outcome, ""
        )
        label = e(c.label) + (f"<br><small>{e(c.description)}</small>" if c.description else "")
        body.append(
            f'<tr class="abeq-check" data-outcome="{e(c.outcome)}"><td style="{_TD}{tint}">{label}'
            f"{f'<br><small>{note}</small>' if note else ''}</td>"
            f'<td style="{_TD}{tint};text-align:center">{mark(c.teacher)}</td>'
            f'<td style="{_TD}{tint};text-align:center">{mark(c.candidate)}</td>'
            f'<td style="{_TD}{tint}">{e(evidence)}</td></tr>'
        )
    return f'<table style="{_TABLE}">{head}{"".join(body)}</table>'
