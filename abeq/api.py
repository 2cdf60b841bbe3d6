"""The one entry point for running a review, used by the CLI and the desk alike.

    from abeq import prepare_run
    prepared = prepare_run("SKILL.md", "SKILL.short.md", "cases.json", runner_model="openai/gpt-4o-mini",
                           confirm=True, review="my-skill")
    print(prepared.estimate())
    report = prepared.run()
    report.passed, report.report["summary"]

A run's settings are one `RunSettings` (abeq.execution.settings): given as keywords named as the
options of `abeq run` (`runner_model`, `judge_samples`, `runner_mode`, …), or whole as `settings=`.
`run_problems` lists every refusal that comes before a model call (confirmation, thin set, model
strings, review consistency) without writing anything; `prepare_run` runs those checks once
(abeq.execution.preflight), raises the first refusal, then stores the inputs and creates (or
resumes) the run; `PreparedRun.run` makes the calls. `resume_run(run_id)` prepares an unfinished run
again with its own stored settings.
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from typing_extensions import Unpack  # typing's own from Python 3.11

from .documents import Document, detect_variant, load_document
from .documents.skill_folder import differences
from .errors import AbeqError, InputError
from .execution.config import RunConfig
from .execution.engine import Engine, Stop
from .execution.estimate import estimate
from .execution.preflight import (
    CLI_LABELS,
    DESK_LABELS,
    Preflight,
    confirmation_refusal,
    preflight,
    review_refusal,
)
from .execution.runners.modes import RunnerMode
from .execution.settings import RunSettings, RunSettingsArgs, settings_of
from .execution.shard import Shard
from .models.spec import ModelSpec
from .results.reports.report import RunReport, build_report
from .results.store.liveness import ACTIVE
from .results.store.store import Store, open_store
from .schemas import TransferSet
from .sets.confirmation import confirm_for_run, set_hash
from .sets.coverage_report import CoverageReport
from .sets.reading import load as load_set
from .vocab import FINISHED

DocumentLike = Document | str | Path
SetLike = TransferSet | str | Path
ModelLike = ModelSpec | str | None
__all__ = ["CLI_LABELS", "DESK_LABELS", "RunSettings", "prepare_run", "run", "resume_run", "run_problems"]


def document(doc: DocumentLike, what: str = "document", follow_imports: bool | None = None) -> Document:
    """A Document, read from a path when given one (every check of a user's file applies; an
    instruction file's @imports are followed: see abeq.documents.doc_imports)."""
    return doc if isinstance(doc, Document) else load_document(doc, what, follow_imports=follow_imports)


def git_name(ts: object) -> str:
    """git:COMMIT:PATH for an input named git:REV:PATH (the revision resolved), else ""."""
    from .documents.git_source import is_git, parse

    return parse(str(ts))[1].name if is_git(ts) else ""


def transfer_set(ts: SetLike) -> TransferSet:
    return ts if isinstance(ts, TransferSet) else load_set(ts)


def model(spec: ModelLike, purpose: str = "run", **kw: Any) -> ModelSpec:
    """A ModelSpec from a model string (None: the default model), with its provider's reply limit."""
    return spec if isinstance(spec, ModelSpec) else ModelSpec.for_purpose(spec, purpose, **kw)


def run_problems(
    original: Document,
    ts: TransferSet,
    config: RunConfig,
    *,
    store: Store | None = None,
    set_path: str | None = None,
    labels: tuple[str, str] = CLI_LABELS,
) -> list[AbeqError]:
    """Every reason this run would be refused before its first model call; [] when it can start.
    Nothing is written. Review consistency is checked only when a store is given."""
    out = preflight(original, ts, config, set_path=set_path, labels=labels, store=store).problems
    if store is not None and config.review:
        refused = review_refusal(store, config.review, original_hash=original.hash, ts_hash=set_hash(ts))
        if refused:
            out.append(refused)
    return out


@dataclass
class PreparedRun:
    """A run that passed every check and exists in the store; `run()` makes the model calls."""

    engine: Engine
    coverage: CoverageReport
    warnings: list[str] = field(default_factory=list)  # coverage warnings, for the user to read
    cautions: list[str] = field(default_factory=list)  # about the models (the embedded one is tiny)
    checked: Preflight | None = None  # the checks this run passed (its preflight)

    @property
    def run_id(self) -> int:
        return self.engine.run_id

    @property
    def store(self) -> Store:
        return self.engine.store

    @property
    def round(self) -> int:
        row = self.store.log.run(self.run_id)
        return (row["round"] if row else None) or 1

    def estimate(self) -> dict:
        """Calls (the cache consulted), tokens and price this run will cost at most."""
        return estimate(self.engine, rounds_so_far=self.round - 1)

    def run(
        self,
        on_progress: Callable[[dict], None] | None = None,
        cancel: threading.Event | None = None,
        store: Store | None = None,
    ) -> RunReport:
        """Make the calls (resuming whatever the store already holds) and return the report.
        `store`: another connection to the same database, for a run in another thread."""
        eng = self.engine
        if store is not None and store is not eng.store:
            parts = (store, eng.original, eng.candidate, eng.ts, eng.cfg)
            eng = Shard(*parts, shard=eng.shard) if isinstance(eng, Shard) else Engine(*parts)
            eng.run_id = self.run_id
        eng.on_progress, eng.cancel = on_progress, cancel or Stop()
        eng.run()
        return build_report(eng.store, self.run_id)


def prepare_run(
    original: DocumentLike,
    candidate: DocumentLike,
    cases: SetLike,
    *,
    store: Store | str | None = None,
    confirm: bool = False,
    settings: RunSettings | None = None,
    labels: tuple[str, str] = CLI_LABELS,
    shard: tuple[int, int] | None = None,
    started_by: str | None = None,
    **kwargs: Unpack[RunSettingsArgs],
) -> PreparedRun:
    """Check everything that comes before a model call, then store the inputs and create (or resume)
    the run. Raises the first refusal (an AbeqError naming the file and what to do); nothing is
    written when it does.

    The run's settings are `settings` (a RunSettings) with the keywords on top, named as the options
    of `abeq run`: runner_model, judge_model, api_base, concurrency, judge_samples, aa, allow_thin,
    review, fresh, runner_mode, runner_cmd, trust_code, … (see RunSettings). `confirm`: a person
    accepts the set for this run (as `abeq run --confirm`). `shard` (k, n): this process runs its
    share of the cases into the run (as `abeq run --shard k/n`); the run ends with its last share.
    `started_by`: who started it (the desk's signed-in person), kept with the run and in its record.
    """
    s = settings_of(settings, kwargs)
    set_path = None if isinstance(cases, TransferSet) else str(cases)
    orig = document(
        original, "original", follow_imports=None if s.variant is None else s.variant == "instruction-file"
    )
    variant = s.variant or detect_variant(orig.name)
    # a candidate of an instruction file is one too, whatever its name (CLAUDE.short.md): its imports count
    cand, ts = document(candidate, "candidate", variant == "instruction-file"), transfer_set(cases)
    sources = {
        k: v
        for k, v in (("original", orig.source), ("candidate", cand.source), ("transfer_set", git_name(cases)))
        if v
    }
    return _prepare(
        orig, cand, ts, s.config(variant), store, confirm, set_path, labels, sources, shard, started_by
    )


def _prepare(
    orig: Document,
    cand: Document,
    ts: TransferSet,
    cfg: RunConfig,
    store: Store | str | None,
    confirm: bool,
    set_path: str | None,
    labels: tuple[str, str],
    sources: dict[str, str] | None = None,
    shard: tuple[int, int] | None = None,
    started_by: str | None = None,
) -> PreparedRun:
    """The one way a run is prepared, from settings (prepare_run) or from a stored run (resume_run):
    its preflight runs once, and the engine reads it."""
    cand, folder_notes = with_folder(orig, cand, cfg.variant)
    if confirm and confirmation_refusal(ts, orig.hash):  # for this run only: never the set's own
        ts = confirm_for_run(ts, orig.hash, thin_accepted=cfg.allow_thin or None)
    # the judge's calibration is read from the run's own database (opened first only when asked)
    path = None if isinstance(store, Store) else store
    db = store if isinstance(store, Store) else None
    if db is None and cfg.min_judge_recall is not None:
        db = open_store(path)
    try:
        checked = preflight(orig, ts, cfg, set_path=set_path, labels=labels, store=db)
        checked.raise_first()
    except BaseException:
        if db is not None and db is not store:
            db.close()
        raise
    if db is None:
        db = open_store(path)
    engine = Shard(db, orig, cand, ts, cfg, shard=shard) if shard else Engine(db, orig, cand, ts, cfg)
    engine.sources = dict(sources or {})  # where inputs read at a git revision came from
    engine.started_by = started_by
    try:
        engine.prepare(checked)
    except BaseException:
        if db is not store:
            db.close()
        raise
    notes = [*_read_notes(orig, cand), *folder_notes, *checked.warnings]
    return PreparedRun(engine, checked.coverage, notes, checked.cautions, checked)


def with_folder(original: Document, candidate: Document, variant: str) -> tuple[Document, list[str]]:
    """A skill is a folder: a candidate SKILL.md with no files of its own is tested with the
    original's; a candidate folder with its own. Notes say which files travel and which differ."""
    if variant != "skill" or not (original.files or candidate.files):
        return candidate, []
    if not candidate.files:
        candidate = replace(candidate, files=original.files)
        return candidate, [
            f"the candidate is tested with the original skill's {len(original.files)} other files "
            f"({', '.join(p for p, _ in original.files)})"
        ]
    diff = differences(original.folder, candidate.folder)
    said = "; ".join(f"{k}: {', '.join(v)}" for k, v in diff.items() if v)
    return candidate, [
        f"the candidate skill's folder differs from the original's ({said})"
        if said
        else "the candidate skill's folder holds the same other files as the original's"
    ]


def _read_notes(*docs: Document) -> list[str]:
    """Which files an instruction file's @imports pulled in (the runner sees them as one document)."""
    out = []
    for d in docs:
        if d.read:
            out.append(f"{d.name} imports {', '.join(d.read[1:])}: the runner gets them as one document")
        out += list(d.notes)
    return out


def run_settings(run: Mapping[str, Any]) -> dict[str, Any] | None:
    """The settings a run was made with (models, sampling, concurrency, …), as stored with it;
    None for a run stored before abeq kept them."""
    import json

    return json.loads(run.get("config") or "{}").get("settings")


def resume_run(
    run_id: int,
    store: Store | str | None = None,
    *,
    trust_code: bool = False,
    unsandboxed: bool = False,
    check_env: tuple[str, ...] = (),
    runner_cmd: str | None = None,
    runner_env: tuple[str, ...] | None = None,
    trust_stored_command: bool = False,
) -> PreparedRun:
    """Prepare an unfinished run (cancelled, interrupted, failed) again with its own stored settings:
    the same run continues, and nothing it finished is repeated. Refused for a run that finished,
    one still running in some process, or one whose settings cannot be rebuilt; nothing is written
    when it is. `trust_code`/`unsandboxed`/`check_env` are given again, never read from the database
    (a database handed over must not grant them). A command run's stored command runs only when the
    caller gives it again (`runner_cmd`, with the same `runner_env` names) or `trust_stored_command`
    (the user read it): a database is data someone may have handed over, and its command would run
    as you."""
    db = store if isinstance(store, Store) else open_store(store)
    run = db.log.run(run_id)
    if run is None:
        raise InputError(f"there is no run {run_id} in this database", path=db.path)
    hint_new = "Start it again with the same documents, cases and models (Run page, or `abeq run`)."
    if run["status"] == FINISHED:
        raise InputError(f"run {run_id} has finished: there is nothing to resume")
    if run["status"] in ACTIVE:
        raise InputError(
            f"run {run_id} is still running (process {run.get('owner') or '?'})",
            hint="Cancel it first, or wait for it to end.",
        )
    settings = run_settings(run)
    if not settings:
        raise InputError(f"run {run_id} was stored before abeq kept a run's settings", hint=hint_new)
    if settings.get("api_base_stripped"):
        raise InputError(f"run {run_id}'s API base held credentials, which abeq never stores", hint=hint_new)
    cfg = replace(
        RunConfig.from_settings(settings),
        trust_code=trust_code,
        unsandboxed=unsandboxed,
        check_env=tuple(check_env),
    )
    refused = stored_command_refusal(run_id, cfg.mode, runner_cmd, runner_env, trust_stored_command)
    if refused:
        raise InputError(refused[0], path=db.path, hint=refused[1])
    orig, cand = db.inputs.document(run["original_hash"]), db.inputs.document(run["candidate_hash"])
    ts = db.inputs.transfer_set(run["transfer_set_hash"])
    if not (orig and cand and ts):
        raise InputError(f"run {run_id}'s documents or cases are missing from the database", hint=hint_new)
    original, candidate = (
        Document(row["name"], row["content"], files=tuple(sorted(db.inputs.document_files(row).items())))
        for row in (orig, cand)
    )
    # the set was accepted by a person for this run when it started: that acceptance holds for it
    if confirmation_refusal(ts, original.hash):
        by = run.get("set_confirmed_for_run") or "unknown"
        ts = confirm_for_run(ts, original.hash, thin_accepted=cfg.allow_thin or None, by=by)
    if Engine(db, original, candidate, ts, cfg).config_key() != run["config_key"]:
        raise InputError(f"run {run_id} cannot be rebuilt from its stored settings", hint=hint_new)
    # every setting, the runner mode too (a tools or command run resumes as one); --fail-fast is
    # not stored, so a run it stopped runs the cases it did not start
    return _prepare(original, candidate, ts, cfg, db, False, None, CLI_LABELS)


def stored_command_refusal(
    run_id: int,
    mode: RunnerMode,
    runner_cmd: str | None,
    runner_env: tuple[str, ...] | None,
    trusted: bool,
) -> tuple[str, str] | None:
    """(why, what to do) when a resume would run a stored command the user did not give again or
    confirm; None when it may run (or the run has no command)."""
    if mode.kind != "command" or trusted:
        return None
    shown = f"run {run_id} runs the command stored with it: `{mode.command}`" + (
        f" with the environment variables {', '.join(mode.env)}" if mode.env else ""
    )
    again = f"abeq resume {run_id} --runner-cmd {shlex.quote(mode.command)}" + "".join(
        f" --runner-env {n}" for n in mode.env
    )
    hint = (
        f"Read the command. To run it, give it again ({again}) or pass --trust-stored-command; "
        "a database from someone else can carry any command."
    )
    if runner_cmd is None:
        return f"{shown}; abeq runs a stored command only when you give it again or confirm it", hint
    if runner_cmd != mode.command:
        return f"{shown}, not the --runner-cmd given (`{runner_cmd}`)", hint
    if set(runner_env or ()) != set(mode.env):
        given = ", ".join(sorted(set(runner_env or ()))) or "none"
        return f"{shown}; --runner-env names {given}", hint
    return None


def estimate_run(
    store: Store, original: Document, candidate: Document, ts: TransferSet, config: RunConfig | RunSettings
) -> dict:
    """The estimate prepare_run's run would print, without creating the run (the cache is consulted)."""
    return estimate(Engine(store, original, candidate, ts, config))


def run(
    original: DocumentLike,
    candidate: DocumentLike,
    cases: SetLike,
    *,
    store: Store | str | None = None,
    confirm: bool = False,
    settings: RunSettings | None = None,
    **kwargs: Unpack[RunSettingsArgs],
) -> RunReport:
    """prepare_run(...).run(): one call from files (or objects) to the report."""
    return prepare_run(
        original, candidate, cases, store=store, confirm=confirm, settings=settings, **kwargs
    ).run()
