"""History: the review's rounds, their size and verdicts, and how directness moved."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from abeq.desk import history_vm as vm
from abeq.desk import links, session
from abeq.results.reports import history
from abeq.vocab import EQUIVALENT

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
started = {r["id"]: r["started_at"] for r in store.log.runs(review["id"])}
st.caption("Each run opens on Review (in a new tab) from its link. `abeq history` prints every column.")
st.dataframe(
    pd.DataFrame(vm.table(rows, review["name"], started, who)),
    hide_index=True,
    width="stretch",
    column_config={
        "open": st.column_config.LinkColumn(
            "open", display_text=r"run=(\d+)", help="Open this run on Review", width=50
        ),
        "round": st.column_config.NumberColumn("round", width=50),
        "candidate": st.column_config.TextColumn("candidate", width=95),
        "models": st.column_config.TextColumn("models", width=95, help="runner / judge"),
        "started": st.column_config.TextColumn("started", width=75),
        "status": st.column_config.TextColumn("status", width=65),
        "compression": st.column_config.NumberColumn(
            "size", format="%.2f", help="compression: candidate / original characters", width=45
        ),
        EQUIVALENT: st.column_config.NumberColumn("equiv.", help=EQUIVALENT, width=55),
        "diverged": st.column_config.NumberColumn("diverged", width=65),
        "regressed": st.column_config.NumberColumn("regressed", width=75),
        "errored": st.column_config.NumberColumn("errored", width=60),
        "overridden": st.column_config.NumberColumn("overridden", width=80),
        "pass": st.column_config.CheckboxColumn("pass", width=40),
        "directness": st.column_config.TextColumn(
            "directness", help="mean directness, original → candidate (1-5; 5 = acted at once)", width=80
        ),
        "mutation score": st.column_config.NumberColumn(
            "mutation score",
            format="percent",
            help="the set's latest `abeq mutate` with these models",
            width=95,
        ),
    },
)
chosen, said, warn = vm.chart_rounds(rows, store)
latest = pd.DataFrame(chosen).assign(round=lambda d: d["round"].map(lambda r: f"round {r}"))
c1, c2 = st.columns(2)
with c1:
    st.markdown("**Verdicts per round** (latest run of each round, overrides applied)")
    st.bar_chart(
        latest,
        x="round",
        y=[EQUIVALENT, "diverged", "regressed", "errored"],
        color=["#2da44e", "#d4a72c", "#cf222e", "#8c959f"],
        stack=True,
    )
with c2:
    st.markdown("**Mean directness** (1-5; 5 = acted at once)")
    st.vega_lite_chart(latest, vm.directness_spec(), width="stretch")
st.caption(said)
if warn:
    st.warning(warn)

if len(rows) >= 2:
    st.markdown("**Which cases changed verdict between two runs**")
    ids = [r["run"] for r in rows]
    label = {
        r["run"]: f"run {r['run']} · round {r['round']} · {r['candidate']} · {vm.models(r)}" for r in rows
    }
    before0, after0 = vm.default_pair(rows)
    a, b = st.columns(2)
    before = a.selectbox("Before", ids, index=ids.index(before0), format_func=label.get, key="hist_before")
    after = b.selectbox("After", ids, index=ids.index(after0), format_func=label.get, key="hist_after")
    if warning := vm.pair_warning(rows, before, after):
        st.warning(warning)
    changed = history.changed_verdicts(store, before, after)
    if changed:
        st.dataframe(
            pd.DataFrame(
                [
                    {**c, "open": links.review_url(review["name"], after, c["case_id"], reviewer=who)}
                    for c in changed
                ]
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
