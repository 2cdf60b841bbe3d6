"""A sampled run's cases (--runner-samples N) as a reader sees them: each behaviour's rate on each
side beside the verdict, and the samples' verdicts pair by pair. The Markdown report and the desk
both draw from here."""

from __future__ import annotations

from .report import CaseRow


def rates_line(row: CaseRow) -> str:
    """The case's rates in one line: 'keeps …: teacher 5/5, candidate 2/5 (lost, p=0.083)'."""
    s = row.sampling or {}
    return "; ".join(
        f"{r['behaviour']}: teacher {r['teacher']}/{r['n']}, candidate {r['candidate']}/{r['n']}"
        + (
            f" (lost, p={r['p']:.3g})"
            if r["lost"]
            else f" (p={r['p']:.3g})"
            if r["candidate"] < r["teacher"]
            else ""
        )
        for r in s.get("rates", [])
    )


def verdict_label(row: CaseRow) -> str:
    """The verdict, with 'undecided' beside it when N was too small to tell."""
    return f"{row.verdict} (undecided)" if row.undecided else str(row.verdict)


def samples_md(rows: list[CaseRow], cell=str) -> list[str]:
    """The Markdown section of a sampled run: how a loss is decided, then each case's rates."""
    sampled = [r for r in rows if r.sampling]
    if not sampled:
        return []
    s = sampled[0].sampling or {}
    out = [
        "",
        "## Runner samples",
        "",
        f"Each arm ran {s['n']} times per case at temperature {s['temperature']:g}. A case is regressed only "
        f"when the candidate shows a behaviour less often than the original beyond chance ({s['test']}, "
        f"p <= {s['alpha']:g}); diverged only when its pairs are judged equivalent less often than the "
        f"original's own pairs, beyond chance; 'undecided' marks a lower rate that {s['n']} samples cannot "
        "tell from chance and that could still be a material loss (more samples could change the verdict).",
        "",
        "| case | verdict | rates (original, candidate) | judge per pair |",
        "|---|---|---|---|",
    ]
    for r in sampled:
        pairs = ", ".join((r.sampling or {}).get("pair_verdicts", []))
        out.append(f"| {cell(r.case_id)} | {verdict_label(r)} | {cell(rates_line(r))} | {cell(pairs)} |")
    return out
