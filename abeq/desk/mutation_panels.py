"""The Transfer set page's "Would this set notice a loss?": start a mutation test, follow it, and
the original drawn with each section coloured by its state, each opening its evidence. What they
show is computed in `mutation_vm`."""

from __future__ import annotations

from collections.abc import MutableMapping

import streamlit as st

from ..errors import AbeqError
from ..results.store.store import Store, db_path
from ..schemas import TransferSet
from . import mutation_vm as vm
from .render import error_md, md, self_report_html

EVIDENCE = "mutation_evidence"  # session key: the mutant whose evidence is open


def mutation(store: Store, original: dict, ts: TransferSet, state: MutableMapping) -> None:
    st.subheader("Would this set notice a loss?")
    st.caption(
        "Deletes each section of the original in turn and runs the set on what is left, with the Run "
        "page's models, against the original's cached runs. A section whose deletion no case notices "
        "is a blind spot, or text this set does not need."
    )
    try:
        prep = vm.prepare(store, original, ts, state)
    except AbeqError as e:
        st.info(error_md(e), icon=":material/lock:")
        return
    if vm.running(prep.key):
        _progress(prep.key)
    else:
        if err := vm.job_error(prep.key):
            st.error(md(err))
        st.caption(md(vm.estimate_text(prep)))
        if st.button("Would this set notice a loss?", key="mutate_start", icon=":material/science:"):
            vm.start(db_path(), prep)
            st.rerun()
    report = vm.latest_report(store, original, ts)
    if report:
        _map(original, report, state)


@st.fragment(run_every=1.0)
def _progress(key: str) -> None:
    job = vm.running(key)
    if job is None:
        st.rerun()  # finished: the whole page draws the map
        return
    st.info(md(vm.progress_text(job.progress)), icon=":material/hourglass_top:")
    if st.button("Cancel", key="mutate_cancel"):
        vm.cancel(key)


def _map(original: dict, report: dict, state: MutableMapping) -> None:
    st.markdown(f"**{md(vm.headline(report))}**")
    if said := vm.caveat(report):
        st.warning(md(said), icon=":material/science_off:")
    st.caption(vm.LEGEND)
    # a mutant's evidence opens in place, under its own block (drawn after the whole map, it came
    # ~900 px below the button and the click looked dead); one open at a time, Evidence again closes it
    open_ = state.get(EVIDENCE)
    if open_ is not None and open_ >= len(report["mutants"]):
        open_ = None
    for n, b in enumerate(vm.blocks(original["content"], report)):
        left, right = st.columns([12, 2], vertical_alignment="center")
        left.html(b.html())
        if b.mutant is not None:
            right.button(
                "Hide evidence" if open_ == b.mutant else "Evidence",
                key=f"mutant_ev_{n}",
                help=f"What deleting {b.section} did",
                on_click=_toggle,
                args=(state, b.mutant),
            )
            if open_ == b.mutant:
                _evidence(report["mutants"][b.mutant])
    written = vm.model_mutants(report)
    if written or report.get("model_mutants"):
        st.markdown("**Mutants a model wrote** (one behaviour each, weakened or removed)")
        for line in vm.written_lines(report):
            st.caption(md(line))
    for n, m in written:
        left, right = st.columns([12, 2], vertical_alignment="center")
        left.html(vm.Block(m["removed_behaviour"], m["section"], n, vm.state(m)).html())
        right.button("Hide evidence" if open_ == n else "Evidence", key=f"mutant_ev_model_{n}",
                     help="What removing it did", on_click=_toggle, args=(state, n))  # fmt: skip
        if open_ == n:
            _evidence(m)


def _toggle(state: MutableMapping, mutant: int) -> None:
    state[EVIDENCE] = None if state.get(EVIDENCE) == mutant else mutant


def _evidence(m: dict) -> None:
    with st.container(border=True, key="mutant_evidence"):
        _evidence_body(m)


def _evidence_body(m: dict) -> None:
    what = f" ({m['removed_behaviour']})" if m.get("removed_behaviour") else ""
    st.markdown(f"#### Evidence: {md(m['section'] + what)} · {md(vm.state(m))}")
    st.markdown(md(vm.reading(m)))
    for e in m.get("evidence", []):
        if "delta" in e:
            lost = f" Checks lost: {', '.join(e['checks_lost'])}." if e["checks_lost"] else ""
            by = f" (found by the {e['by']})" if e.get("by") else ""
            st.markdown(f"- **{md(e['case_id'])}**{md(by)}: {md(e['delta'] or '(no delta given)')}{md(lost)}")
        elif e.get("identical"):
            st.markdown(f"**{md(e['case_id'])}** (judged {md(e['verdict'] or '')}): the original and the "
                        "mutant produced the identical transcript")  # fmt: skip
            st.code(e["teacher"], language="text")
        else:
            claims = "claims this section" if e["claims_section"] else "does not claim it"
            st.markdown(f"**{md(e['case_id'])}** ({claims}; judged {md(e['verdict'] or '')})")
            st.html(
                self_report_html(
                    [("transcript", e["teacher"], e["mutant"])],
                    "Original",
                    f"Without {m['section']}" if vm.kind(m) == "section" else "The mutant",
                )
            )
