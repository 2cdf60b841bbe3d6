"""Running a mutation test: every mutant through the run engine as a candidate of the original.

    from abeq import mutate
    rep = mutate("SKILL.md", "cases.json", runner_model="openai/gpt-4o-mini", confirm=True)
    rep.score, rep.report["mutants"]

Each mutant is one run of the engine (abeq.execution.engine): the teacher's transcripts come from the
cache (captured once, by the first mutant, when no run of this set made them), the mutant's are cached
under its own text, so a repeat costs nothing. Unless `all_cases`, a mutant stops at its first kill
(the engine's fail-fast: a case judged regressed, or a check the original passes and the mutant
fails), trying first the cases that claim its section. Mutants run one after another; within one,
`concurrency` cases at a time, and a kill cancels the mutant's cases still in flight, so at any
concurrency a killed mutant costs about `concurrency` cases' calls at most (one case's at 1).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from typing_extensions import Unpack  # typing's own from Python 3.11

from ..api import CLI_LABELS, DocumentLike, ModelLike, SetLike, document, model, transfer_set
from ..documents import Document, detect_variant
from ..documents.sections import SectionIndex
from ..errors import InputError
from ..execution.config import RunConfig
from ..execution.engine import Engine, Stop
from ..execution.keys import cache_key
from ..execution.preflight import Preflight, confirmation_refusal, preflight
from ..execution.settings import RunSettings, RunSettingsArgs, settings_of
from ..models.call import CallPolicy
from ..results.store.store import Store, dumps, open_store
from ..schemas import TransferSet
from ..sets.confirmation import confirm_for_run, set_hash
from ..timestamps import now
from ..vocab import CANCELLED, CANCELLING, FINISHED
from .estimate import mutation_estimate
from .mutants import Mutant, section_mutants
from .report import MutationReport, build_mutation_report
from .written import write_mutants

# a person's run's settings that a mutation test refuses: a review is a person's rounds, and a mutant
# stops at its first kill unless all_cases
NOT_IN_A_MUTATION = ("review", "fail_fast")


def claimed_by(original: Document, ts: TransferSet) -> dict[str, list[str]]:
    """Section name -> ids of the cases whose exercises_sections name it (matched as coverage does)."""
    index = SectionIndex(original.text)
    out: dict[str, list[str]] = {}
    for c in ts.cases:
        for s in c.exercises_sections:
            m = index.resolve(s)
            if m.status == "section" and m.heading is not None and c.id not in out.get(m.heading.name, []):
                out.setdefault(m.heading.name, []).append(c.id)
    return out


@dataclass
class PreparedMutation:
    """A mutation test that passed every check before a model call; `run()` makes the calls."""

    store: Store
    original: Document
    ts: TransferSet
    cfg: RunConfig
    mutants: list[Mutant]
    all_cases: bool = False
    warnings: list[str] = field(default_factory=list)
    claims: dict[str, list[str]] = field(default_factory=dict)
    written: dict | None = None  # what the report says of the model-written mutants (--model-mutants)
    checked: Preflight | None = None  # the checks the test passed, run once for every mutant

    @property
    def key(self) -> str:
        """What identifies this test: the same key reads a finished test back, or resumes one."""
        return cache_key(
            "mutation",
            {
                "original": self.original.hash,
                "set": set_hash(self.ts),
                "mutants": [[m.operator, m.section, m.hash] for m in self.mutants],
                "all_cases": self.all_cases,
                **self.cfg.key_parts(),
            },
        )

    def order(self, m: Mutant) -> list[str]:
        """The cases a mutant tries first: those that claim its section."""
        return self.claims.get(m.section, [])

    def engine(self, m: Mutant, store: Store | None = None, **kw) -> Engine:
        cfg = replace(self.cfg, fail_fast=not self.all_cases)
        return Engine(
            store or self.store, self.original, m.document, self.ts, cfg, order=self.order(m),
            stop_in_flight=not self.all_cases, **kw,
        )  # fmt: skip

    def estimate(self) -> dict:
        """Calls (the cache consulted) at most and as expected with stop-at-first-kill; tokens."""
        return mutation_estimate(self)

    def stored(self) -> MutationReport | None:
        """The report of a finished identical test, when there is one (then run() makes no call)."""
        row = None if self.cfg.fresh else self.store.mutations.finished(self.key)
        return MutationReport.from_row(row) if row else None

    def begin(self, store: Store | None = None) -> int:
        """The test's row in the store (an unfinished one with this key is resumed): its id, which
        `run(mutation_id=…)` then fills; a caller that runs it in the background answers with it."""
        db = store or self.store
        return db.mutations.start(
            self.key,
            {
                # a skill's hash covers its folder's files: stored under it, as runs are, so check-set
                # (which looks the folder's hash up) finds the score
                "original_hash": db.inputs.put_document(
                    self.original.name, self.original.text, self.original.folder
                ),
                "transfer_set_hash": db.inputs.put_transfer_set(self.ts),
                "runner_model": self.cfg.mode.label(self.cfg.runner),
                "judge_model": self.cfg.judge.name,
                "mutants": len(self.mutants),
                "run_ids": "[]",
            },
        )

    def run(
        self,
        on_progress: Callable[[dict], None] | None = None,
        cancel: threading.Event | None = None,
        store: Store | None = None,
        mutation_id: int | None = None,
    ) -> MutationReport:
        """Run every mutant (resuming what the store holds) and return the report. `store`: another
        connection to the same database, for a test run in another thread; `mutation_id`: the row
        `begin()` made."""
        db = store or self.store
        row = None if self.cfg.fresh else db.mutations.finished(self.key)
        if row is not None:
            return MutationReport.from_row(row)
        cancel = cancel or Stop()
        mid = mutation_id if mutation_id is not None else self.begin(db)
        run_ids: list[int] = []
        for i, m in enumerate(self.mutants):
            if cancel.is_set() or (db.mutations.get(mid) or {}).get("status") == CANCELLING:
                break
            eng = self.engine(m, db, cancel=cancel, on_progress=_labelled(on_progress, i, m, self))
            eng.prepare(self.checked)
            run_ids.append(eng.run_id)
            db.mutations.update(mid, run_ids=json.dumps(run_ids))
            asyncio.run(eng.run_async())
        rep = build_mutation_report(db, self, run_ids)
        complete = len(run_ids) == len(self.mutants) and not rep.incomplete
        status = FINISHED if complete else (CANCELLED if cancel.is_set() else "incomplete")
        db.mutations.update(
            mid,
            status=status,
            killed=rep.report["killed"],
            score=rep.score,
            report=dumps(rep.report),
            finished_at=now(),
        )
        rep.report["id"], rep.report["status"] = mid, status
        return rep


def _labelled(on_progress, i: int, m: Mutant, prep: PreparedMutation):
    """The engine's progress, with which mutant it is of how many."""
    if on_progress is None:
        return None
    label = m.section if m.kind == "section" else f"'{m.what}' (in {m.section})"

    def emit(p: dict) -> None:
        on_progress(
            {**p, "mutant": i + 1, "mutants": len(prep.mutants), "section": m.section, "label": label}
        )

    return emit


