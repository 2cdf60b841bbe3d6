"""The review page's runner samples (--runner-samples N): each behaviour's rate on each side beside
the verdict, and, on request, any sample's two transcripts side by side."""

from __future__ import annotations

import streamlit as st

from ..results.reports.diff import side_by_side_html
from ..results.reports.report import CaseRow
from ..results.store.store import Store
from . import cases


def rate_rows(row: CaseRow) -> list[dict]:
    """The rates as the table shows them (a view-model: no Streamlit)."""
    out = []
    for r in (row.sampling or {}).get("rates", []):
        lower = r["candidate"] < r["teacher"]
        out.append(
            {
                "behaviour": r["behaviour"],
                "original": f"{r['teacher']}/{r['n']}",
                "candidate": f"{r['candidate']}/{r['n']}",
                "p (one-sided)": round(r["p"], 4),
                "decision": "lost" if r["lost"] else "lower, within chance" if lower else "kept",
            }
        )
    return out


def samples(store: Store, row: CaseRow) -> None:
    """The rates, then a chosen sample pair side by side (nothing for a case run once)."""
    s = row.sampling
    if not s:
        return
    st.markdown(
        f"**Runner samples**: each arm ran {s['n']} times at temperature {s['temperature']:g}; a "
        "behaviour is lost only when the candidate shows it less often beyond chance "
        f"({s['test']}, p ≤ {s['alpha']:g})."
        + (
            " **Undecided**: a lower rate this N cannot tell from chance; more samples could."
            if row.undecided
            else ""
        )
    )
    st.dataframe(rate_rows(row), hide_index=True)
    with st.expander("Samples side by side"):
        pairs = s["pair_verdicts"]
        i = st.selectbox(
            "Sample",
            range(s["n"]),
            format_func=lambda i: f"sample {i + 1}: judge said {pairs[i]}",
            key=f"sample:{row.case_id}",
        )
        teacher = cases.side(store, s["teacher_keys"][i])
        cand = cases.side(store, s["candidate_keys"][i])
        if not (teacher and cand):
            st.warning("The stored transcripts of this sample are missing.")
            return
        st.html(
            side_by_side_html(
                teacher.transcript, cand.transcript, left_label="Original (teacher)", right_label="Candidate"
            )
        )
