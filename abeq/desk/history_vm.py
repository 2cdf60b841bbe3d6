"""What the History page shows, computed without Streamlit: the rounds table cut to what fits a
1440 px screen, which models each chart's bars come from, the directness chart on its 1-5 scale, and
which two runs to compare by default (the same models, so a change is the candidate's)."""

from __future__ import annotations

from typing import Any

from ..results.reports.history import per_round, round_reviews
from ..results.store.store import Store
from ..timestamps import local
from ..vocab import EQUIVALENT
from . import links
from .render import md


def models(row: dict) -> str:
    """A run's runner and judge, once when they are the same model."""
    return row["runner"] if row["runner"] == row["judge"] else f"{row['runner']} / {row['judge']}"


def table(rows: list[dict], review: str, started: dict[int, str], reviewer: str | None) -> list[dict]:
    """One row per run, the columns a reviewer compares rounds by (the CLI's `abeq history` has all)."""

    def directness(r: dict) -> str:
        o, c = r["directness original"], r["directness candidate"]
        return "—" if o is None or c is None else f"{o:.1f} → {c:.1f}"

    return [
        {
            "open": links.review_url(review, r["run"], reviewer=reviewer),
            "round": r["round"],
            "candidate": r["candidate"],
            "models": models(r),
            "started": local(started.get(r["run"])),
            "status": r["status"],
            "compression": r["compression"],
            EQUIVALENT: r[EQUIVALENT],
            "diverged": r["diverged"],
            "regressed": r["regressed"],
            "errored": r["errored"],
            "overridden": r["overridden"],
            "pass": r["pass"],
            "directness": directness(r),
            "mutation score": r["mutation score"],
        }
        for r in rows
    ]


def chart_rounds(rows: list[dict], store: Store | None = None) -> tuple[list[dict], str, str]:
    """The runs the per-round charts draw: the latest run of each round made with the models of the
    review's latest run (a round re-run with another model is not mixed in silently), reading the
    reviews made in earlier runs of its round (given the store); what the bars come from, in
    Markdown; and a warning ('' when none) naming what was left out or mixed."""
    latest = rows[-1]
    same = [r for r in rows if models(r) == models(latest)]
    chosen = per_round(same)
    if store is not None:
        chosen = round_reviews(store, chosen, rows)

    def source(r: dict) -> str:
        carried = r.get("carried reviews")
        return f"round {r['round']}: run {r['run']} ({md(models(r))})" + (
            f", with {carried} review(s) from earlier runs of the round" if carried else ""
        )

    said = "Bars from " + "; ".join(source(r) for r in chosen) + "."
    left = sorted({r["round"] for r in rows} - {r["round"] for r in chosen}, key=str)
    others = sorted({models(r) for r in rows} - {models(latest)})
    warn = ""
    if others:
        warn = (
            f"Runs with other models are not in these charts ({md('; '.join(others))}): a change between "
            "models is not a change between candidates."
        ) + (f" Round(s) {md(', '.join(map(str, left)))} ran only with other models." if left else "")
    return chosen, said, warn


def directness_spec() -> dict[str, Any]:
    """Mean directness per round, original beside candidate, on the rubric's whole 1-5 scale."""
    return {
        "transform": [
            {"fold": ["directness original", "directness candidate"], "as": ["document", "directness"]}
        ],
        "mark": {"type": "bar"},
        "encoding": {
            "x": {"field": "round", "type": "nominal", "title": None, "axis": {"labelAngle": 0}},
            "xOffset": {"field": "document"},
            "y": {
                "field": "directness",
                "type": "quantitative",
                "scale": {"domain": [1, 5]},
                "axis": {"values": [1, 2, 3, 4, 5]},
                "title": "mean directness (1-5)",
            },
            "y2": {"datum": 1},
            "color": {
                "field": "document",
                "type": "nominal",
                "scale": {
                    "domain": ["directness original", "directness candidate"],
                    "range": ["#8c959f", "#0969da"],
                },
                "legend": {"orient": "bottom", "title": None},
            },
        },
    }


def default_pair(rows: list[dict]) -> tuple[int, int]:
    """Before and After for 'which cases changed': the latest run, and the latest earlier run made
    with the same models (else simply the one before it)."""
    after = rows[-1]
    same = [r for r in rows[:-1] if models(r) == models(after)]
    before = (same or rows[:-1])[-1]
    return before["run"], after["run"]


def pair_warning(rows: list[dict], before: int, after: int) -> str:
    """'' when the two runs used the same models; else what differs (Markdown)."""
    by = {r["run"]: r for r in rows}
    a, b = models(by[before]), models(by[after])
    if a == b:
        return ""
    return (
        f"These runs used different models (run {before}: {md(a)}; run {after}: {md(b)}): a changed "
        "verdict may be the models', not the candidate's."
    )
