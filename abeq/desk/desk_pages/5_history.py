"""History: the review's rounds, their size and verdicts, and how directness moved."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from abeq.desk import links, session
from abeq.results import history
from abeq.timestamps import local

store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("History")
rows = history.rounds(store, review["id"])
if not rows:
    st.info("No run yet for this review: start one on Run.")
    st.stop()

who = session.reviewer_param(st.session_state)  # a name typed on this desk goes with the new tabs
started = {r["id"]: r["started_at"] for r in store.runs(review["id"])}
table = pd.DataFrame(
    [
        {"open": links.review_url(review["name"], r["run"], reviewer=who), "started": local(started.get(r["run"])), **r}
        for r in rows
    ]
)
st.caption("Each run opens on Review (in a new tab) from its link.")
st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    column_config={
        "open": st.column_config.LinkColumn(
            "open", display_text=r"run=(\d+)", help="Open this run on Review"
        ),
        "compression": st.column_config.NumberColumn(
            "compression", format="%.2f", help="candidate / original characters"
        ),
        "pass": st.column_config.CheckboxColumn("pass"),
        "mutation score": st.column_config.NumberColumn(
            "mutation score", format="percent", help="the set's latest `abeq mutate` with these models"
        ),
    },
)
latest = pd.DataFrame(history.per_round(rows)).assign(round=lambda d: d["round"].map(lambda r: f"round {r}"))
c1, c2 = st.columns(2)
with c1:
    st.markdown("**Verdicts per round** (latest run of each round, overrides applied)")
    st.bar_chart(
        latest,
        x="round",
        y=["equivalent", "diverged", "regressed", "errored"],
        color=["#2da44e", "#d4a72c", "#cf222e", "#8c959f"],
        stack=True,
    )
with c2:
    st.markdown("**Mean directness** (5 = acted at once)")
    st.bar_chart(
        latest,
        x="round",
        y=["directness original", "directness candidate"],
        color=["#8c959f", "#0969da"],
        stack=False,
    )

if len(rows) >= 2:
    st.markdown("**Which cases changed verdict between two runs**")
    ids = [r["run"] for r in rows]
    label = {r["run"]: f"run {r['run']} · round {r['round']} · {r['candidate']}" for r in rows}
    a, b = st.columns(2)
    before = a.selectbox("Before", ids, index=len(ids) - 2, format_func=label.get, key="hist_before")
    after = b.selectbox("After", ids, index=len(ids) - 1, format_func=label.get, key="hist_after")
    changed = history.changed_verdicts(store, before, after)
    if changed:
        st.dataframe(
            pd.DataFrame(
                [{**c, "open": links.review_url(review["name"], after, c["case_id"], reviewer=who)} for c in changed]
            ),
            hide_index=True,
            width="stretch",
            column_config={
                "open": st.column_config.LinkColumn(
                    "open", display_text="on Review", help="This case in the 'after' run"
                )
            },
        )
    else:
        st.caption("No case changed verdict.")
