"""From stored results to the report (overrides applied) and gate profiles; the record: record.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ...errors import InputError
from ...schemas import CaseError, CaseVerdict, CheckResult, EfficiencySignal, Report, ReportFile, Summary
from ...vocab import (
    AA_NOISY,
    AGREE,
    CANCELLING,
    COMPRESS,
    DIRECTIVE_CLARITY,
    DIVERGED,
    EQUIVALENT,
    JUDGED,
    NOT_RUN_STAGE,
    OVERRIDE,
    PENDING_STAGE,
    REGRESSED,
    RUNNING,
    STOPPED_EARLY,
    CaseRunStatus,
    Verdict,
)
from ..store.rows import OverrideRow, RunCaseRow, RunRow
from ..store.store import Store
from .check_rows import check_result


@dataclass
class CaseRow:
    """Everything the desk and the exports need about one case of one run."""

    case_id: str
    status: CaseRunStatus
    judge_verdict: Verdict | None = None
    verdict: Verdict | None = None  # effective: the override when there is one
    behaviour_delta: str = ""
    original_directness: int | None = None
    candidate_directness: int | None = None
    interpretation_notes: str = ""
    samples: list[Verdict] = field(default_factory=list)
    agreement: float | None = None
    uncertain: bool = False
    gate_truncated: bool = False
    gate_section: str = ""
    aa_verdict: Verdict | None = None
    override: OverrideRow | None = None  # the reviewer's override in effect
    review: OverrideRow | None = None  # the reviewer action in effect: an override or an agreement
    machine_verdict: Verdict | None = (
        None  # the judge's verdict with lost checks applied, before any override
    )
    within_noise: bool = False  # regressed, but the judge also flagged the teacher's own replay
    error_stage: str | None = None
    error: str | None = None
    teacher_key: str | None = None
    candidate_key: str | None = None
    # what this run spent on the case (calls it made; cached calls cost nothing)
    calls_made: int = 0
    calls_cached: int = 0
    tokens: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0  # made calls with no known price: `cost` leaves them out
    checks: list[CheckResult] = field(default_factory=list)  # every check, on both arms
    # the judge's own delta (behaviour_delta is the effective one: a lost check is named first)
    judge_delta: str = ""
    # --runner-samples N > 1: the samples, the rates and the decision (abeq.execution.sampled)
    sampling: dict | None = None

    @property
    def undecided(self) -> bool:
        """A sampled case whose candidate shows a behaviour less often, but not beyond chance."""
        return bool(self.sampling and self.sampling["undecided"])

    @property
    def known_cost(self) -> float | None:
        return known_cost(self.cost, self.unpriced_calls)

    @property
    def checks_lost(self) -> list[CheckResult]:
        """Checks the teacher passed and the candidate failed: each makes the case regressed. Over
        samples: the checks the candidate passed less often than the teacher beyond chance."""
        if self.sampling:
            lost = {r["behaviour"] for r in self.sampling["rates"] if r["lost"]}
            return [c for c in self.checks if f"check {c.label}" in lost]
        return [c for c in self.checks if c.lost]

    @property
    def checks_disagree(self) -> bool:
        """The checks found a loss the judge did not call (the second witness contradicts the first)."""
        return bool(self.checks_lost) and self.judge_verdict not in (None, REGRESSED)

    @property
    def reviewed(self) -> bool:
        """A reviewer agreed with the judge on this case or overrode it."""
        return self.review is not None

    @property
    def agreed(self) -> bool:
        return self.review is not None and self.review.get("action") == AGREE


def known_cost(cost: float, unpriced_calls: int) -> float | None:
    """A total is known only when every call in it had a price: None, never a partial sum."""
    return None if unpriced_calls else cost


@dataclass
class RunReport:
    run: RunRow
    rows: list[CaseRow]
    report: dict  # docs/reference/rules.md, "The report"
    errors: list[dict]
    overridden: int

    @property
    def passed(self) -> bool:
        return self.report["summary"]["pass"]

    @property
    def not_run(self) -> list[dict]:
        """The entries of `errors` never run: --fail-fast did not start them, or a cancelled or
        interrupted run did not get to them (not errors of their own)."""
        return [e for e in self.errors if e["stage"] in (NOT_RUN_STAGE, PENDING_STAGE)]

    @property
    def failed(self) -> list[dict]:
        """The entries of `errors` that are errors: cases that were started and produced no verdict."""
        return [e for e in self.errors if e["stage"] not in (NOT_RUN_STAGE, PENDING_STAGE)]

    def stopped_early(self) -> dict | None:
        """{"after_case", "not_run"} when --fail-fast stopped the run, else None."""
        after, n = self.run["stopped_after"], sum(e["stage"] == NOT_RUN_STAGE for e in self.errors)
        return {"after_case": after, "not_run": n} if after else None

    def incomplete(self) -> str | None:
        """'cancelled: k of n judged, m not run' when a run ended before every case ran (a Cancel, an
        interrupt, --fail-fast): what was judged stands, the rest is not an error."""
        why = {STOPPED_EARLY: "stopped early"}.get(st := self.run["status"], st)
        if not self.not_run or why in (RUNNING, CANCELLING):
            return None
        n, errs = len(self.not_run), f", {len(self.failed)} errored" if self.failed else ""
        return f"{why}: {len(self.report['cases'])} of {len(self.rows)} judged, {n} not run{errs}"

    def with_errors(self) -> dict:
        """report.json: the report plus, beside its `cases` and `summary`, what abeq adds — `errors`,
        the gate-truncated cases (docs/reference/rules.md, "A gate with no scripted answer"), and
        when they apply `stopped_early`, `undecided`, the overridden cases and those a reviewer agreed
        with. Built as `abeq.schemas.ReportFile`, so nothing undeclared is ever written
        (docs/reference/rules.md, "The report")."""
        out: dict = {**self.report, "errors": self.errors}
        if self.stopped_early():
            out["stopped_early"] = self.stopped_early()
        out["gate_truncated"] = [
            {"case_id": r.case_id, "section": r.gate_section} for r in self.rows if r.gate_truncated
        ]
        if any(r.undecided for r in self.rows):  # --runner-samples: lower, within chance at this N
            out["undecided"] = [r.case_id for r in self.rows if r.undecided]
        if self.overridden:
            out["overrides"] = [
                {
                    "case_id": r.case_id,
                    "judge_verdict": r.judge_verdict,
                    "verdict": r.verdict,
                    "reason": ov["reason"],
                    "reviewer": ov["reviewer"],
                    "at": ov["created_at"],
                    "carried_from_run": ov.get("carried_from"),
                }
                for r in self.rows
                if (ov := r.override)
            ]
        agreed = [r for r in self.rows if r.agreed]
        if agreed:
            out["agreements"] = [
                {
                    "case_id": r.case_id,
                    "verdict": r.verdict,
                    "reviewer": rv["reviewer"],
                    "at": rv["created_at"],
                    "carried_from_run": rv.get("carried_from"),
                }
                for r in agreed
                if (rv := r.review)
            ]
        # the keys that do not apply are left out (exclude_unset), as they always were
        return ReportFile.model_validate(out).model_dump(by_alias=True, exclude_unset=True)


def case_rows(store: Store, run_id: int, case_id: str | None = None) -> list[CaseRow]:
    """Every case of the run, in order, with the reviewer action in effect on each; with `case_id`,
    that case's row alone, read on its own (a reviewer's Agree needs one case's verdict, not a
    10,000-case run's)."""
    return with_actions(machine_rows(store, run_id, case_id), actions(store, run_id, case_id))


