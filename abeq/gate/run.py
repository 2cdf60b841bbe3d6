"""`abeq gate`: each changed document run as original = the base's, candidate = the head's, over the
head's transfer set, in one store; one combined outcome.

Everything that can be refused is refused for every document before the first model call (a set
the pull request changed without a confirmation for its new content, a missing set, a bad model
string), so a gate never spends money on half its documents and then stops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import AbeqError, InputError, NotConfirmedError
from ..git_source import Repo
from .changes import CHANGED, Revisions, Target

EXIT_ORDER = (2, 3, 1, 0)  # which document's exit code the gate's is: bad input first, then errors


@dataclass
class Outcome:
    """One gated document: its run's report (None when not run) and exit code."""

    target: Target
    run_id: int | None = None
    report: Any = None  # results.report.RunReport
    exit: int = 0
    passed: bool = True
    sizes: tuple[int, int] = (0, 0)  # characters of original and candidate
    tokens: tuple[int, int] = (0, 0)
    calls: dict = field(default_factory=dict)


@dataclass
class GateResult:
    revisions: Revisions
    targets: list[Target]
    outcomes: list[Outcome]
    gate: str = "compress"

    @property
    def exit_code(self) -> int:
        codes = {o.exit for o in self.outcomes}
        return next((c for c in EXIT_ORDER if c in codes), 0)

    def as_json(self, store) -> dict:
        from ..results.report import gate_result

        docs = []
        for t in self.targets:
            o = next((o for o in self.outcomes if o.target is t), None)
            entry: dict[str, Any] = {"path": t.path, "state": t.state, "transfer_set": t.transfer_set}
            if t.state == CHANGED:
                entry["changed_files"] = t.changed_files
            if o and o.report is not None:
                entry.update(
                    run_id=o.run_id,
                    exit_code=o.exit,
                    passed=o.passed,
                    gate=gate_result(o.report, o.target.entry.settings.get("gate", "compress")),
                    report=o.report.report,
                    errors=o.report.errors,
                )
            docs.append(entry)
        return {
            "base": self.revisions.base,
            "head": self.revisions.head,
            "exit_code": self.exit_code,
            "documents": docs,
        }


def set_confirmation(ts, target: Target, base_hash: str, head_hash: str, set_name: str) -> None:
    """A set the pull request changed must carry a person's confirmation of its new content (for the
    base's or the head's document); an unchanged one, a confirmation of its content at all."""
    from ..sets.confirm import confirmation_problem

    problem = confirmation_problem(ts)
    if not problem and target.set_changed and ts.document_hash not in (base_hash, head_hash):
        problem = (
            "the transfer set was confirmed for a version of the document this pull request does not hold"
        )
    if not problem:
        return
    changed = "this pull request changed it, so " if target.set_changed else ""
    raise NotConfirmedError(
        f"{problem}: {changed}a person who has read its cases must confirm them before the gate runs",
        path=set_name,
        hint=(
            "The pull request's author or a reviewer runs, in a checkout of the head: "
            f"abeq check-set --original {target.path} --transfer-set {target.transfer_set} --confirm "
            "(or Confirm on the desk's Transfer set page), and commits the confirmed set."
        ),
    )


def prepare(repo: Repo, revs: Revisions, targets: list[Target], store, run_kwargs):
    """Every changed document's run prepared (stored, nothing called), or the first refusal."""
    from ..api import document, prepare_run, transfer_set
    from ..documents import detect_variant

    prepared = []
    for t in targets:
        if t.state != CHANGED:
            continue
        set_name = f"git:{revs.head_rev}:{t.transfer_set}"
        if t.transfer_set not in repo.tree(revs.head):
            raise InputError(
                f"the transfer set of {t.path} does not exist at {revs.head_rev}",
                path=t.transfer_set,
                hint="Write and confirm its cases (abeq draft-set, abeq check-set --confirm), or fix "
                "transfer_set in abeq.toml.",
            )
        orig = document(f"git:{revs.base}:{t.path}", "original")
        variant = t.entry.settings.get("variant") or detect_variant(orig.name)
        cand = document(f"git:{revs.head}:{t.path}", "candidate", variant == "instruction-file")
        ts = transfer_set(f"git:{revs.head}:{t.transfer_set}")
        set_confirmation(ts, t, orig.hash, cand.hash, set_name)
        kwargs = run_kwargs(t.entry.settings)
        try:
            p = prepare_run(orig, cand, ts, store=store, confirm=True, variant=variant, **kwargs)
        except AbeqError as e:
            e.message = f"{t.path}: {e.message}"
            raise
        p.engine.sources = {
            "original": f"git:{revs.base}:{t.path}",
            "candidate": f"git:{revs.head}:{t.path}",
            "transfer_set": f"git:{revs.head}:{t.transfer_set}",
        }
        store.update_run(p.run_id, config=_with_sources(store, p))
        prepared.append((t, p, orig, cand))
    return prepared


def _with_sources(store, p) -> str:
    """The run's stored config with where its inputs were read (git:COMMIT:PATH by role)."""
    import json

    cfg = json.loads(store.run(p.run_id)["config"] or "{}")
    cfg["sources"] = p.engine.sources
    return json.dumps(cfg, ensure_ascii=False, sort_keys=True)


def run_all(prepared, *, on_progress=None, cancel=None) -> list[Outcome]:
    """Make each prepared run's calls; one Outcome per document."""
    from ..documents import estimate_tokens
    from ..results.report import exit_code, gate_result

    out = []
    for t, p, orig, cand in prepared:
        rr = p.run(on_progress=on_progress, cancel=cancel)
        gate = t.entry.settings.get("gate", "compress")
        out.append(
            Outcome(
                t,
                p.run_id,
                rr,
                exit_code(rr, gate),
                gate_result(rr, gate)["pass"],
                (len(orig.text), len(cand.text)),
                (estimate_tokens(orig.text)[0], estimate_tokens(cand.text)[0]),
                p.store.call_stats(p.run_id),
            )
        )
    return out
