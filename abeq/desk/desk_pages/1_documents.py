"""Documents: load the original and the candidate; see their word diff and the size delta."""

from __future__ import annotations

import streamlit as st

from abeq.desk import documents_vm as vm
from abeq.desk import session
from abeq.desk.documents_panels import document_column
from abeq.desk.metric import draw
from abeq.results.reports.diff import side_by_side_html

store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("Documents")
st.markdown(vm.INTRO)  # a first visit learns what abeq is, in its three words

original = store.inputs.document(review["original_hash"]) if review["original_hash"] else None
candidate = session.current_candidate(store, review, st.session_state)
left, right = st.columns(2)
for col, which, doc in ((left, "original", original), (right, "candidate", candidate)):
    with col:
        document_column(store, review, which, doc)

if original and candidate:
    caption, metrics = vm.size_said(original["content"], candidate["content"])
    st.caption(caption)
    draw(st.columns(4), metrics)
    st.caption(vm.TOKENS_NOTE)
    with st.container(height=vm.diff_height(original["content"], candidate["content"])):
        st.html(
            side_by_side_html(
                original["content"],
                candidate["content"],
                left_label=f"Original · {original['name']}",
                right_label=f"Candidate · {candidate['name']}",
            )
        )