def actions(store: Store, run_id: int, case_id: str | None = None) -> dict[str, OverrideRow]:
    """The reviewer action in effect per case (or on the one case): this run's own latest, else
    one made on the identical judgement in another run."""
    if case_id is not None:
        act = store.ledger.action_in_effect(run_id, case_id)
        return {case_id: act} if act else {}
    return {**store.ledger.carried_overrides(run_id), **store.ledger.reviewed(run_id)}


def with_actions(rows: list[CaseRow], acts: Mapping[str, OverrideRow]) -> list[CaseRow]:
    """`rows` as machine_rows read them, each judged one a reviewer acted on replaced by a copy with
    the action applied; the others are the same objects (so a cached run's rows serve again after
    an Agree, and only the cases acted on are new). Neither list's rows may be changed after."""
    return [
        _reviewed(replace(r), acts[r.case_id]) if r.status == JUDGED and r.case_id in acts else r
        for r in rows
    ]


def machine_rows(store: Store, run_id: int, case_id: str | None = None) -> list[CaseRow]:
    """The run's cases (or its one case) as the run left them, before any reviewer action:
    `verdict` is the machine's (the judge's, made regressed by a lost check)."""
    rc = (
        store.log.run_cases(run_id)
        if case_id is None
        else [r for r in [store.log.run_case(run_id, case_id)] if r]
    )
    rows = []
    spent = store.log.case_costs(run_id, case_id)
    keys_of = {r["case_id"]: json.loads(r["judge_keys"] or "[]") for r in rc}
    judgements = store.cache.judgements([k for keys in keys_of.values() for k in keys])
    checks = store.log.check_results(run_id, case_id)
    for r in rc:
        row = CaseRow(
            case_id=r["case_id"],
            status=r["status"],
            gate_truncated=bool(r["gate_truncated"]),
            aa_verdict=r["aa_verdict"],
            error_stage=r["error_stage"],
            error=r["error"],
            teacher_key=r["teacher_key"],
            candidate_key=r["candidate_key"],
        )
        c = spent.get(r["case_id"])
        if c:
            row.calls_made, row.calls_cached = c["made"], c["cached"]
            row.tokens = c["prompt_tokens"] + c["completion_tokens"]
            row.cost, row.unpriced_calls = float(c["cost"]), c["unpriced"]
        if r["status"] == JUDGED:
            js = [judgements[k] for k in keys_of[r["case_id"]] if k in judgements]
            row.samples = [j["verdict"] for j in js]
            row.judge_verdict = r["verdict"]
            row.agreement, row.uncertain = r["agreement"], bool(r["uncertain"])
            if r.get("samples"):
                _sampled(row, r, js, checks.get(r["case_id"], []))
                rows.append(_unreviewed(row))
                continue
            rep = next(j for j in js if j["verdict"] == r["verdict"])
            row.behaviour_delta = rep["behaviour_delta"]
            row.original_directness = round(sum(j["original_directness"] for j in js) / len(js))
            row.candidate_directness = round(sum(j["candidate_directness"] for j in js) / len(js))
            row.interpretation_notes = rep["interpretation_notes"]
            row.checks = [check_result(c) for c in checks.get(r["case_id"], [])]
            row.verdict, row.judge_delta = row.judge_verdict, row.behaviour_delta
            if row.checks_lost:  # a lost check is a lost behaviour, whatever the judge said
                row.verdict = REGRESSED
                row.behaviour_delta = "; ".join(
                    f"check failed on candidate: {c.label}" + (f" ({c.description})" if c.description else "")
                    for c in row.checks_lost
                ) + (f" · judge ({row.judge_verdict}): {row.judge_delta}" if row.judge_delta else "")
            row.uncertain = row.uncertain or row.checks_disagree
            # the A/A replay measures the judge's noise: a regression a check witnessed is not within it
            row.within_noise = row.verdict == REGRESSED and not row.checks_lost and row.aa_verdict in AA_NOISY
        if row.gate_truncated and row.teacher_key:
            row.gate_section = store.cache.gate_section(row.teacher_key)
        rows.append(_unreviewed(row))
    return rows


