"""What the History page shows, computed without Streamlit: the rounds table cut to what fits a
1024 px screen (the rest in one run's details), which models each chart's bars come from, the
directness chart on its 1-5 scale, and which two runs to compare by default (the same run key but
the candidate, so a change is the candidate's)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..results.reports.history import per_round, round_reviews
from ..results.store.store import Store
from ..timestamps import local
from ..vocab import DIVERGED, EQUIVALENT, REGRESSED
from . import links
from .render import md


def models(row: dict) -> str:
    """A run's runner and judge, once when they are the same model."""
    return row["runner"] if row["runner"] == row["judge"] else f"{row['runner']} / {row['judge']}"


def mutation_text(r: dict) -> str:
    """The set's mutation score as the desk shows it: its caveat whenever it is not a trust figure,
    "—" when none was measured (never a bare empty cell, never "None")."""
    score = r.get("mutation score")
    if score is None:
        return "—"
    return f"{score:.0%}" + ("" if r.get("mutation trust figure", True) else " (not a trust figure)")


def _directness(r: dict) -> str:
    o, c = r["directness original"], r["directness candidate"]
    return "—" if o is None or c is None else f"{o:.1f} → {c:.1f}"


def table(rows: list[dict], review: str, started: dict[int, str], reviewer: str | None) -> list[dict]:
    """One row per run, the columns a reviewer compares rounds by, narrow enough for 1024 px; the
    rest of a run is in `details` (the CLI's `abeq history` has every column)."""
    return [
        {
            "open": links.review_url(review, r["run"], reviewer=reviewer),
            "run": r["run"],
            "round": "—" if r["round"] is None else str(r["round"]),
            "candidate": r["candidate"],
            "started": local(started.get(r["run"])) or "—",
            EQUIVALENT: r[EQUIVALENT],
            "diverged": r["diverged"],
            "regressed": r["regressed"],
            "errored": r["errored"],
            "pass": "—" if r["pass"] is None else ("✓" if r["pass"] else "✗"),
        }
        for r in rows
    ]


# the rounds table's columns: (key, header, what the header's tooltip says)
COLUMNS = [
    ("run", "run", "Open this run on Review"),
    ("round", "round", ""),
    ("candidate", "candidate", "The candidate document"),
    ("started", "started", "When the run started, local time"),
    (EQUIVALENT, "equiv.", EQUIVALENT),
    ("diverged", "div.", DIVERGED),
    ("regressed", "regr.", REGRESSED),
    ("errored", "err.", "errored: no verdict"),
    ("pass", "pass", "✓ the run passed its gate; ✗ it failed"),
]


