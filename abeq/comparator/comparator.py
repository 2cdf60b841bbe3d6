"""The blind comparator: which of two outputs does a task better, judged in both orders.

Blindness. The judge sees the outputs only as A and B. `strip_origin` first removes what would
tell it where an output came from (origin labels, origin front matter, model names, revealing
file paths). Which input is shown as A in the first order is drawn from a seed, recorded in
`seed` and `mapping`, and revealed only in the result, never in a prompt.

Both orders. LLM judges favour a position, most of all when two outputs are close. So every
comparison is judged twice, with the inputs swapped, and each reply is mapped back to the inputs.
A winner is declared only when the same input wins both orders; any other disagreement is
reported as a tie with `order_dependent: true`. Both raw judgements are kept in `orders`.

Labels in comparison.json. The judge's own replies (in `orders[].judgement`) use the labels it was
shown. Everything at the top level, the keys of fixed shape included (docs/reference/rules.md,
"comparison.json"), is about the inputs as given: `a`/"A" is output_a (`--a`), `b`/"B" is output_b
(`--b`), whichever position each was shown in. Scores there are the mean of both orders; notes,
summaries and assertion notes come from the order that showed output_a as A, so their "A" and "B"
mean the same as the keys.
An assertion passes for an input only when both orders say PASS.

Weighting. Totals are computed here from the scores, never taken from the model: content is
the mean of the five content criteria, structure the mean of the five structural ones, and
overall = 0.6 * content + 0.4 * structure by default (configurable). The 60/40 weighting is
abeq's choice; the upstream comparator this follows averages content and structure equally.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import secrets
from collections.abc import Callable, Iterable
from statistics import mean
from types import GenericAlias
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, create_model

from ..errors import InputError
from ..models.ask import Outcome, ask_validated
from ..models.call import CallPolicy
from ..models.spec import ModelSpec
from ..prompts import Prompt, load_prompt, messages
from ..schemas import (
    ComparatorReply,
    ComparisonResult,
    CriterionScore,
    ExpectationResult,
    InputSide,
    MeanRubric,
    OrderJudgement,
    PassFail,
    Winner,
)
from ..vocab import CONTENT_CRITERIA, STRUCTURE_CRITERIA
from .blinding import strip_origin
from .scoring import (
    DEFAULT_WEIGHTS,
    Weights,
    _rubric_winner,
    check_text,
    normalize_assertions,
    rubric_rows,
    weighted_totals,
)

if TYPE_CHECKING:
    from ..results.store.store import Store


def comparator_prompt() -> Prompt:
    return load_prompt("comparator")


def reply_check(assertions: list[dict]) -> Callable[[ComparatorReply], None]:
    """Code checks what code can: exactly one result per given assertion id."""
    want = [a["id"] for a in assertions]

    def check(r: ComparatorReply) -> None:
        got = [e.assertion_id for e in r.expectation_results]
        if sorted(got) != sorted(want):
            raise ValueError(
                f"expectation_results must have exactly one entry per assertion_id {want or '(none)'}; "
                f"got {got or '(none)'}"
            )

    return check


def reply_model(assertions: list[dict]) -> type[ComparatorReply]:
    """ComparatorReply narrowed to these assertions: exactly one result per id, ids from the list.

    The narrowed schema goes to the model too, so a grammar-constrained model (the embedded one)
    cannot invent assertions, nor leave one out; `reply_check` still checks each id once.
    """
    return _reply_model(tuple(a["id"] for a in assertions))


@functools.lru_cache(maxsize=64)
def _reply_model(ids: tuple[str, ...]) -> type[ComparatorReply]:
    # One class per id list, not per call: response schemas are cached per class.
    # the field types are built at run time (Literal of these ids, a list of a class made here),
    # which mypy cannot follow: they are held as Any
    n = len(ids)
    results: Any
    if n == 0:
        results = (Annotated[list[ExpectationResult], Field(max_length=0)], ...)
    else:
        id_type: Any = Literal[ids]
        item = create_model("AssertionResult", __base__=ExpectationResult, assertion_id=(id_type, ...))
        results = (Annotated[GenericAlias(list, item), Field(min_length=n, max_length=n)], ...)
    return create_model(
        "ComparatorReply",
        __base__=ComparatorReply,
        __doc__=ComparatorReply.__doc__,
        expectation_results=results,
    )


def blind_messages(task: str, shown_a: str, shown_b: str, assertions: list[dict]) -> list[dict]:
    blocks = [("task", task), ("output_a", shown_a), ("output_b", shown_b)]
    if assertions:
        blocks.append(("assertions", json.dumps(assertions, ensure_ascii=False, indent=1)))
    return messages(comparator_prompt(), blocks)


def _swap(side: InputSide) -> InputSide:
    return "b" if side == "a" else "a"


# ---------------------------------------------------------------- comparing
async def acompare(
    task: str,
    output_a: str,
    output_b: str,
    assertions: list[Any] | None = None,
    spec: ModelSpec | None = None,
    seed: int | None = None,
    *,
    weights: Weights = DEFAULT_WEIGHTS,
    labels: dict | None = None,
    hide: Iterable[str] = (),
    policy: CallPolicy | None = None,
) -> ComparisonResult:
    """Judge output_a against output_b in both orders; raises ModelCallError when no valid judgement came."""
    spec = spec or ModelSpec()
    task = check_text(task, "task")
    raw = {"a": check_text(output_a, "output a"), "b": check_text(output_b, "output b")}
    items = normalize_assertions(assertions)
    hide = list(hide)
    blind = {k: strip_origin(v, hide, keep=task) for k, v in raw.items()}
    for k, v in blind.items():
        if not v.strip():
            raise InputError(f"output {k} is nothing but origin metadata; nothing is left to compare")
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    first: InputSide = "a" if random.Random(seed).random() < 0.5 else "b"
    shown: list[dict[str, InputSide]] = [{"A": first, "B": _swap(first)}, {"A": _swap(first), "B": first}]
    policy = policy or CallPolicy()
    check, reply_cls = reply_check(items), reply_model(items)

    async def judge(order: int) -> Outcome:
        s = shown[order]
        return await ask_validated(
            spec, blind_messages(task, blind[s["A"]], blind[s["B"]], items), reply_cls, policy, check=check
        )

    outcomes = await asyncio.gather(judge(0), judge(1))
    orders = []
    for i, (s, o) in enumerate(zip(shown, outcomes)):
        r: ComparatorReply = o.value
        t = weighted_totals(r.rubric_scores, weights)
        rw = _rubric_winner(t)
        orders.append(
            OrderJudgement(
                order=i + 1,
                shown=s,
                judgement=r,
                weighted_totals=t,
                winner_presented=r.winner,
                winner_input=s[r.winner] if r.winner in s else "tie",
                rubric_winner_presented=rw,
                overruled=rw != r.winner,
                raw=o.raw,
                attempts=o.attempts,
            )
        )
    changed = {k: blind[k] != raw[k].replace("\r\n", "\n").strip("\n") for k in raw}
    return _combine(orders, items, seed, spec, weights, labels or {}, changed)


def _combine(
    orders: list[OrderJudgement],
    items: list[dict],
    seed: int,
    spec: ModelSpec,
    weights: Weights,
    labels: dict,
    changed: dict,
) -> ComparisonResult:
    """Map both orders back to the inputs and reach the one verdict (see the module docstring)."""
    ident = next(o for o in orders if o.shown["A"] == "a")  # the order whose A/B text matches a/b
    other = next(o for o in orders if o.shown["A"] == "b")

    def by_input(o: OrderJudgement, crit: CriterionScore) -> dict[str, int]:
        return {"a": crit.a, "b": crit.b} if o.shown["A"] == "a" else {"a": crit.b, "b": crit.a}

    rubric: dict[str, dict[str, dict[str, Any]]] = {}
    for group, names in (("content_quality", CONTENT_CRITERIA), ("structural_quality", STRUCTURE_CRITERIA)):
        rubric[group] = {}
        for n in names:
            per = [by_input(o, getattr(getattr(o.judgement.rubric_scores, group), n)) for o in orders]
            note = getattr(getattr(ident.judgement.rubric_scores, group), n).note
            rubric[group][n] = {"a": mean(p["a"] for p in per), "b": mean(p["b"] for p in per), "note": note}
    w1, w2 = (o.winner_input for o in orders)
    order_dependent = w1 != w2
    label: dict[str, Winner] = {"a": "A", "b": "B", "tie": "tie"}
    winner: Winner = "tie" if order_dependent else label[w1]
    name = {"a": "A", "b": "B", "tie": "a tie"}
    if order_dependent:
        head = (
            "Order-dependent, so reported as a tie: with a shown as A the judge chose "
            f"{name[ident.winner_input]}; "
            f"with b shown as A it chose {name[other.winner_input]} (A = output a, B = output b)."
        )
    elif winner == "tie":
        head = "Judged in both orders: a tie both times."
    else:
        head = f"Judged in both orders: {winner} won both."
    results = []
    for item in items:
        per_order: list[dict[str, PassFail]] = []
        for o in orders:
            e = next(x for x in o.judgement.expectation_results if x.assertion_id == item["id"])
            per_order.append({o.shown["A"]: e.a_result, o.shown["B"]: e.b_result})
        note = next(x for x in ident.judgement.expectation_results if x.assertion_id == item["id"]).note
        res: dict[str, PassFail] = {}
        for side in ("a", "b"):
            vals = {p[side] for p in per_order}
            res[side] = "PASS" if vals == {"PASS"} else "FAIL"
            if len(vals) > 1:
                note += f" [orders disagreed on {side}: PASS in one order, FAIL in the other; reported FAIL]"
        results.append(
            ExpectationResult(
                assertion_id=item["id"],
                assertion_text=item["text"],
                a_result=res["a"],
                b_result=res["b"],
                note=note.strip(),
            )
        )
    mean_rubric = MeanRubric.model_validate(rubric)
    return ComparisonResult(
        winner=winner,
        reasoning=f"{head} {ident.judgement.reasoning}".strip(),
        rubric_scores=mean_rubric,
        weighted_totals=weighted_totals(mean_rubric, weights),
        output_quality=ident.judgement.output_quality,
        expectation_results=results,
        order_dependent=order_dependent,
        seed=seed,
        mapping={f"order_{o.order}": dict(o.shown) for o in orders},
        orders=orders,
        weights={"content": weights.content, "structure": weights.structure},
        judge={"model": spec.name, "prompt": comparator_prompt().ref},
        inputs=dict(labels),
        blinding=changed,
    )


def compare(
    task: str,
    output_a: str,
    output_b: str,
    assertions: list[Any] | None = None,
    spec: ModelSpec | None = None,
    seed: int | None = None,
    **kw: Any,
) -> ComparisonResult:
    """Blind comparison of two outputs for one task, judged in both orders (sync wrapper of acompare)."""
    return asyncio.run(acompare(task, output_a, output_b, assertions, spec, seed, **kw))


# ---------------------------------------------------------------- stored runs
def compare_run_case(
    store: Store, run_id: int, case_id: str, spec: ModelSpec | None = None, seed: int | None = None, **kw: Any
) -> ComparisonResult:
    """Compare the teacher (a) and candidate (b) transcripts of one case of a stored run."""
    run = store.log.run(run_id)
    if run is None:
        raise InputError(f"no run {run_id} in this database", path=store.path)
    rc = store.log.run_case(run_id, case_id)
    if rc is None:
        raise InputError(f"run {run_id} has no case '{case_id}'")
    teacher, candidate = (
        store.cache.runner_result(k) if k else None for k in (rc["teacher_key"], rc["candidate_key"])
    )
    if teacher is None or candidate is None:
        raise InputError(
            f"case '{case_id}' of run {run_id} does not have both transcripts (it errored or is pending)",
            hint="Compare a case that was judged.",
        )
    ts = store.inputs.transfer_set(run["transfer_set_hash"])
    case = next((c for c in (ts.cases if ts else []) if c.id == case_id), None)
    if case is None:
        raise InputError(f"the transfer set of run {run_id} has no case '{case_id}'")
    docs = [store.inputs.document(run[h]) for h in ("original_hash", "candidate_hash")]
    names = [d["name"] for d in docs if d] + [run.get("runner_model") or ""]
    hide = [n for n in names if n] + [n.rsplit(".", 1)[0] for n in names if n and "." in n]
    labels = {
        "a": f"teacher run of run {run_id}, case {case_id} ({names[0] if docs[0] else 'original'})",
        "b": f"candidate run of run {run_id}, case {case_id} ({names[1] if docs[1] else 'candidate'})",
    }
    return compare(
        case.input,
        teacher["transcript"],
        candidate["transcript"],
        case.expectations or None,
        spec,
        seed,
        labels=labels,
        hide=hide,
        **kw,
    )


__all__ = [
    "compare",
    "acompare",
    "compare_run_case",
    "strip_origin",
    "weighted_totals",
    "Weights",
    "DEFAULT_WEIGHTS",
    "normalize_assertions",
    "rubric_rows",
]
