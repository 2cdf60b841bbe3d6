"""Mutants a model writes (`abeq mutate --model-mutants N`): subtler than a section's deletion, each
a copy of the original with one behaviour weakened or removed ("must" softened to "may", a step's
condition dropped, an output format no longer required), with a line saying which.

The model (the run's runner model unless another is given) is asked once through the ordinary call
path; its validated reply is stored under the key of everything that shapes it, so a repeat makes no
call. Code then checks each mutant: one identical to the original, one that is not a near-copy of it
(it rewrites more than a behaviour's worth of text), or one that repeats another mutant is discarded,
and the reason is kept for the report. A reply that never validates, or whose every mutant is
discarded, is a ModelCallError.
"""

from __future__ import annotations

import asyncio
import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..documents import Document, estimate_tokens, normalize_newlines
from ..errors import ModelCallError
from ..execution.keys import cache_key
from ..models.ask import ask_validated
from ..models.call import CallPolicy
from ..models.spec import ModelSpec
from ..prompts import load_prompt, messages
from ..results.store.store import Store
from ..schemas import WrittenMutant, mutants_reply
from .mutants import MODEL_REMOVAL, Mutant, file_at, section_spans, variant_of

PROMPT = "write-mutants"
# a written mutant may change at most this share of the original's characters (or NEAR_COPY_CHARS,
# whichever is more): one behaviour, not a rewrite
NEAR_COPY_SHARE = 0.3
NEAR_COPY_CHARS = 200
_WORD = re.compile(r"\S+|\s+")


@dataclass
class Written:
    """The mutants kept, and what the report says of the writing: model, prompt, counts, discards."""

    mutants: list[Mutant]
    info: dict = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        out = [
            f"model mutant {d['index']} ({d['removed_behaviour']}) discarded: {d['reason']}"
            for d in self.info["discarded"]
        ]
        got = self.info
        if got["written"] < got["asked"]:
            out.append(f"asked {got['model']} for {got['asked']} mutants; it wrote {got['written']}")
        return out


def writer_spec(spec: ModelSpec, doc: Document, count: int) -> ModelSpec:
    """`spec` with room for `count` copies of the document in its reply."""
    need = count * (estimate_tokens(doc.text)[0] + 80) + 200
    return spec if spec.max_tokens >= need else replace(spec, max_tokens=need)


def writer_messages(doc: Document, count: int) -> list[dict]:
    return messages(load_prompt(PROMPT), [("document_to_mutate", doc.text), ("mutant_count", str(count))])


def writer_key(doc: Document, count: int, spec: ModelSpec) -> str:
    parts = {"doc": doc.hash, "count": count, "prompt": load_prompt(PROMPT).ref, "sampling": spec.sampling()}
    return cache_key("mutant-writer", parts)


def write_mutants(
    store: Store,
    doc: Document,
    count: int,
    spec: ModelSpec,
    *,
    taken: Iterable[str] = (),  # hashes of the mutants already made (a repeat of one is discarded)
    fresh: bool = False,
    policy: CallPolicy | None = None,
) -> Written:
    """Ask `spec` for `count` mutants of `doc` (or read its stored reply) and keep those that pass."""
    spec = writer_spec(spec, doc, count)
    key, reply_cls = writer_key(doc, count, spec), mutants_reply(count)
    row = None if fresh else store.mutations.written(key)
    spent: Mapping[str, Any] = {}  # what the call cost (nothing: read from the store)
    if row is not None:
        reply = reply_cls.model_validate_json(row["reply"])
    else:
        try:
            out = asyncio.run(
                ask_validated(spec, writer_messages(doc, count), reply_cls, policy or CallPolicy())
            )
        except ModelCallError as e:
            err = ModelCallError(
                f"{spec.name} could not write the {count} mutant(s) --model-mutants asks for: {e.message}",
                hint="Use a stronger model (--mutant-model), ask for fewer, or leave --model-mutants out.",
            )
            err.usage = e.usage  # the invalid replies were billed too
            raise err from None
        reply, spent = out.value, out.spend(cache=False)
        store.mutations.put_written(
            {"key": key, "model": spec.name, "prompt": load_prompt(PROMPT).ref,
             "reply": reply.model_dump_json(), **spent}
        )  # fmt: skip
    kept, discarded, seen = [], [], {doc.hash, *taken}
    written: list[WrittenMutant] = reply.mutants  # type: ignore[attr-defined]
    for i, w in enumerate(written, 1):
        made = checked(doc, w, i, seen)
        if isinstance(made, str):
            discarded.append({"index": i, "removed_behaviour": one_line(w.removed_behaviour), "reason": made})
        else:
            seen.add(made.hash)
            kept.append(made)
    if not kept:  # a model that cannot write one is an error, not a test that quietly has none
        raise ModelCallError(
            f"{spec.name} wrote no usable mutant of the {count} --model-mutants asks for: "
            + "; ".join(f"mutant {d['index']} {d['reason']}" for d in discarded)[:600],
            hint="Use a stronger model (--mutant-model), or leave --model-mutants out.",
        )
    info = {
        "model": spec.name,
        "prompt": load_prompt(PROMPT).ref,
        "asked": count,
        "written": len(written),
        "kept": len(kept),
        "discarded": discarded,
        "cached": row is not None,
        "tokens": int(spent.get("prompt_tokens", 0) + spent.get("completion_tokens", 0)),
        "cost": spent.get("cost", 0.0),
    }
    return Written(kept, info)


