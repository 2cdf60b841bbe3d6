"""The abeq review desk: the router and frame. Pages only draw; the logic is in abeq.desk."""

from __future__ import annotations

import streamlit as st

from abeq.desk import session
from abeq.desk.render import md
from abeq.errors import InputError
from abeq.models.registry import PROVIDERS
from abeq.results.store import db_path

st.set_page_config(page_title="abeq review desk", page_icon=":material/compare:", layout="wide")

store = session.open_store()
session.bootstrap(store)


def _create_review() -> None:
    try:
        st.session_state["review_id"] = session.create_review(
            session.open_store(), st.session_state["new_review"]
        )
        st.session_state["new_review"] = ""
    except InputError as e:
        st.session_state["flash_sidebar"] = e.render()


with st.sidebar:
    st.markdown("### abeq review desk")
    names = {r["id"]: r["name"] for r in store.reviews()}
    if st.session_state.get("review_id") not in names and names:
        st.session_state["review_id"] = next(iter(names))
    st.selectbox(
        "Review",
        list(names),
        format_func=names.get,
        key="review_id",
        help="A review is one original, its transfer set, and a sequence of candidates (rounds).",
    )
    with st.popover("New review", icon=":material/add:"):
        st.text_input("Name", key="new_review")
        st.button("Create", on_click=_create_review)
    if msg := st.session_state.pop("flash_sidebar", None):
        st.error(md(msg))
    st.caption(
        f"The preselected model: {PROVIDERS['local'].caution} "
        "Enter any litellm model string on **Run** (its API key in the environment), "
        "or an API base for Ollama, vLLM or any OpenAI-compatible server."
    )
    st.caption("Database: " + md(db_path()))

pages = [
    st.Page("desk_pages/1_documents.py", title="Documents", icon=":material/description:", default=True),
    st.Page(
        "desk_pages/2_transfer_set.py",
        title="Transfer set",
        icon=":material/checklist:",
        url_path="transfer-set",
    ),
    st.Page("desk_pages/3_run.py", title="Run", icon=":material/play_arrow:", url_path="run"),
    st.Page("desk_pages/4_review.py", title="Review", icon=":material/rate_review:", url_path="review"),
    st.Page("desk_pages/5_history.py", title="History", icon=":material/timeline:", url_path="history"),
    st.Page("desk_pages/6_compare.py", title="Compare", icon=":material/compare:", url_path="compare"),
]
pg = st.navigation(pages)
st.info(
    session.next_step(store, session.current_review(store, st.session_state), st.session_state),
    icon=":material/arrow_forward:",
)
pg.run()
