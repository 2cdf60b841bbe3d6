"""The MCP server's tools as plain functions over the store: each takes a tool call's arguments
(named as the CLI's options), checks them within the server's bounds, and returns a result model
(abeq.agents.results). The server (abeq.agents.server) only wires them to the protocol.

A run started by a tool call goes on in a thread of the server's process; `run_status` and `report`
read it from the store, so a client that reconnects, or `abeq history`, sees the same run.
"""

from __future__ import annotations

import json
import shlex
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import AbeqError, InputError
from ..execution.bounds import Bounds
from ..execution.options import BY_NAME
from ..vocab import (
    CANCELLED,
    CANCELLING,
    CASE_ERROR,
    EQUIVALENT,
    FAILED,
    FINISHED,
    INTERRUPTED,
    JUDGED,
    RUNNING,
)
from .results import (
    CheckSet,
    CompareResult,
    ExportResult,
    HistoryResult,
    Lost,
    MutationResult,
    MutationStarted,
    MutationStatus,
    RunReportResult,
    RunStarted,
    RunStatus,
    Trust,
)

PATHS = ("original", "candidate", "transfer_set")
RESUME = (
    "call run with the same arguments to resume it: what was judged is kept, and the cases done pay "
    "no call again"
)
EXPORT_FORMATS = ("report", "record", "markdown", "csv", "junit")

DEFAULT_GATE = BY_NAME["gate"].default  # the gate profile a report applies unless told (the table's)


@dataclass
class Background:
    """A run going on in this process: its thread, its latest progress, its error if it failed."""

    thread: threading.Thread
    progress: dict = field(default_factory=dict)
    error: str | None = None