def one_line(text: str) -> str:
    return " ".join(text.split())[:300]


def checked(doc: Document, w: WrittenMutant, index: int, seen: set[str]) -> Mutant | str:
    """The mutant `w` describes, or why it is discarded."""
    text = normalize_newlines(w.text)
    if doc.text.endswith("\n") and not text.endswith("\n"):
        text += "\n"  # a reply's lost final newline is no change of behaviour
    if text == doc.text:
        return "identical to the original: it removes nothing"
    changed, added = _changed_chars(doc.text, text)
    limit = max(NEAR_COPY_CHARS, int(NEAR_COPY_SHARE * len(doc.text)))
    if changed > limit or added > limit:
        return (
            f"not a near-copy of the original: it changes {changed:,} and writes {added:,} characters "
            f"(at most {limit:,}); a mutant changes one behaviour and keeps the rest word for word"
        )
    what = one_line(w.removed_behaviour)
    mutant = variant_of(doc, f"{doc.name}, model mutant {index}: {what[:80]}", text)
    if mutant.hash in seen:
        return "the same text as another mutant"
    a, b = _span(doc.text, text)
    return Mutant(
        section_at(doc.text, a), MODEL_REMOVAL, mutant, a, b, doc.text[a:b], file_at(doc.text, a), what
    )


def _changed_chars(old: str, new: str) -> tuple[int, int]:
    """Characters of `old` that `new` changes or drops, and of `new` that it writes: lines first, then
    words within a changed stretch of lines (one word softened in a long paragraph is a small change)."""
    changed = added = 0
    for a, b in _diff(old.splitlines(keepends=True), new.splitlines(keepends=True)):
        if a and b:
            for x, y in _diff(_WORD.findall("".join(a)), _WORD.findall("".join(b))):
                changed, added = changed + sum(map(len, x)), added + sum(map(len, y))
        else:
            changed, added = changed + sum(map(len, a)), added + sum(map(len, b))
    return changed, added


def _diff(a: list[str], b: list[str]) -> list[tuple[list[str], list[str]]]:
    """The stretches of `a` and `b` that differ, side by side."""
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return [(a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def _span(old: str, new: str) -> tuple[int, int]:
    """[start, end) of `old` that differs from `new`, past their common beginning and ending, widened
    to whole lines (what the report shows as removed reads as the original's lines)."""
    n = min(len(old), len(new))
    start = next((i for i in range(n) if old[i] != new[i]), n)
    tail = 0
    while tail < n - start and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    end = max(start, len(old) - tail)
    start = old.rfind("\n", 0, start) + 1
    stop = old.find("\n", max(start, end - 1))
    return start, len(old) if stop < 0 else stop + 1


def section_at(text: str, at: int) -> str:
    """The section a change at `at` lies in (its front matter is "front matter")."""
    spans = section_spans(text)
    for name, a, b in spans:
        if a <= at < b:
            return name
    if spans and at < spans[0][1]:
        return "front matter"
    return spans[-1][0] if spans else ""