def table_html(rows: list[dict]) -> str:
    """The rounds table as HTML that wraps inside its column (no sideways scroll at 1024 px): every
    name whole, with a tooltip, the start's date and time, each run a link to it on Review."""
    import html

    from .render import _TD, _TH

    head = "".join(f'<th style="{_TH}" title="{html.escape(t)}">{html.escape(h)}</th>' for _, h, t in COLUMNS)
    body = []
    for r in rows:
        cells = []
        for key, _, _ in COLUMNS:
            value = html.escape(str(r[key]))
            if key == "run":
                value = f'<a href="{html.escape(r["open"], quote=True)}" target="_blank">run {value}</a>'
            style = _TD + (";white-space:normal" if key != "candidate" else "")
            cells.append(f'<td style="{style}" title="{html.escape(str(r[key]), quote=True)}">{value}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        '<table class="abeq-rounds" style="width:100%;border-collapse:collapse;color:#1f2328;'
        f'font:13px/1.5 sans-serif"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def details(r: dict, started: str | None) -> list[dict]:
    """One run's other figures, as (what, value) rows: none of them empty or "None"."""
    said = {
        "run": r["run"],
        "candidate": r["candidate"],
        "started": local(started) or "—",
        "status": r["status"],
        "models (runner / judge)": models(r),
        "size (candidate / original characters)": "—"
        if r["compression"] is None
        else f"{r['compression']:.2f}",
        "overridden": r["overridden"],
        "directness (original → candidate)": _directness(r),
        "mutation score of the set": mutation_text(r),
    }
    return [{"what": k, "value": str(v)} for k, v in said.items()]


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
        return f"round {'—' if r['round'] is None else r['round']}: run {r['run']} ({md(models(r))})" + (
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


# the parts of a run's stored config that are not in its key (where it ran, how fast, how to resume)
_NOT_KEY = ("concurrency", "api_base", "graded_cases", "settings", "sources")


def run_key(run: Mapping[str, Any]) -> dict[str, Any]:
    """What identifies a run besides its candidate, flattened ("runner.api_base": ...): the original,
    the set, and every setting in its key (models, sampling, API base, judge samples, prompts, mode)."""
    try:
        config = json.loads(run.get("config") or "{}")
    except ValueError:
        config = {}
    out: dict[str, Any] = {"original": run.get("original_hash"), "set": run.get("transfer_set_hash")}

    def flat(prefix: str, v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                flat(f"{prefix}.{k}" if prefix else k, x)
        else:
            out[prefix] = v

    flat("", {k: v for k, v in config.items() if k not in _NOT_KEY})
    out.setdefault("runner.model", run.get("runner_model"))
    out.setdefault("judge.model", run.get("judge_model"))
    return out


def key_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """What differs between two runs' keys (candidate aside), as "runner.api_base (x vs y)"."""
    ka, kb = run_key(a), run_key(b)
    out = []
    for k in sorted(set(ka) | set(kb)):
        if ka.get(k) != kb.get(k):
            short = {"original": "the original", "set": "the transfer set"}.get(k)
            out.append(short or f"{k} ({_shown(ka.get(k))} vs {_shown(kb.get(k))})")
    return out


def _shown(v: Any) -> str:
    return "none" if v is None else str(v)[:60]


def default_pair(rows: list[dict], runs: Mapping[int, Mapping[str, Any]] | None = None) -> tuple[int, int]:
    """Before and After for 'which cases changed': the latest run, and the latest earlier run whose
    key is the same but for the candidate, preferring another candidate (two runs of one candidate
    differ only in what is not compared); else the latest earlier run with the same models; else
    simply the one before it."""
    after = rows[-1]
    earlier = rows[:-1]
    if runs:
        same_key = [r for r in earlier if not key_differences(runs[r["run"]], runs[after["run"]])]
        other = [r for r in same_key if r["candidate"] != after["candidate"]]
        if other or same_key:
            return (other or same_key)[-1]["run"], after["run"]
    same = [r for r in earlier if models(r) == models(after)]
    before = (same or earlier)[-1]
    return before["run"], after["run"]


def pair_warning(
    rows: list[dict], before: int, after: int, runs: Mapping[int, Mapping[str, Any]] | None = None
) -> str:
    """'' when the two runs differ in nothing but the candidate; else what differs (Markdown): the
    models, an API base, the set or any other part of the run's key."""
    by = {r["run"]: r for r in rows}
    a, b = models(by[before]), models(by[after])
    said = []
    if a != b:
        said.append(
            f"These runs used different models (run {before}: {md(a)}; run {after}: {md(b)}): a changed "
            "verdict may be the models', not the candidate's."
        )
    if runs and before in runs and after in runs:
        differ = [
            d
            for d in key_differences(runs[before], runs[after])
            if not d.startswith(("runner.model", "judge.model"))
        ]
        if differ:
            said.append(
                f"Runs {before} and {after} differ in more than the candidate: {md('; '.join(differ))}. "
                "A changed verdict may come from that."
            )
    if before == after:
        said.append("Before and After are the same run.")
    elif runs and by[before]["candidate"] == by[after]["candidate"]:
        said.append(
            f"Both runs are of the same candidate ({md(by[after]['candidate'])}): what changed is not the "
            "candidate's doing."
        )
    return " ".join(said)
