"""Documents: load the original and the candidate; see their word diff and the size delta."""

from __future__ import annotations

import streamlit as st

from abeq.desk import session
from abeq.desk.render import error_md, md
from abeq.doc_imports import imported_files, unfollowed_imports
from abeq.documents import compression_ratio, detect_variant, load_document, size_stats
from abeq.errors import AbeqError, InputError
from abeq.results.diff import side_by_side_html

store = session.open_store()
review = session.current_review(store, st.session_state)
if review is None:
    st.stop()
st.title("Documents")


def loader(which: str) -> tuple[str, str] | None:
    """Upload, paste, path (or, for a candidate, a bundled example); (name, text) once loaded."""
    modes = ["Upload", "Paste", "Path"] + (["Bundled example"] if which == "candidate" else [])
    mode = st.radio("Load by", modes, horizontal=True, key=f"{which}_mode")
    if mode == "Upload":
        f = st.file_uploader("File", type=["md", "mdc", "txt"], key=f"{which}_file")
        if f is not None and st.button("Load file", key=f"{which}_load_file"):
            try:
                return f.name, f.getvalue().decode("utf-8-sig")
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
            return name.strip() or f"{which}.md", text
    elif mode == "Path":
        path = st.text_input("Path on this machine", key=f"{which}_path")
        if st.button("Load path", key=f"{which}_load_path"):
            session.refuse_own_database(path.strip())
            # a candidate of an instruction file follows its @imports like the original, whatever its name
            follow = None if which == "original" else review["variant"] == "instruction-file" or None
            doc = load_document(path.strip(), which, follow_imports=follow)
            st.session_state[f"{which}_import_notes"] = list(doc.notes)
            return doc.name, doc.text
    else:
        pick = st.selectbox(
            "Example candidate",
            list(session.EXAMPLE_CANDIDATES),
            key="example_pick",
            format_func=lambda k: f"{k}: {session.EXAMPLE_CANDIDATES[k]}",
        )
        if st.button("Load example", key="load_example"):
            doc = load_document(session.EXAMPLE_DIR / session.EXAMPLE_CANDIDATES[pick], which)
            return doc.name, doc.text
    return None


def pick_earlier(review_id: int) -> None:
    if st.session_state["earlier"]:
        session.pick_candidate(st.session_state, review_id, st.session_state["earlier"]["hash"])
    st.session_state["earlier"] = None


original = store.document(review["original_hash"]) if review["original_hash"] else None
candidate = session.current_candidate(store, review, st.session_state)
left, right = st.columns(2)
for col, which, doc in ((left, "original", original), (right, "candidate", candidate)):
    with col:
        st.subheader(which.capitalize())
        st.caption(md(f"{doc['name']} · sha256 {doc['hash'][:12]}") if doc else f"No {which} loaded yet.")
        if doc:
            read = imported_files(doc["content"])
            if read:
                st.caption(
                    md(
                        f"Read {doc['name']} with its imports: "
                        + ", ".join(f"{r['path']} (@{r['ref']} in {r['by']})" for r in read)
                        + ". The runner gets them as one document; the hash covers them all."
                    )
                )
            elif detect_variant(doc["name"]) == "instruction-file" and (
                refs := unfollowed_imports(doc["content"])
            ):
                st.warning(
                    md(
                        f"{doc['name']} imports {', '.join('@' + r for r in refs)}, which pasted or uploaded "
                        "text cannot follow: load it by Path so the runner sees what the agent sees."
                    )
                )
            for n in st.session_state.get(f"{which}_import_notes", []):
                st.warning(md(n))
        if which == "candidate":
            earlier = store.review_candidates(review["id"])
            if len(earlier) > 1:
                st.selectbox(
                    "Switch to an earlier candidate of this review",
                    earlier,
                    index=None,
                    key="earlier",
                    format_func=lambda d: f"{d['name']} · {d['hash'][:12]} (run {d['last_run']})",
                    on_change=pick_earlier,
                    args=(review["id"],),
                )
        with st.expander(f"Load {'another' if doc else 'the'} {which}", expanded=doc is None):
            try:
                loaded = loader(which)
                if loaded:
                    if which == "original":
                        session.set_original(store, review, *loaded)
                    else:
                        session.set_candidate(store, review, st.session_state, *loaded)
                    st.rerun()
            except AbeqError as e:
                st.error(error_md(e))

if original and candidate:
    a, b = size_stats(original["content"]), size_stats(candidate["content"])
    ratio = compression_ratio(original["content"], candidate["content"])
    st.caption(
        f"The candidate's size, and its change from the original ({a.characters:,} characters, "
        f"{a.tokens:,} tokens, {a.lines:,} lines)."
    )
    m = st.columns(4)
    m[0].metric(
        "Candidate characters",
        f"{b.characters:,}",
        f"{b.characters - a.characters:+,}",
        delta_color="inverse",
    )
    m[1].metric(
        "Candidate tokens (est.)", f"{b.tokens:,}", f"{b.tokens - a.tokens:+,}", delta_color="inverse"
    )
    m[2].metric("Candidate lines", f"{b.lines:,}", f"{b.lines - a.lines:+,}", delta_color="inverse")
    m[3].metric(
        "Compression ratio",
        f"{ratio:.2f}",
        f"{(1 - ratio) * 100:.0f}% shorter" if ratio <= 1 else f"{(ratio - 1) * 100:.0f}% longer",
        delta_color="off",
        delta_arrow="off",
    )
    st.caption("Token counts are estimates: every model family tokenizes differently.")
    with st.container(height=640):
        st.html(
            side_by_side_html(
                original["content"],
                candidate["content"],
                left_label=f"Original · {original['name']}",
                right_label=f"Candidate · {candidate['name']}",
            )
        )