def prepare_mutation(
    original: DocumentLike,
    cases: SetLike,
    *,
    store: Store | str | None = None,
    confirm: bool = False,
    all_cases: bool = False,
    max_mutants: int | None = None,
    sections: list[str] | None = None,
    model_mutants: int = 0,
    mutant_model: ModelLike = None,
    settings: RunSettings | None = None,
    labels: tuple[str, str] = CLI_LABELS,
    **kwargs: Unpack[RunSettingsArgs],
) -> PreparedMutation:
    """Check everything that comes before a model call (the set's confirmation gate, as for a run)
    and make the mutants. Raises the first refusal; nothing is written when it does.

    The settings are a run's (`settings` and keywords, as for prepare_run), but for a review and
    fail_fast: a review is a person's rounds, and a mutant stops at its first kill unless `all_cases`.
    `model_mutants`: that many more mutants written by `mutant_model` (default: the runner model),
    after every check has passed; `max_mutants` limits the section mutants; `sections` keeps only the
    mutants of these sections (names as in a case's exercises_sections)."""
    s = settings_of(settings, kwargs)
    given = [k for k in NOT_IN_A_MUTATION if getattr(s, k)]
    if given:
        raise InputError(
            f"a mutation test takes no {' or '.join(given)}",
            hint="A mutant stops at its first kill unless all_cases (--all-cases); a review is a "
            "person's rounds.",
        )
    set_path = None if isinstance(cases, TransferSet) else str(cases)
    orig = document(
        original, "original", follow_imports=None if s.variant is None else s.variant == "instruction-file"
    )
    ts = transfer_set(cases)
    if max_mutants is not None and max_mutants < 1:
        raise InputError(f"--max-mutants must be 1 or more (got {max_mutants})")
    if model_mutants < 0:
        raise InputError(f"--model-mutants must be 0 or more (got {model_mutants})")
    cfg = s.config(detect_variant(orig.name))
    if confirm and confirmation_refusal(ts, orig.hash):
        ts = confirm_for_run(ts, orig.hash, thin_accepted=cfg.allow_thin or None)
    checked = preflight(orig, ts, cfg, set_path=set_path, labels=labels)
    checked.raise_first()
    mutants = section_mutants(orig)
    if not mutants:
        raise InputError(
            "the original has no section to delete", path=orig.name, hint="Give it headings or paragraphs."
        )
    warnings = []
    if sections:
        mutants = chosen_sections(orig, mutants, sections)
    if max_mutants is not None and max_mutants < len(mutants):
        warnings.append(f"{len(mutants)} mutants; --max-mutants keeps the first {max_mutants}")
        mutants = mutants[:max_mutants]
    db = store if isinstance(store, Store) else open_store(store)
    written = None
    if model_mutants:
        writer = cfg.runner if mutant_model is None else model(mutant_model, api_base=s.api_base)
        try:
            got = write_mutants(db, orig, model_mutants, writer, taken={m.hash for m in mutants},
                                fresh=cfg.fresh, policy=CallPolicy(max_retries=cfg.max_retries))  # fmt: skip
        except BaseException:
            if db is not store:
                db.close()
            raise
        mutants, written = mutants + got.mutants, got.info
        warnings += got.warnings
    return PreparedMutation(
        db, orig, ts, cfg, mutants, all_cases, warnings, claimed_by(orig, ts), written, checked
    )


def chosen_sections(original: Document, mutants: list[Mutant], names: list[str]) -> list[Mutant]:
    """The mutants of the sections named (matched as a case's exercises_sections are); an InputError
    naming the sections there are when a name matches none."""
    index = SectionIndex(original.text)
    want = set()
    for name in names:
        m = index.resolve(name)
        hit = m.heading.name if m.status == "section" and m.heading is not None else None
        hit = hit or next((x.section for x in mutants if x.section.lower() == name.strip().lower()), None)
        if hit is None:
            there = ", ".join(dict.fromkeys(x.section for x in mutants))
            raise InputError(
                f"--section {name!r} names no section of the original", path=original.name,
                hint=f"Its sections: {there}.",
            )  # fmt: skip
        want.add(hit)
    return [m for m in mutants if m.section in want]


def mutate(original: DocumentLike, cases: SetLike, **kw) -> MutationReport:
    """prepare_mutation(...).run(): would this set notice a loss? One call from files to the report
    (the keywords are prepare_mutation's)."""
    return prepare_mutation(original, cases, **kw).run()
