"""The abeq review desk: the router and frame, the script `abeq app` serves (Streamlit runs it; it is
not imported). Its pages are in desk_pages/ beside it and only draw; the logic is in abeq.desk."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from abeq.desk import access, identity, links, session
from abeq.desk.render import error_md, md
from abeq.errors import InputError
from abeq.models.registry import PROVIDERS
from abeq.results.store.store import db_shown

session.settle_heap_once()

# a file shipped with abeq, served by the desk itself: a ":material/…:" icon here makes every page
# fetch the favicon from fonts.gstatic.com (issue 27)
# a 240 px sidebar (Streamlit's is 300): at 1024 px the pages keep room for their tables and figures
st.set_page_config(
    page_title="abeq review desk", page_icon=str(session.FAVICON), layout="wide", initial_sidebar_state=240
)
# The frame's spacing, for a 1024x768 screen: Streamlit's 6rem above the title (its empty header
# bar is 3.75rem) pushed the case's input below the first screen; a badge wraps instead of being cut.
st.html(
    "<style>[data-testid=stMainBlockContainer]{padding-top:3.75rem}"
    "[data-testid=stMainBlockContainer] h1{font-size:2rem;padding:0 0 .5rem}"
    ".stMarkdownBadge{white-space:normal!important;overflow:visible!important;"
    "text-overflow:clip!important;height:auto!important}</style>"
)
if not access.admitted(st.query_params, st.session_state):  # `abeq app`'s launch token, before anything
    st.error(access.REFUSED)
    st.stop()
# who acts: a person signed in (st.login) or vouched for by the trusted proxy; nobody, on a desk of one's own
me = identity.resolve(st.user.to_dict(), st.context.headers, st.context.ip_address)
st.session_state[session.SIGNED_IN_KEY] = me.who
if me.required and not me.who:  # sign-in required: nothing of the desk before it
    st.title("abeq review desk")
    if me.note:
        st.warning(me.note, icon=":material/gpp_bad:")
    if me.can_log_in:
        st.write("Sign in to review: what you confirm, agree and override is recorded under your account.")
        st.button("Sign in", type="primary", icon=":material/login:", on_click=st.login)
    else:
        st.error(identity.NO_WAY_IN)
    st.stop()

store = session.open_store()
session.bootstrap(store)


def _create_review() -> None:
    try:
        st.session_state["review_id"] = session.create_review(
            session.open_store(), st.session_state["new_review"]
        )
        st.session_state["new_review"] = ""
        st.session_state["new_review_open"] = False  # done: close the popover
    except InputError as e:
        st.session_state["flash_sidebar"] = error_md(e)


ss, q = st.session_state, st.query_params
reviews = store.inputs.reviews()
names = {r["id"]: r["name"] for r in reviews}
# The URL names the review (a reload, a fresh tab, a shared link); a link that names only a run
# opens that run's review.
asked = links.adopt(q, ss, "review")
if asked is None and "review" not in q and (run := links.run_id(q.get("run"))) is not None:
    asked = next((names.get(r["review_id"]) for r in [store.log.run(run)] if r), None)
if asked is not None:
    by_name = {v: k for k, v in names.items()}
    if asked in by_name:
        ss["review_id"] = by_name[asked]
    else:
        ss["flash_sidebar"] = md(f"No review named '{asked}' in this database; showing another.")
if ss.get("review_id") not in names and names:
    ss["review_id"] = next(iter(names))
session.keep_reviewer(q, ss)  # the reviewer's name: from the link, this session, or the machine

with st.sidebar:
    st.markdown("### abeq review desk")
    if me.who:
        st.caption(
            f"Signed in as **{md(me.who)}**" + (" (through the team's proxy)" if me.via == "proxy" else "")
        )
        if me.via == "sign-in":
            st.button("Log out", icon=":material/logout:", on_click=st.logout)
    else:  # who acts: on every page, at the top (the first screen at 1024x768), kept as it is typed
        ss.setdefault("ov_reviewer", ss.get(session.REVIEWER_KEY, ""))
        st.text_input(
            "Reviewer (your name, kept with every action)",
            key="ov_reviewer",
            on_change=session.name_typed,
            args=(ss,),
        )
        if warning := session.same_name_elsewhere(ss):
            st.warning(warning, icon=":material/group:")
    st.selectbox(
        "Review",
        list(names),
        format_func=names.get,
        key="review_id",
        help="A review is one original, its transfer set, and a sequence of candidates (rounds).",
    )
    with st.popover("New review", icon=":material/add:", key="new_review_open", on_change="rerun"):
        # one form: the name and Create reach the server in one rerun (a name committed on its own
        # when Create takes the focus made a second rerun, which under load could leave it open)
        with st.form("new_review_form", border=False):
            st.text_input("Name", key="new_review")
            st.form_submit_button("Create", on_click=_create_review)
    if msg := ss.pop("flash_sidebar", None):
        st.error(msg)
    # the tiny model's caution, once a page and only while it is chosen (Run and Compare say it in full)
    tiny = session.tiny_model_chosen(ss)
    tiny_note = st.empty()
    st.caption(
        "Models are chosen on **Run**: any litellm model string (its API key in the environment), "
        "or an API base for Ollama, vLLM or any OpenAI-compatible server."
    )
    st.caption("Database: " + md(db_shown()))

# by absolute path: the clone's top-level app.py runs this file as its own (`streamlit run app.py`),
# and Streamlit reads a relative page path from the main script's folder
PAGES = Path(__file__).resolve().parent / "desk_pages"
pages = [
    st.Page(PAGES / "1_documents.py", title="Documents", icon=":material/description:", default=True),
    st.Page(
        PAGES / "2_transfer_set.py",
        title="Transfer set",
        icon=":material/checklist:",
        url_path="transfer-set",
    ),
    st.Page(PAGES / "3_run.py", title="Run", icon=":material/play_arrow:", url_path="run"),
    st.Page(PAGES / "4_review.py", title="Review", icon=":material/rate_review:", url_path="review"),
    st.Page(PAGES / "5_history.py", title="History", icon=":material/timeline:", url_path="history"),
    st.Page(PAGES / "6_compare.py", title="Compare", icon=":material/compare:", url_path="compare"),
]
pg = st.navigation(pages)
current = session.current_review(store, ss)
if current:  # the picker's choice, in the URL (a reload or a copied link opens the same review)
    links.publish(q, ss, "review", current["name"])
if pg.url_path != "review":  # Review says it about the run it shows, with the counts of its headline
    # read again every few seconds while a run of the review runs: "no run yet" or "Run 11 finished"
    # must not stand beside a run that started since
    running = bool(current) and session.review_running(store, current)

    @st.fragment(run_every=2.0 if running else None)
    def next_step_line() -> None:
        st.info(session.next_step(session.open_store(), current, ss), icon=":material/arrow_forward:")

    next_step_line()
# Review and History show runs: the caution goes beside a run made with the model, not beside all
if tiny and pg.url_path not in ("run", "compare", "review", "history"):
    tiny_note.caption(f"The model preselected on **Run**: {PROVIDERS['local'].caution}")
pg.run()
