"""What the Compare page shows, computed without Streamlit: the runs with a judged case to pick
from, a link's run and case, the comparison's settings and assertions as typed, and a result in the
words, tables and captions the page lays out. The last result is kept in session state
(comparisons are not stored in sqlite). `compare_page` only draws these."""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping

from ..comparator.comparator import Weights, rubric_rows
from ..results.store.rows import RunRow
from ..results.store.store import Store
from ..schemas import ComparisonResult
from ..vocab import JUDGED
from . import links
from .render import md

RESULT_KEY = "compare_result"
FROM_TEXT, FROM_RUN = "Pasted or loaded text", "A case from a run"
ABOUT = (
    "Which of two outputs does the task better? The judge sees them only as A and B, with origin "
    "labels stripped, and judges both orders; a winner is declared only when the same output wins "
    "both. Overall = 60% content + 40% structure: abeq's weighting (the upstream comparator averages "
    "the two)."
)


def judged_runs(store: Store) -> list[RunRow]:
    """The runs with at least one judged case (the only ones with two outputs to compare); not the
    runs a mutation test made of its mutants (`abeq mutate`), which are no person's candidates."""
    mutants = store.mutations.mutation_run_ids()
    return [
        r
        for r in store.log.runs()
        if r["id"] not in mutants and any(c["status"] == JUDGED for c in store.log.run_cases(r["id"]))
    ]


def judged_cases(store: Store, run_id: int) -> list[str]:
    return [c["case_id"] for c in store.log.run_cases(run_id) if c["status"] == JUDGED]


def adopt_link(params: Mapping, state: MutableMapping, run_ids: list[int]) -> None:
    """A link with a run (and a case) opens that case here, like on Review."""
    run, case = (
        links.adopt(params, state, "run", scope="compare"),
        links.adopt(params, state, "case", scope="compare"),
    )
    if links.run_id(run) in run_ids:
        state["compare_src"], state["compare_run"] = FROM_RUN, links.run_id(run)
        if case is not None:
            state["compare_case"] = case


def keep_valid(state: MutableMapping, key: str, options: list) -> None:
    """A kept choice that is no longer an option (another run, a case it lacks) falls to the first."""
    if state.get(key) not in options:
        state[key] = options[0]


def run_label(run: dict, review_names: dict[int, str]) -> str:
    return f"run {run['id']} · review {review_names.get(run['review_id'], '?')}"


def assertions(raw: str) -> list | None:
    """The assertions as typed: a JSON list, else one per line; None when there are none."""
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return [ln.strip() for ln in raw.splitlines() if ln.strip()]


def settings(seed_text: str, content_weight: float) -> dict:
    """The seed and weights a comparison takes; ValueError when the seed is not a whole number."""
    return {
        "seed": int(seed_text) if seed_text.strip() else None,
        "weights": Weights(content=content_weight, structure=round(1 - content_weight, 10)),
    }


def verdict(result: ComparisonResult) -> tuple[str, str]:
    """The outcome as (kind, Markdown): warning when the orders disagreed, info for a tie, success
    for a winner."""
    if result.order_dependent:
        return "warning", (
            f"**Tie, order-dependent**: the two orders disagreed, so no winner is declared. "
            f"Order 1: {result.orders[0].winner_input}; order 2: {result.orders[1].winner_input}."
        )
    if result.winner == "tie":
        return "info", "**Tie** in both orders."
    wins = {"A": "a wins", "B": "b wins"}[result.winner]
    return "success", f"**{wins}** in both orders."


def orders_caption(result: ComparisonResult) -> str:
    return (
        " · ".join(
            f"order {o.order}: a shown as {'A' if o.shown['A'] == 'a' else 'B'}, judge picked "
            f"{o.winner_presented} (= {o.winner_input})" + (" overruling its rubric" if o.overruled else "")
            for o in result.orders
        )
        + f" · seed {result.seed}"
    )


def rubric(result: ComparisonResult) -> list[dict]:
    return rubric_rows(result)


def totals(result: ComparisonResult) -> tuple[str, list[dict]]:
    """The weighted totals' title and rows."""
    title = (
        f"**Weighted totals** (content {result.weights['content']:.0%}, "
        f"structure {result.weights['structure']:.0%})"
    )
    rows = [
        {
            "output": side,
            "content": getattr(result.weighted_totals, side).content,
            "structure": getattr(result.weighted_totals, side).structure,
            "overall": getattr(result.weighted_totals, side).overall,
        }
        for side in ("a", "b")
    ]
    return title, rows


def revealed(result: ComparisonResult) -> str:
    """What a and b were, told once judging is done ('' for pasted text without labels)."""
    if not result.inputs:
        return ""
    return "Revealed after judging: " + "; ".join(f"{k} = {md(v)}" for k, v in result.inputs.items())


def download(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)
