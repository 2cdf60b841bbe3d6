"""Drafting a transfer set from the original: the model proposes cases, code checks them, a person decides.

The model (the judge-side one) reads the original in five passes
(docs/reference/rules.md, "Drafting in five passes") and proposes typed cases tagged with the
sections they exercise. Code then does what code can check: every case is `derived`, ids are
unique slugs, sections the original does not have are dropped (with a warning), and the document
hash is set. The result is never confirmed: nothing runs until a person has accepted, edited or
rejected each case.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ..documents.document import sha256
from ..documents.sections import SectionIndex, normalize, sections
from ..errors import ModelCallError
from ..models.ask import Outcome, ask_validated
from ..models.call import CallPolicy
from ..models.spec import ModelSpec
from ..prompts import load_prompt, messages
from ..schemas import Case, DraftReply, GateResponse, TransferSet
from ..vocab import CASE_TYPES
from ._common import slugify, unique_id
from .coverage_report import coverage

PROMPT = "draft-cases"


@dataclass
class Drafted:
    """A drafted, unconfirmed set plus what the reviewer should know about how it was made."""

    transfer_set: TransferSet
    warnings: list[str] = field(default_factory=list)
    prompt_ref: str = ""
    model: str = ""
    outcome: Outcome | None = None


def draft_messages(document_text: str) -> list[dict]:
    return messages(
        load_prompt(PROMPT),
        [("original_document", document_text), ("sections", "\n".join(sections(document_text)))],
    )


async def draft_async(document_text: str, spec: ModelSpec, policy: CallPolicy | None = None) -> Drafted:
    """Ask the model for cases and turn its reply into an unconfirmed, derived transfer set."""
    out = await ask_validated(spec, draft_messages(document_text), DraftReply, policy or CallPolicy())
    ts, warnings = build_set(out.value, document_text, model=spec.name)
    return Drafted(ts, warnings, load_prompt(PROMPT).ref, spec.name, out)


def draft(document_text: str, spec: ModelSpec, policy: CallPolicy | None = None) -> Drafted:
    """Synchronous draft_async, for the CLI and the desk."""
    return asyncio.run(draft_async(document_text, spec, policy))


def draft_cases(document_text: str, spec: ModelSpec, policy: CallPolicy | None = None) -> TransferSet:
    """The drafted transfer set alone (see `draft` for its warnings)."""
    return draft(document_text, spec, policy).transfer_set


def build_set(
    reply: DraftReply, document_text: str, model: str = "the drafting model"
) -> tuple[TransferSet, list[str]]:
    """What code checks in a drafted reply; returns the set and a warning for everything it changed.
    A draft with no case left worth reviewing (every input only a name or a heading, or a repeat)
    is refused: a ModelCallError that says why and what to do, never a junk set."""
    index = SectionIndex(document_text)
    names = _names(document_text, index)
    warnings: list[str] = []
    cases: list[Case] = []
    taken: set[str] = set()
    inputs: dict[str, str] = {}
    junk: list[str] = []
    for i, d in enumerate(reply.cases):
        label = f"drafted case {i + 1} ('{d.id}')"
        key = " ".join(d.input.split()).lower()
        if key in inputs:
            warnings.append(f"{label} repeats the input of '{inputs[key]}'; dropped it")
            junk.append(f"{label} repeats another")
            continue
        if _only_a_name(d.input, names):
            warnings.append(
                f"{label}: its input {d.input.strip()!r} is only a name, not a request; dropped it"
            )
            junk.append(f"{label}'s input is only the name {d.input.strip()!r}")
            continue
        secs: list[str] = []
        for s in d.exercises_sections:
            sec = index.resolve(s).section  # the model may drop an emoji or a number: matched tolerantly
            if sec is None:
                warnings.append(
                    f"{label} names a section the original does not have: '{s}'; dropped that section"
                )
            elif sec.name not in secs:
                secs.append(sec.name)
        gates = [g for g in d.gate_responses if g.pattern.strip() and g.response.strip()]
        if len(gates) < len(d.gate_responses):
            warnings.append(f"{label}: dropped a gate response with no pattern or no response")
        want = slugify(d.id) or f"{d.type}-{i + 1}"
        cid = unique_id(want, taken)
        if cid != want:
            warnings.append(f"{label}: id '{want}' was already used; renamed it '{cid}'")
        inputs[key] = cid
        cases.append(
            Case(
                id=cid,
                type=d.type,
                input=d.input.strip(),
                exercises_sections=secs,
                status="derived",
                gate_responses=gates,
                rationale=d.rationale.strip(),
            )
        )
    missing = [t for t in CASE_TYPES if t not in {c.type for c in cases}]
    if not cases:
        raise ModelCallError(
            f"{model} drafted no case worth reviewing: " + "; ".join(junk[:4]) + " — nothing was written",
            hint="A small model cannot draft from this document: use a stronger one (--model, e.g. a hosted "
            "model), or write the cases yourself (docs/guides/transfer-sets.md).",
        )
    if missing:
        warnings.append(
            f"the draft has no {', '.join(missing)} case: a set needs one of each type to run; add them, "
            "or draft again with a stronger model"
        )
    cases = _share_gate_defaults(cases, warnings)
    ts = TransferSet(document_hash=sha256(document_text), cases=cases)
    cov = coverage(document_text, ts)
    return ts.model_copy(update={"coverage": cov.as_coverage()}), warnings


def _names(document_text: str, index: SectionIndex) -> set[str]:
    """What a drafted input must not be on its own: a heading, or the document's own name."""
    out = {normalize(h.title, numbers=False) for h in index.outline.headings}
    if document_text.startswith("---"):  # a skill's front matter: name: mcp-builder
        for line in document_text.split("\n")[1:40]:
            if line.startswith("---"):
                break
            if line.startswith("name:"):
                out.add(normalize(line[5:].strip().strip("'\""), numbers=False))
    return out


def _only_a_name(text: str, names: set[str]) -> bool:
    """An input that is a heading, the document's name or a bare identifier ("mcp-builder") asks nothing."""
    t = text.strip()
    key = normalize(t, numbers=False)
    if key in names or key.replace("-", " ") in names:
        return True
    return " " not in t and any(ch in t for ch in "-_./") and len(t) <= 60


def _gate_key(g: GateResponse) -> str:
    return g.gate_id.strip().lower() or " ".join(g.pattern.lower().split())


def _share_gate_defaults(cases: list[Case], warnings: list[str]) -> list[Case]:
    """A gate's default answer goes to every case, so an ordinary case that reaches the gate is not
    cut short by it; a gate response is only used when the document actually asks."""
    defaults: dict[str, GateResponse] = {}
    for c in cases:
        for g in c.gate_responses:
            defaults.setdefault(_gate_key(g), g)
    out = []
    added: dict[str, int] = {}
    for c in cases:
        have = {_gate_key(g) for g in c.gate_responses}
        extra = [g for k, g in defaults.items() if k not in have]
        for g in extra:
            added[_gate_key(g)] = added.get(_gate_key(g), 0) + 1
        out.append(c.model_copy(update={"gate_responses": [*c.gate_responses, *extra]}) if extra else c)
    for k, n in added.items():
        warnings.append(
            f"gave the default answer for gate '{k}' to {n} more case(s); remove it from a case "
            "that should stop at that gate"
        )
    return out
