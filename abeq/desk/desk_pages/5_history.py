"""History: the review's rounds, their size and verdicts, and how directness moved."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from abeq.desk import history_vm as vm
from abeq.desk import links, session
from abeq.models.registry import PROVIDERS
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
by_id = {r["id"]: r for r in store.log.runs(review["id"])}
started = {i: r["started_at"] for i, r in by_id.items()}
st.caption("Each run opens on Review from its link. `abeq history` prints every column.")
table = vm.table(rows, review["name"], started, who)
st.html(vm.table_html(table))  # wraps within 1024 px: every name whole, the start's date and time
tiny = [i for i, r in by_id.items() if session.run_caution(r)]
if tiny:  # beside the runs the embedded model made, not the others
    st.caption(
        f"Run(s) {', '.join(map(str, tiny))} were made with the embedded model: " + PROVIDERS["local"].caution
    )
ids = [r["run"] for r in rows]
label = {
    r["run"]: f"run {r['run']} · round {r['round'] or '—'} · {r['candidate']} · {vm.models(r)}" for r in rows
}
one_id = st.selectbox(
    "Run in full",
    ids[::-1],
    format_func=label.get,
    key="hist_detail",
    help="The rest of a run's figures: status, models, size, overrides, directness, mutation score.",
)
one = next(r for r in rows if r["run"] == one_id)
st.dataframe(vm.details(one, started.get(one["run"])), hide_index=True, width="stretch")
chosen, said, warn = vm.chart_rounds(rows, store)
latest = pd.DataFrame(chosen).assign(
    round=lambda d: d["round"].map(lambda r: "no round" if r is None or pd.isna(r) else f"round {int(r)}")
)
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
    before0, after0 = vm.default_pair(rows, by_id)
    a, b = st.columns(2)
    before = a.selectbox("Before", ids, index=ids.index(before0), format_func=label.get, key="hist_before")
    after = b.selectbox("After", ids, index=ids.index(after0), format_func=label.get, key="hist_after")
    if warning := vm.pair_warning(rows, before, after, by_id):
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