def _unreviewed(row: CaseRow) -> CaseRow:
    row.machine_verdict = row.verdict
    return row


def _reviewed(row: CaseRow, ov: OverrideRow | None) -> CaseRow:
    """The row with the reviewer's action in effect on it, if any."""
    if ov and row.status == JUDGED:
        row.review = ov
    if ov and row.status == JUDGED and ov.get("action", OVERRIDE) == OVERRIDE:
        row.override = ov
        # whatever the verdict (equivalent too), the reviewer's reason is the delta every export shows
        row.verdict, row.behaviour_delta = ov["verdict"], f"reviewer: {ov['reason']}"
    return row


def _sampled(row: CaseRow, r: RunCaseRow, js: list, checks: list) -> None:
    """A case run N > 1 times: its verdict is the decision on the rates (stored as decided, with the
    checks counted among the rates), not the first pair's checks or judge."""
    row.sampling = json.loads(r["samples"] or "{}")
    row.samples = [j["verdict"] for j in js]
    row.judge_verdict = row.verdict = r["verdict"]
    row.agreement, row.uncertain = r["agreement"], bool(r["uncertain"])
    rep = next((j for j in js if j["verdict"] == r["verdict"]), js[0] if js else None)
    row.behaviour_delta = row.sampling.get("behaviour_delta", "")
    row.judge_delta = rep["behaviour_delta"] if rep else ""
    if js:
        row.original_directness = round(sum(j["original_directness"] for j in js) / len(js))
        row.candidate_directness = round(sum(j["candidate_directness"] for j in js) / len(js))
        row.interpretation_notes = rep["interpretation_notes"] if rep else ""
    row.checks = [check_result(c) for c in checks]