class Tools:
    """The tools of one server: its bounds (root, models, commands) and its database."""

    def __init__(self, bounds: Bounds):
        self.bounds = bounds
        self.runs: dict[int, Background] = {}
        self.started: dict[str, int] = {}  # a run's arguments (canonical JSON) → its run id
        self.mutations: dict[int, Background] = {}  # mutation tests going on in this process

    # ------------------------------------------------------------ helpers
    def _store(self):
        from ..results.store.store import open_store

        return open_store(self.bounds.db)

    def _paths(self, args: Mapping[str, Any], *names: str) -> dict[str, str]:
        out = {}
        for n in names:
            if args.get(n) is None:
                raise InputError(f"the following arguments are required: --{n.replace('_', '-')}")
            out[n] = self.bounds.path(args[n], "--" + n.replace("_", "-"))
        return out

    def confirm_command(self, original: str, transfer_set: str, allow_thin: bool = False) -> str:
        """The command a person runs to confirm the set (paths as the tool call named them)."""
        words = ["abeq", "check-set", "--original", original, "--transfer-set", transfer_set, "--confirm"]
        return shlex.join(words + (["--allow-thin"] if allow_thin else []))

    # ------------------------------------------------------------ check_set
    def check_set(self, original: str | None, transfer_set: str | None, allow_thin: bool = False) -> CheckSet:
        from .. import sets
        from ..documents import load_document

        p = self._paths({"original": original, "transfer_set": transfer_set}, "original", "transfer_set")
        doc = load_document(p["original"], "original")
        ts = sets.load(p["transfer_set"])
        return self._check(doc, ts, str(original), str(transfer_set), allow_thin)

    def _check(self, doc, ts, original: str, transfer_set: str, allow_thin: bool) -> CheckSet:
        from .. import sets

        cov = sets.coverage(doc.text, ts, allow_thin=allow_thin)
        problem = sets.confirmation_problem(ts, doc.hash)
        return CheckSet(
            cases=len(ts.cases),
            per_type=cov.per_type,
            sections_identified=cov.sections_identified,
            sections_covered=cov.sections_covered,
            uncovered=[s for s in cov.sections_identified if s not in cov.sections_covered],
            coverage_pct=cov.coverage_pct,
            warnings=cov.warnings,
            runnable=cov.runnable,
            confirmed=not problem,
            confirmation=problem or "confirmed",
            confirm_command=self.confirm_command(original, transfer_set, allow_thin),
            document_hash=doc.hash,
            set_hash=sets.set_hash(ts),
        )

    # ------------------------------------------------------------ run
    def run(
        self, args: Mapping[str, Any], on_progress: Callable[[int, dict], None] | None = None
    ) -> RunStarted:
        """Start a run and return its id at once; the calls go on in a thread. A set no person has
        confirmed for this original does not run: the answer says how a person confirms it."""
        from .. import sets
        from ..api import prepare_run
        from ..documents import load_document

        p = self._paths(args, *PATHS)
        settings = self.bounds.settings(
            {k: v for k, v in args.items() if k not in PATHS}, "the run tool's arguments"
        )
        doc = load_document(p["original"], "original")
        ts = sets.load(p["transfer_set"])
        key = json.dumps(args, sort_keys=True, default=str)
        live = self.started.get(key)
        if live is not None and (bg := self.runs.get(live)) is not None and bg.thread.is_alive():
            # the same call again (a retry, a second look): the run going on, not a second one
            return RunStarted(
                status="started",
                run_id=live,
                cases=len(ts.cases),
                message=f"run {live} is already running with these arguments; read it with run_status "
                "and report (no second run started)",
            )
        if sets.confirmation_problem(ts, doc.hash):
            check = self._check(doc, ts, args["original"], args["transfer_set"], settings.allow_thin)
            return RunStarted(
                status="needs_confirmation",
                cases=len(ts.cases),
                message=f"{check.confirmation}: a person reads the cases and confirms the set before any "
                f"runner call (a tool call cannot). Ask them to run: {check.confirm_command} — or to "
                "press Confirm on the desk's Transfer set page (abeq app).",
                coverage=check,
                confirm_command=check.confirm_command,
            )
        prepared = prepare_run(p["original"], p["candidate"], p["transfer_set"], store=self.bounds.db,
                               settings=settings)  # fmt: skip
        try:
            run_id, rnd, est = prepared.run_id, prepared.round, prepared.estimate()
        except BaseException:
            prepared.store.close()
            raise
        prepared.store.close()
        bg = Background(
            threading.Thread(target=self._work, args=(prepared, run_id, on_progress), daemon=True)
        )
        self.runs[run_id] = bg
        self.started[key] = run_id
        bg.thread.start()
        return RunStarted(
            status="started",
            run_id=run_id,
            round=rnd,
            cases=len(ts.cases),
            message=f"run {run_id} started (round {rnd}, {len(ts.cases)} cases); read it with run_status "
            "and report",
            estimate=est,
            warnings=prepared.warnings,
        )

    def _work(self, prepared, run_id: int, on_progress) -> None:
        bg = self.runs[run_id]

        def progress(p: dict) -> None:
            bg.progress = dict(p)
            if on_progress is not None:
                on_progress(run_id, p)

        self._in_background(bg, lambda store: prepared.run(on_progress=progress, store=store))

    def _in_background(self, bg: Background, work: Callable[[Any], Any]) -> None:
        """`work(store)` on a connection of this thread's own; its error kept on `bg` (the thread has
        no caller: run_status and mutate_status say it)."""
        store = self._store()
        try:
            work(store)
        except Exception as e:
            bg.error = e.render() if isinstance(e, AbeqError) else f"{type(e).__name__}: {e}"
        finally:
            store.close()

    def wait(self, run_id: int, timeout: float | None = None) -> None:
        """Until a run this process started has ended (for tests and a clean shutdown)."""
        bg = self.runs.get(run_id)
        if bg is not None:
            bg.thread.join(timeout)

    # ------------------------------------------------------------ run_status, report
    def run_status(self, run_id: int) -> RunStatus:
        store = self._store()
        try:
            run = store.log.run(run_id)
            if run is None:
                raise InputError(f"there is no run {run_id} in this database", path=store.path)
            from ..results.reports.report import case_rows

            rows = case_rows(store, run_id)
            done = sum(1 for r in rows if r.status == JUDGED)
        finally:
            store.close()
        bg = self.runs.get(run_id)
        alive = bg is not None and bg.thread.is_alive()
        status = run["status"] if not alive or run["status"] != FINISHED else RUNNING
        error = bg.error if bg else None
        next_step = None
        failed = [r for r in rows if r.status == CASE_ERROR]
        if status == FINISHED and rows and not done and failed:
            # every case errored: not a finished run with nothing lost, a failed one
            status, error = (
                FAILED,
                error or f"every case failed; the first: {failed[0].error or 'no reason kept'}",
            )
            next_step = f"fix what the error says, then {RESUME}"
        elif status == FAILED or (error and not alive):
            status, next_step = FAILED, f"fix what the error says, then {RESUME}"
        elif status in (INTERRUPTED, CANCELLED) and not alive:
            next_step = f"the run stopped before its end ({done} of {len(rows)} judged): {RESUME}"
        return RunStatus(
            run_id=run_id,
            status=status,
            finished=status == FINISHED and not alive,
            done=done,
            total=len(rows),
            error=error,
            next_step=next_step,
        )

    def report(self, run_id: int, gate: str = DEFAULT_GATE) -> RunReportResult:
        from ..execution.bounds import check_option
        from ..models.spec import ModelSpec
        from ..mutation.report import model_caveats
        from ..results.reports.agreement import aa_rates, judge_calibration
        from ..results.reports.report import build_report, gate_result
        from ..results.store.mutations import mutation_line
        from ..schemas import ReportFile

        check_option("gate", gate)
        store = self._store()
        try:
            rr = build_report(store, run_id)
            run = rr.run
            if run["status"] in (RUNNING, CANCELLING):
                raise InputError(
                    f"run {run_id} is still running", hint="Wait for run_status to say finished."
                )
            g = gate_result(rr, gate)
            st = store.log.call_stats(run_id)
            m = store.mutations.latest(
                run["transfer_set_hash"], run["original_hash"], run["runner_model"], run["judge_model"]
            )
            from ..api import run_settings

            mode = ((run_settings(run) or {}).get("mode") or {}).get("kind") or "chat"
            try:
                runner = ModelSpec.for_purpose(run["runner_model"])
                judge = ModelSpec.for_purpose(run["judge_model"])
                caveats = model_caveats(runner, judge, mode)
            except Exception:  # a command runner's label is not a model string
                caveats = [] if mode == "command" else ["the run's models could not be read back"]
            trust = Trust(
                judge_calibration=judge_calibration(store, run["judge_model"]),
                aa=aa_rates(store, run_id),
                mutation=mutation_line(m) if m else None,
                model_caveats=caveats,
            )
            lost = [
                Lost(
                    case_id=r.case_id,
                    verdict=r.verdict or "",
                    behaviour_delta=r.behaviour_delta or "",
                    checks_lost=[c.label for c in r.checks_lost],
                    directness=f"{r.original_directness} → {r.candidate_directness}",
                )
                for r in rr.rows
                if r.status == JUDGED and r.verdict != EQUIVALENT
            ]
            calls = {
                k: st[k]
                for k in ("made", "teacher_made", "cached", "prompt_tokens", "completion_tokens", "cost")
                if k in st
            }
            not_run = [e["case_id"] for e in rr.not_run]
            return RunReportResult(
                run_id=run_id,
                status=run["status"],
                report=ReportFile.model_validate(rr.with_errors()),
                passed=g["pass"] and not not_run,
                gate=g,
                lost=lost,
                errors=rr.errors,
                not_run=not_run,
                next_step=(
                    f"{len(not_run)} of {len(rr.rows)} cases were not run: {RESUME}" if not_run else None
                ),
                calls=calls,
                trust=trust,
            )
        finally:
            store.close()

    # ------------------------------------------------------------ mutate
    def mutate(self, args: Mapping[str, Any]) -> MutationStarted:
        """Start a mutation test and answer at once with its id (it goes on in a thread, as a run
        does; mutate_status reads it); an identical finished test answers with its report."""
        from ..mutation.run import prepare_mutation

        extra = {"max_mutants": None, "section": None, "all_cases": False}
        given = {k: v for k, v in args.items() if k not in ("original", "transfer_set", *extra)}
        p = self._paths(args, "original", "transfer_set")
        settings = self.bounds.settings(given, "the mutate tool's arguments")
        max_mutants = args.get("max_mutants")
        if max_mutants is not None and (not isinstance(max_mutants, int) or max_mutants < 1):
            raise InputError(f"argument --max-mutants: must be 1 or more, got {max_mutants}")
        prep = prepare_mutation(
            p["original"],
            p["transfer_set"],
            store=self.bounds.db,
            all_cases=bool(args.get("all_cases")),
            max_mutants=max_mutants,
            sections=args.get("section") or None,
            settings=settings,
        )
        try:
            stored = prep.stored()
            if stored is not None:
                return MutationStarted(
                    status=FINISHED,
                    mutation_id=int(stored.report.get("id") or 0),
                    mutants=len(prep.mutants),
                    message="an identical mutation test already finished: its report, no call made",
                    result=_mutation_result(stored),
                )
            for bg in self.mutations.values():  # the same test going on: that one, not a second
                if bg.progress.get("key") == prep.key and bg.thread.is_alive():
                    mid = int(bg.progress["id"])
                    return MutationStarted(
                        status="started",
                        mutation_id=mid,
                        mutants=len(prep.mutants),
                        message=f"mutation test {mid} is already running; read it with mutate_status",
                    )
            mid, est = prep.begin(), prep.estimate()
        except BaseException:
            prep.store.close()
            raise
        prep.store.close()
        bg = Background(threading.Thread(target=self._mutate, args=(prep, mid), daemon=True))
        bg.progress = {"key": prep.key, "id": mid}
        self.mutations[mid] = bg
        bg.thread.start()
        return MutationStarted(
            status="started",
            mutation_id=mid,
            mutants=len(prep.mutants),
            message=f"mutation test {mid} started ({len(prep.mutants)} mutants); read it with mutate_status",
            estimate=est,
        )

    def _mutate(self, prep, mid: int) -> None:
        self._in_background(self.mutations[mid], lambda store: prep.run(store=store, mutation_id=mid))

    def mutate_status(self, mutation_id: int) -> MutationStatus:
        from ..mutation.report import MutationReport

        store = self._store()
        try:
            row = store.mutations.get(mutation_id)
            if row is None:
                raise InputError(f"there is no mutation test {mutation_id} in this database", path=store.path)
        finally:
            store.close()
        bg = self.mutations.get(mutation_id)
        alive = bg is not None and bg.thread.is_alive()
        status, error, next_step = str(row["status"]), bg.error if bg else None, None
        done = len(json.loads(row.get("run_ids") or "[]"))
        if error:
            status = FAILED
        if status == RUNNING and not alive:
            status = INTERRUPTED  # the process that ran it is gone (or this is another one)
        if status in (FAILED, INTERRUPTED, CANCELLED, "incomplete") and not alive:
            next_step = (
                "call mutate with the same arguments to resume it: the mutants done are kept, and "
                "their runs' calls are not paid again"
            )
        result = None
        if row["status"] == FINISHED or (row.get("report") and status == "incomplete"):
            result = _mutation_result(MutationReport.from_row(row))
        return MutationStatus(
            mutation_id=mutation_id,
            status=status,
            finished=row["status"] == FINISHED and not alive,
            done=done,
            mutants=int(row.get("mutants") or 0),
            error=error,
            next_step=next_step,
            result=result,
        )

    # ------------------------------------------------------------ history, export
    def history(self, review: str) -> HistoryResult:
        from ..results.reports.history import review_history

        store = self._store()
        try:
            if store.inputs.review(review) is None:
                names = ", ".join(r["name"] for r in store.inputs.reviews()) or "none yet"
                raise InputError(f"no review named '{review}'", hint=f"Reviews in this database: {names}.")
            return HistoryResult(review=review, rounds=review_history(store, review))
        finally:
            store.close()

    def export(self, run_id: int, format: str = "markdown", gate: str = DEFAULT_GATE) -> ExportResult:
        from ..execution.bounds import check_option
        from ..results.reports.exports import render
        from ..results.reports.report import build_report

        check_option("gate", gate)
        if format not in EXPORT_FORMATS:
            raise InputError(
                f"argument --format: invalid choice: {format!r} (choose from "
                + ", ".join(repr(f) for f in EXPORT_FORMATS)
                + ")"
            )
        store = self._store()
        try:
            if store.log.run(run_id) is None:
                raise InputError(f"no run {run_id} in this database", path=store.path)
            rr = build_report(store, run_id)
            text = render(store, rr, "out" if format == "report" else format, gate)
        finally:
            store.close()
        return ExportResult(run_id=run_id, format=format, text=text)

    # ------------------------------------------------------------ compare
    def compare(self, args: Mapping[str, Any]) -> CompareResult:
        from ..comparator.comparator import Weights, compare
        from ..documents import read_text_file
        from ..models.spec import ModelSpec

        p = self._paths(args, "task", "a", "b")
        model, api_base = args.get("model"), args.get("api_base")
        self.bounds.model(model, "--model")
        self.bounds.api_base(api_base, "--api-base")
        weight = args.get("content_weight", 0.6)
        if not isinstance(weight, int | float) or not 0 <= weight <= 1:
            raise InputError(f"argument --content-weight: must be from 0 to 1, got {weight}")
        assertions = None
        if args.get("assertions"):
            from ..comparator.scoring import read_assertions

            assertions = read_assertions(self.bounds.path(args["assertions"], "--assertions"))
        spec = ModelSpec.for_purpose(model, "compare", api_base=api_base)
        result = compare(
            read_text_file(p["task"], what="task"),
            read_text_file(p["a"], what="output a"),
            read_text_file(p["b"], what="output b"),
            assertions,
            spec,
            args.get("seed"),
            weights=Weights(content=weight, structure=round(1 - weight, 10)),
            labels={"a": args["a"], "b": args["b"]},
        )
        return CompareResult(
            winner=result.winner, order_dependent=result.order_dependent, comparison=result.model_dump()
        )


def _mutation_result(rep) -> MutationResult:
    return MutationResult(
        score=rep.score,
        killed=rep.report["killed"],
        mutants=len(rep.report["mutants"]),
        report=rep.report,
        incomplete=rep.incomplete,
    )
