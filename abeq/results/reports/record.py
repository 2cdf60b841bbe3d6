"""The run record (abeq.schemas.RunRecord): the report unchanged, plus the run and each
case in detail; a run's end written with its report's summary (`end_run`), and a run as a reader
gets it, as one text (`run_text`, what `abeq db copy` compares on both ends)."""

from __future__ import annotations

import json
from typing import TypeVar

from ...schemas import CaseError, Report
from ...schemas.record import (
    RECORD_VERSION,
    CheckSummary,
    DirectivenessGateResult,
    GateResult,
    JudgeCalibration,
    RecordCase,
    RecordCheck,
    RecordOverride,
    RecordReview,
    RecordRun,
    RecordSamples,
    RunRecord,
    StoppedEarly,
)
from ...timestamps import now
from ...vocab import COMPRESS, FINISHED, RunStatus
from ..store.rows import OverrideRow
from ..store.store import Store, dumps
from .agreement import aa_rates, judge_calibration
from .check_rows import check_summary
from .observed import case_observed
from .report import CaseRow, RunReport, build_report, gate_result, known_cost

A = TypeVar("A", RecordOverride, RecordReview)


def run_record(store: Store, rr: RunReport, gate: str = COMPRESS) -> dict:
    """The full record (abeq.schemas.RunRecord): the report unchanged, plus the run and
    per-case detail, validated as it is built."""
    run = rr.run
    cfg = json.loads(run["config"] or "{}")
    stats = store.log.call_stats(run["id"])
    aa = aa_rates(store, run["id"])  # one model pair per run: no entry when no replay was judged
    record = RunRecord(
        version=RECORD_VERSION,
        report=Report.model_validate(rr.report),
        errors=[CaseError.model_validate(e) for e in rr.errors],
        gate=_gate(gate_result(rr, gate)),
        run=RecordRun(
            id=run["id"],
            runner_model=run["runner_model"],
            judge_model=run["judge_model"],
            variant=run["variant"],
            runner_mode=cfg.get("runner_mode", "chat"),
            runner_command=cfg.get("runner_command"),
            runner_command_version=cfg.get("runner_command_version"),
            prompts=cfg.get("prompts"),
            judge_samples=cfg.get("judge_samples"),
            runner_samples=cfg.get("runner_samples", 1),
            runner_temperature=(cfg.get("runner") or {}).get("temperature"),
            aa=cfg.get("aa"),
            started_at=run["started_at"],
            finished_at=run["finished_at"],
            status=run["status"],
            thin_accepted=bool(run["thin_accepted"]),
            stopped_early=StoppedEarly.model_validate(stop) if (stop := rr.stopped_early()) else None,
            calls_made=stats["made"],
            calls_cached=stats["cached"],
            prompt_tokens=stats["prompt_tokens"],
            completion_tokens=stats["completion_tokens"],
            cache_read_tokens=stats["cache_read_tokens"],
            cache_write_tokens=stats["cache_write_tokens"],
            cache_saved=known_cost(stats["cache_saved"], stats["unpriced"]),
            cost=known_cost(stats["cost"], stats["unpriced"]),
            cost_unpriced_calls=stats["unpriced"],
            # None, not 0, when no A/A replay was judged: no rate was measured
            aa_false_regression_rate=aa[0]["false_regression_rate"] if aa else None,
            aa_cases_judged=(aa[0]["cases"] if aa else 0) if cfg.get("aa") else None,
            checks=CheckSummary.model_validate(check_summary(rr.rows)),
            judge_calibration=JudgeCalibration.model_validate(judge_calibration(store, run["judge_model"])),
            sources=cfg.get("sources") or None,
            started_by=cfg.get("started_by"),
        ),
        cases=[record_case(store, r) for r in rr.rows],
    )
    return record.model_dump(mode="json", by_alias=True)


def _gate(g: dict) -> GateResult:
    return (DirectivenessGateResult if "per_case_delta" in g else GateResult).model_validate(g)


def _action(model: type[A], action: OverrideRow | None) -> A | None:
    """A reviewer action as the record lists it: the model's keys, and the run it was carried from."""
    if not action:
        return None
    keys = [k for k in model.model_fields if k != "carried_from_run"]
    return model.model_validate(
        {**{k: action.get(k) for k in keys}, "carried_from_run": action.get("carried_from")}
    )


def record_case(store: Store, r: CaseRow) -> RecordCase:
    """One case of the record."""
    return RecordCase(
        case_id=r.case_id,
        status=r.status,
        judge_verdict=r.judge_verdict,
        verdict=r.verdict,
        judge_samples=r.samples,
        agreement=r.agreement,
        uncertain=r.uncertain,
        aa_verdict=r.aa_verdict,
        within_noise=r.within_noise,
        gate_truncated=r.gate_truncated,
        judge_behaviour_delta=r.judge_delta,
        checks=[RecordCheck.model_validate(c.model_dump()) for c in r.checks],
        checks_lost=[c.label for c in r.checks_lost],
        checks_disagree_with_judge=r.checks_disagree,
        override=_action(RecordOverride, r.override),
        review=_action(RecordReview, r.review),
        calls_made=r.calls_made,
        calls_cached=r.calls_cached,
        tokens=r.tokens,
        cost=r.known_cost,
        cost_unpriced_calls=r.unpriced_calls,
        error=r.error,
        observed=case_observed(store, r) or None,
        runner_samples=RecordSamples.model_validate(r.sampling) if r.sampling else None,
    )


def end_run(store: Store, run_id: int, status: RunStatus = FINISHED) -> None:
    """Write how a run ended: its status, the time, its report's summary and its call sums (what the
    history reads without building the report). The engine ends a run so, and `abeq db merge` a run
    its shards made whole."""
    rep = build_report(store, run_id)
    store.log.update_run(
        run_id,
        status=status,
        finished_at=now(),
        summary=dumps(rep.report["summary"]),
        stats=dumps(store.log.call_stats(run_id)),
    )


def run_text(store: Store, run_id: int) -> str:
    """A run as a reader gets it: its report (with the errors) and its run record, as one canonical
    JSON text, so two stores hold the same run when the texts are equal (`abeq db copy` checks)."""
    rr = build_report(store, run_id)
    return json.dumps([rr.with_errors(), run_record(store, rr)], indent=1, ensure_ascii=False, sort_keys=True)
