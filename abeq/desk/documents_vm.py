"""What the Documents page shows, computed without Streamlit: what a loaded document's imports
mean, how an earlier candidate is listed, and the candidate's size against the original. The page
(and `documents_panels`) only draw these."""

from __future__ import annotations

from ..documents import compression_ratio, detect_variant, size_stats
from ..documents.doc_imports import imported_files, unfollowed_imports
from ..documents.skill_folder import differences
from .metric import Metric
from .render import md

TOKENS_NOTE = "Token counts are estimates: every model family tokenizes differently."


def imports_said(doc: dict) -> tuple[str, str] | None:
    """What the page says about a document's @imports, as (kind, Markdown), or None: the files read
    with it; or, for an instruction file loaded without them, that the runner would not see them."""
    if read := imported_files(doc["content"]):
        files = ", ".join(f"{r['path']} (@{r['ref']} in {r['by']})" for r in read)
        return "caption", md(
            f"Read {doc['name']} with its imports: {files}. The runner gets them as one document; the hash "
            "covers them all."
        )
    if detect_variant(doc["name"]) == "instruction-file" and (refs := unfollowed_imports(doc["content"])):
        return "warning", md(
            f"{doc['name']} imports {', '.join('@' + r for r in refs)}, which pasted or uploaded text cannot "
            "follow: load it by Path so the runner sees what the agent sees."
        )
    return None


def folder_said(store, review: dict, which: str, doc: dict) -> str:
    """A skill's folder in a sentence (Markdown): the files that travel with the original; for the
    candidate, which of them it adds, drops or changes. "" for a single-file document."""
    files = store.inputs.document_files(doc)
    if which == "original":
        return md(f"{doc['name']} travels with its folder: {', '.join(sorted(files))}.") if files else ""
    original = store.inputs.document(review["original_hash"]) if review.get("original_hash") else None
    theirs = store.inputs.document_files(original) if original else {}
    if not (files or theirs):
        return ""
    diff = {k: v for k, v in differences(theirs, files).items() if v}
    if not diff:
        return md(f"The candidate runs with the original's {len(files)} other files, unchanged.")
    return md(
        "The candidate's folder differs: " + "; ".join(f"{k} {', '.join(v)}" for k, v in diff.items()) + "."
    )


def follow_imports(which: str, review_variant: str) -> bool | None:
    """A candidate of an instruction file follows its @imports like the original, whatever its name
    (None: decided by the file's name, as for an original)."""
    return None if which == "original" else review_variant == "instruction-file" or None


def source_of(path: str) -> str:
    """Where a document given by path came from: git:REV:PATH as given, else the file's absolute path."""
    from pathlib import Path

    if path.startswith("git:"):
        return path
    try:
        return str(Path(path).expanduser().resolve())
    except OSError:
        return path


def loaded_said(store, review: dict, which: str, doc: dict) -> str:
    """ "SKILL.md · sha256 … · from /home/ana/skill/SKILL.md" (Markdown): the name and source this
    review last loaded the document under, not the name its text was first stored with."""
    load = store.inputs.loaded_as(doc["hash"], review.get("name"), which)
    name = load["name"] if load else doc["name"]
    where = f" · from {load['source']}" if load and load.get("source") else ""
    return md(f"{name} · sha256 {doc['hash'][:12]}{where}")


def earlier_label(d: dict) -> str:
    return f"{d['name']} · {d['hash'][:12]} (run {d['last_run']})"


def size_said(original_text: str, candidate_text: str) -> tuple[str, list[Metric]]:
    """The candidate's size and its change from the original: a caption and four metrics."""
    a, b = size_stats(original_text), size_stats(candidate_text)
    ratio = compression_ratio(original_text, candidate_text)
    caption = (
        f"The candidate's size, and its change from the original ({a.characters:,} characters, "
        f"{a.tokens:,} tokens, {a.lines:,} lines)."
    )
    fewer = "inverse"  # a smaller candidate is the point of a rewrite
    return caption, [
        Metric(
            "Candidate characters",
            f"{b.characters:,}",
            f"{b.characters - a.characters:+,}",
            delta_color=fewer,
        ),
        Metric("Candidate tokens (est.)", f"{b.tokens:,}", f"{b.tokens - a.tokens:+,}", delta_color=fewer),
        Metric("Candidate lines", f"{b.lines:,}", f"{b.lines - a.lines:+,}", delta_color=fewer),
        Metric(
            "Compression ratio",
            f"{ratio:.2f}",
            f"{(1 - ratio) * 100:.0f}% shorter" if ratio <= 1 else f"{(ratio - 1) * 100:.0f}% longer",
        ),
    ]


INTRO = (
    "abeq checks whether a rewritten instruction file still makes a model do what the old one did: "
    "it runs the **original** and the **candidate** (your rewrite) on the same **transfer set** of "
    "cases, and a judge compares what the model did under each."
)


def diff_height(original: str, candidate: str) -> int | str:
    """The diff pane's height: as tall as its text ("content") up to a long screen, then a pane of
    its own that scrolls (a fixed 640 px left short documents in a tall empty box)."""
    lines = max(len(original.splitlines()), len(candidate.splitlines()))
    wrapped = max(len(original), len(candidate)) // 90  # long lines wrap in a half-width column
    return "content" if lines + wrapped <= 60 else 1100