def summarise(rows: list[CaseRow]) -> tuple[dict, list[dict]]:
    cases, errors = [], []
    for r in rows:
        if r.status == JUDGED:
            # case_rows sets these on every judged case
            assert r.verdict and r.original_directness is not None and r.candidate_directness is not None
            cases.append(
                CaseVerdict(
                    case_id=r.case_id,
                    verdict=r.verdict,
                    behaviour_delta=r.behaviour_delta,
                    efficiency_signal=EfficiencySignal(
                        original_directness=r.original_directness,
                        candidate_directness=r.candidate_directness,
                        interpretation_notes=r.interpretation_notes,
                    ),
                )
            )
        else:
            errors.append(
                CaseError(
                    case_id=r.case_id,
                    stage=r.error_stage or PENDING_STAGE,
                    error=r.error or "the case was never judged (interrupted or cancelled run)",
                ).model_dump()
            )
    n = {v: sum(1 for c in cases if c.verdict == v) for v in (REGRESSED, DIVERGED, EQUIVALENT)}
    # A case never judged is not a passing case.
    summary = Summary(
        pass_=n[REGRESSED] == 0 and not errors,
        regressions=n[REGRESSED],
        divergences=n[DIVERGED],
        equivalents=n[EQUIVALENT],
    )
    report = Report(cases=cases, summary=summary)
    return report.model_dump(by_alias=True), errors


def build_report(store: Store, run_id: int) -> RunReport:
    run = store.log.run(run_id)
    if run is None:
        raise InputError(f"no run {run_id} in this database", path=store.path)
    return report_of(run, case_rows(store, run_id))


def report_of(run: RunRow, rows: list[CaseRow]) -> RunReport:
    """The report of `run` (as read) over its case rows (reviewer actions applied)."""
    report, errors = summarise(rows)
    return RunReport(
        run=run,
        rows=rows,
        report=report,
        errors=errors,
        overridden=sum(1 for r in rows if r.override),
    )


def exit_code(rr: RunReport, gate: str = COMPRESS) -> int:
    """0 pass; 1 a case regressed (or the gate's extra condition failed); 3 incomplete. A run that
    --fail-fast stopped has a regression: 1, unless a case it started errored."""
    if rr.failed or (rr.not_run and not rr.stopped_early()):  # a cancelled run is incomplete
        return 3
    return 0 if gate_result(rr, gate)["pass"] else 1


def gate_result(rr: RunReport, gate: str = COMPRESS) -> dict:
    """The gate profiles over the effective verdicts (docs/reference/rules.md, "Gate profiles")."""
    s = rr.report["summary"]
    judged = [r for r in rr.rows if r.status == JUDGED]
    out = {"gate": gate, "pass": s["pass"], "regressions": s["regressions"], "errors": len(rr.failed)}
    out["not_run"] = len(rr.not_run)  # --fail-fast: cases never started (not errors)
    if gate == DIRECTIVE_CLARITY:
        # original and candidate directness, set on every judged case
        d = {r.case_id: (r.original_directness or 0, r.candidate_directness or 0) for r in judged}
        if judged:
            mo = sum(o for o, _ in d.values()) / len(judged)
            mc = sum(c for _, c in d.values()) / len(judged)
        else:
            mo = mc = 0.0
        out.update(
            {
                "mean_original_directness": round(mo, 3),
                "mean_candidate_directness": round(mc, 3),
                "per_case_delta": {cid: c - o for cid, (o, c) in d.items()},
                "pass": s["pass"] and mc > mo,
            }
        )
    return out
