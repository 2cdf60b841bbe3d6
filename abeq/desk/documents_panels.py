"""The Documents page's parts that draw: a document's column (what is loaded, its imports, the
loader) and the loader itself. What they show is computed in `documents_vm`."""

from __future__ import annotations

import streamlit as st

from ..documents import load_document
from ..errors import AbeqError, InputError
from ..files import file_name
from . import documents_vm as vm
from . import policy, session
from .render import error_md, md


def loader(which: str, review: dict) -> tuple[str, str, dict, str] | None:
    """Upload, paste, path (or, for a candidate, a bundled example); (name, text, a skill's other
    files, where it came from) once loaded: only a path brings a skill's folder."""
    modes = ["Upload", "Paste", "Path"] + (["Bundled example"] if which == "candidate" else [])
    mode = st.radio("Load by", modes, horizontal=True, key=f"{which}_mode")
    if mode == "Upload":
        f = st.file_uploader("File", type=["md", "mdc", "txt"], key=f"{which}_file")
        # one step: a file is loaded as it is dropped (once: the uploader keeps it across reruns)
        seen = f"{which}_file_loaded"
        if f is not None and st.session_state.get(seen) != f.file_id:
            st.session_state[seen] = f.file_id
            try:
                return file_name(f.name), f.getvalue().decode("utf-8-sig"), {}, "uploaded"
            except UnicodeDecodeError:
                raise InputError(
                    "the file is not valid UTF-8", path=f.name, hint="Re-save it as UTF-8."
                ) from None
    elif mode == "Paste":
        name = st.text_input(
            "File name", "SKILL.md" if which == "original" else "candidate.md", key=f"{which}_name"
        )
        text = st.text_area("Text", height=220, key=f"{which}_text")
        if st.button("Load text", key=f"{which}_load_text"):
            return file_name(name.strip() or f"{which}.md", "the file name"), text, {}, "pasted"
    elif mode == "Path":
        path = st.text_input(
            "Path on this machine",
            key=f"{which}_path",
            help="A file here, or git:REV:PATH for one at a revision of the repository the desk runs in "
            "(PATH from its root; what travels with it is read at that revision too).",
        )
        if st.button("Load path", key=f"{which}_load_path"):
            session.refuse_own_database(path.strip())
            # a signed-in reviewer reads only under the project the desk was started in
            policy.current(st.session_state.get(session.SIGNED_IN_KEY)).check_path(path.strip())
            doc = load_document(
                path.strip(), which, follow_imports=vm.follow_imports(which, review["variant"])
            )
            st.session_state[f"{which}_import_notes"] = list(doc.notes)
            return doc.name, doc.text, doc.folder, vm.source_of(path.strip())
    else:
        pick = st.selectbox(
            "Example candidate",
            list(session.EXAMPLE_CANDIDATES),
            key="example_pick",
            format_func=lambda k: f"{k}: {session.EXAMPLE_CANDIDATES[k]}",
        )
        if st.button("Load example", key="load_example") and pick is not None:
            doc = load_document(session.EXAMPLE_DIR / session.EXAMPLE_CANDIDATES[pick], which)
            return doc.name, doc.text, doc.folder, f"bundled example {session.EXAMPLE_CANDIDATES[pick]}"
    return None


def _pick_earlier(review_id: int) -> None:
    if st.session_state["earlier"]:
        session.pick_candidate(st.session_state, review_id, st.session_state["earlier"]["hash"])
    st.session_state["earlier"] = None


def document_column(store, review: dict, which: str, doc: dict | None) -> None:
    """One document: what is loaded (with its imports), earlier candidates, and the loader."""
    st.subheader(which.capitalize())
    # the name and place this review loaded it from (the same text may be stored under another name)
    st.caption(vm.loaded_said(store, review, which, doc) if doc else f"No {which} loaded yet.")
    if doc:
        if said := vm.imports_said(doc):
            getattr(st, said[0])(said[1])
        for n in st.session_state.get(f"{which}_import_notes", []):
            st.warning(md(n))
        if folder := vm.folder_said(store, review, which, doc):
            st.caption(folder)
    if which == "candidate":
        earlier = store.inputs.review_candidates(review["id"])
        if len(earlier) > 1:
            st.selectbox(
                "Switch to an earlier candidate of this review",
                earlier,
                index=None,
                key="earlier",
                format_func=vm.earlier_label,
                on_change=_pick_earlier,
                args=(review["id"],),
            )
    with st.expander(f"Load {'another' if doc else 'the'} {which}", expanded=doc is None):
        try:
            loaded = loader(which, review)
            if loaded:
                if which == "original":
                    session.set_original(store, review, *loaded)
                else:
                    session.set_candidate(store, review, st.session_state, *loaded)
                st.rerun()
        except AbeqError as e:
            st.error(error_md(e))
