"""Compare: the blind comparator on pasted or loaded text, or on a stored run's teacher and candidate.

Drawing only: it reads widgets, calls abeq.comparator and lays out what `compare_vm` computes.
"""

from __future__ import annotations


def _text_input(st, label: str, key: str, height: int = 160) -> str:
    up = st.file_uploader(f"Load {label.lower()} from a file", key=f"{key}_file", type=None)
    if up is not None:
        try:
            return up.getvalue().decode("utf-8-sig")
        except UnicodeDecodeError:
            st.error(f"{label}: the file is not UTF-8 text")
            return ""
    return st.text_area(label, key=key, height=height)


def _from_run(st, store, runs: list[dict], spec):
    """Pick a run and a judged case of it; the comparison to make when Compare is pressed, or None."""
    from ..comparator.comparator import compare_run_case
    from . import compare_vm as vm
    from . import links

    ss, q = st.session_state, st.query_params
    if not runs:
        st.info("No run with a judged case yet: start one on Run.")
        return None
    review_names = {r["id"]: r["name"] for r in store.inputs.reviews()}
    by_id = {r["id"]: r for r in runs}
    vm.keep_valid(ss, "compare_run", list(by_id))
    run_id = st.selectbox(
        "Run", list(by_id), key="compare_run", format_func=lambda i: vm.run_label(by_id[i], review_names)
    )
    cases = vm.judged_cases(store, run_id)
    vm.keep_valid(ss, "compare_case", cases)
    case_id = st.selectbox("Case", cases, key="compare_case")
    links.publish(q, ss, "run", run_id, scope="compare")
    links.publish(q, ss, "case", case_id, scope="compare")
    st.page_link(
        links.REVIEW_PAGE,
        label="Read this case on Review",
        icon=":material/rate_review:",
        query_params=links.review_params(review_names.get(by_id[run_id]["review_id"]), run_id, case_id),
    )
    st.caption("a = the teacher run (original document), b = the candidate run; the judge is not told.")
    if st.button("Compare", type="primary", key="compare_go_run"):
        return lambda kw: compare_run_case(store, run_id, case_id, spec, **kw)
    return None


def _from_text(st, spec):
    """Task, two outputs and assertions, typed or loaded; the comparison to make, or None."""
    from ..comparator.comparator import compare
    from . import compare_vm as vm

    task = _text_input(st, "Task", "compare_task", 100)
    ca, cb = st.columns(2)
    with ca:
        a = _text_input(st, "Output a", "compare_a")
    with cb:
        b = _text_input(st, "Output b", "compare_b")
    raw = st.text_area("Assertions (optional: one per line, or a JSON list)", key="compare_assert", height=80)
    if st.button("Compare", type="primary", key="compare_go_text"):
        labels = {"a": "output a", "b": "output b"}
        return lambda kw: compare(task, a, b, vm.assertions(raw), spec, labels=labels, **kw)
    return None


def _result(st, data: dict) -> None:
    import pandas as pd

    from ..schemas import ComparisonResult
    from . import compare_vm as vm

    result = ComparisonResult.model_validate(data)
    kind, said = vm.verdict(result)
    getattr(st, kind)(said)
    st.caption(vm.orders_caption(result))
    st.markdown("**Rubric** (in input terms: a and b; means over both orders)")
    st.dataframe(pd.DataFrame(vm.rubric(result)), hide_index=True, width="stretch")
    title, totals = vm.totals(result)
    st.markdown(title)
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
    if said := vm.revealed(result):
        st.caption(said)
    with st.expander("Both raw judgements (in the labels the judge saw)"):
        for o in result.orders:
            st.markdown(f"Order {o.order}: A = {o.shown['A']}, B = {o.shown['B']}")
            st.json(o.judgement.model_dump())
    st.download_button(
        "Download comparison.json", vm.download(data), file_name="comparison.json", mime="application/json"
    )


def render_compare_page() -> None:
    """Draw the Compare page (the app wires it into navigation)."""
    import streamlit as st

    from ..errors import AbeqError
    from ..models import DEFAULT_MODEL, ModelSpec
    from . import compare_vm as vm
    from . import policy, session
    from .render import error_md

    st.title("Compare")
    st.caption(vm.ABOUT)
    c1, c2, c3 = st.columns([2, 2, 1])
    # the Run page's judge, when one was chosen there (typing scripted/rules on Run meant it here too)
    if "compare_model" not in st.session_state:
        st.session_state["compare_model"] = st.session_state.get("keep:judge_model") or DEFAULT_MODEL
    model = c1.text_input("Judge model", key="compare_model")
    api_base = c2.text_input("API base (optional)", key="compare_api_base") or None
    seed_text = c3.text_input("Seed (optional)", key="compare_seed")
    content_w = st.slider(
        "Content weight (structure gets the rest)", 0.0, 1.0, 0.6, 0.05, key="compare_weight"
    )
    try:  # the models and API bases the desk's operator allowed (abeq.desk.policy)
        policy.current(st.session_state.get(session.SIGNED_IN_KEY)).check_model(model, api_base)
    except AbeqError as e:
        st.error(error_md(e))
        st.stop()
    spec = ModelSpec.for_purpose(model, "compare", api_base=api_base)
    if session.tiny_model_chosen(st.session_state, model):
        st.info(session.EMBEDDED_NOTE)  # our own Markdown: rendered, not escaped
    store = session.open_store()
    runs = vm.judged_runs(store)
    vm.adopt_link(st.query_params, st.session_state, [r["id"] for r in runs])
    source = st.radio("Compare", [vm.FROM_TEXT, vm.FROM_RUN], horizontal=True, key="compare_src")
    go = _from_run(st, store, runs, spec) if source == vm.FROM_RUN else _from_text(st, spec)
    if go is not None:
        try:
            kw = vm.settings(seed_text, content_w)
            with st.spinner("Judging both orders…"):
                st.session_state[vm.RESULT_KEY] = go(kw).model_dump()
        except ValueError:
            st.error("The seed must be a whole number.")
        except AbeqError as e:
            st.error(error_md(e))
    if data := st.session_state.get(vm.RESULT_KEY):
        _result(st, data)
