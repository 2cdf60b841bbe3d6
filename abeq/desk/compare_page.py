"""Compare: the blind comparator on pasted or loaded text, or on a stored run's teacher and candidate.

The page only draws: it reads widgets, calls abeq.comparator and renders the result. The last
result is kept in session state (comparisons are not stored in sqlite).
"""

from __future__ import annotations

import json

RESULT_KEY = "compare_result"


def _text_input(st, label: str, key: str, height: int = 160) -> str:
    up = st.file_uploader(f"Load {label.lower()} from a file", key=f"{key}_file", type=None)
    if up is not None:
        try:
            return up.getvalue().decode("utf-8-sig")
        except UnicodeDecodeError:
            st.error(f"{label}: the file is not UTF-8 text")
            return ""
    return st.text_area(label, key=key, height=height)


def render_compare_page() -> None:
    """Draw the Compare page (the app wires it into navigation)."""
    import pandas as pd
    import streamlit as st

    from ..comparator.comparator import compare, compare_run_case, rubric_rows
    from ..errors import AbeqError
    from ..models import DEFAULT_MODEL, ModelSpec
    from . import links, session
    from .render import error_md, md

    st.title("Compare")
    st.caption(
        "Which of two outputs does the task better? The judge sees them only as A and B, with origin "
        "labels stripped, and judges both orders; a winner is declared only when the same output wins "
        "both. Overall = 60% content + 40% structure: abeq's weighting (the upstream comparator averages "
        "the two)."
    )
    c1, c2, c3 = st.columns([2, 2, 1])
    model = c1.text_input("Judge model", value=DEFAULT_MODEL, key="compare_model")
    api_base = c2.text_input("API base (optional)", key="compare_api_base") or None
    seed_text = c3.text_input("Seed (optional)", key="compare_seed")
    content_w = st.slider(
        "Content weight (structure gets the rest)", 0.0, 1.0, 0.6, 0.05, key="compare_weight"
    )
    spec = ModelSpec.for_purpose(model, "compare", api_base=api_base)
    if spec.provider.caution:
        st.info(session.EMBEDDED_NOTE)  # our own Markdown: rendered, not escaped

    ss, q = st.session_state, st.query_params
    store = session.open_store()
    runs = [r for r in store.runs() if any(c["status"] == "judged" for c in store.run_cases(r["id"]))]
    run_ids = [r["id"] for r in runs]
    # a link with a run (and a case) opens that case here, like on Review
    asked_run, asked_case = (
        links.adopt(q, ss, "run", scope="compare"),
        links.adopt(q, ss, "case", scope="compare"),
    )
    if asked_run is not None and asked_run.isdigit() and int(asked_run) in run_ids:
        ss["compare_src"], ss["compare_run"] = "A case from a run", int(asked_run)
        if asked_case is not None:
            ss["compare_case"] = asked_case
    source = st.radio(
        "Compare", ["Pasted or loaded text", "A case from a run"], horizontal=True, key="compare_src"
    )
    go = None
    if source == "A case from a run":
        if not runs:
            st.info("No run with a judged case yet: start one on Run.")
        else:
            review_names = {r["id"]: r["name"] for r in store.reviews()}
            by_id = {r["id"]: r for r in runs}
            if ss.get("compare_run") not in run_ids:
                ss["compare_run"] = run_ids[0]
            run_id = st.selectbox(
                "Run",
                run_ids,
                key="compare_run",
                format_func=lambda i: f"run {i} · review {review_names.get(by_id[i]['review_id'], '?')}",
            )
            cases = [c["case_id"] for c in store.run_cases(run_id) if c["status"] == "judged"]
            if ss.get("compare_case") not in cases:
                ss["compare_case"] = cases[0]
            case_id = st.selectbox("Case", cases, key="compare_case")
            review_name = review_names.get(by_id[run_id]["review_id"])
            links.publish(q, ss, "run", run_id, scope="compare")
            links.publish(q, ss, "case", case_id, scope="compare")
            st.page_link(
                links.REVIEW_PAGE,
                label="Read this case on Review",
                icon=":material/rate_review:",
                query_params=links.review_params(review_name, run_id, case_id),
            )
            st.caption(
                "a = the teacher run (original document), b = the candidate run; the judge is not told."
            )
            if st.button("Compare", type="primary", key="compare_go_run"):
                go = lambda kw: compare_run_case(store, run_id, case_id, spec, **kw)  # noqa: E731
    else:
        task = _text_input(st, "Task", "compare_task", 100)
        ca, cb = st.columns(2)
        with ca:
            a = _text_input(st, "Output a", "compare_a")
        with cb:
            b = _text_input(st, "Output b", "compare_b")
        raw_assert = st.text_area(
            "Assertions (optional: one per line, or a JSON list)", key="compare_assert", height=80
        )
        if st.button("Compare", type="primary", key="compare_go_text"):

            def go(kw):
                items = None
                if raw_assert.strip():
                    try:
                        items = json.loads(raw_assert)
                    except json.JSONDecodeError:
                        items = [ln.strip() for ln in raw_assert.splitlines() if ln.strip()]
                return compare(task, a, b, items, spec, labels={"a": "output a", "b": "output b"}, **kw)

    if go is not None:
        from ..comparator.comparator import Weights

        try:
            kw = {
                "seed": int(seed_text) if seed_text.strip() else None,
                "weights": Weights(content=content_w, structure=round(1 - content_w, 10)),
            }
            with st.spinner("Judging both orders…"):
                st.session_state[RESULT_KEY] = go(kw).model_dump()
        except ValueError:
            st.error("The seed must be a whole number.")
        except AbeqError as e:
            st.error(error_md(e))

    data = st.session_state.get(RESULT_KEY)
    if not data:
        return
    from ..schemas import ComparisonResult

    result = ComparisonResult.model_validate(data)
    verdict = {"A": "a wins", "B": "b wins", "tie": "tie"}[result.winner]
    if result.order_dependent:
        st.warning(
            f"**Tie, order-dependent**: the two orders disagreed, so no winner is declared. "
            f"Order 1: {result.orders[0].winner_input}; order 2: {result.orders[1].winner_input}."
        )
    elif result.winner == "tie":
        st.info("**Tie** in both orders.")
    else:
        st.success(f"**{verdict}** in both orders.")
    st.caption(
        " · ".join(
            f"order {o.order}: a shown as {'A' if o.shown['A'] == 'a' else 'B'}, judge picked "
            f"{o.winner_presented} (= {o.winner_input})" + (" overruling its rubric" if o.overruled else "")
            for o in result.orders
        )
        + f" · seed {result.seed}"
    )
    st.markdown("**Rubric** (in input terms: a and b; means over both orders)")
    st.dataframe(pd.DataFrame(rubric_rows(result)), hide_index=True, width="stretch")
    totals = [
        {
            "output": side,
            "content": getattr(result.weighted_totals, side).content,
            "structure": getattr(result.weighted_totals, side).structure,
            "overall": getattr(result.weighted_totals, side).overall,
        }
        for side in ("a", "b")
    ]
    st.markdown(
        f"**Weighted totals** (content {result.weights['content']:.0%}, "
        f"structure {result.weights['structure']:.0%})"
    )
    st.dataframe(pd.DataFrame(totals), hide_index=True, width="stretch")
    if result.expectation_results:
        st.markdown("**Assertions** (PASS only when both orders agree)")
        st.dataframe(
            pd.DataFrame([e.model_dump() for e in result.expectation_results]),
            hide_index=True,
            width="stretch",
        )
    st.markdown("**Reasoning**")
    st.text(result.reasoning)
    qa, qb = st.columns(2)
    qa.markdown("**a**")
    qa.text(result.output_quality.a)
    qb.markdown("**b**")
    qb.text(result.output_quality.b)
    if result.inputs:
        st.caption("Revealed after judging: " + "; ".join(f"{k} = {md(v)}" for k, v in result.inputs.items()))
    with st.expander("Both raw judgements (in the labels the judge saw)"):
        for o in result.orders:
            st.markdown(f"Order {o.order}: A = {o.shown['A']}, B = {o.shown['B']}")
            st.json(o.judgement.model_dump())
    st.download_button(
        "Download comparison.json",
        json.dumps(data, indent=2, ensure_ascii=False),
        file_name="comparison.json",
        mime="application/json",
    )
