"""A mutation test's report, read from its mutants' runs: killed or survived, by which cases, why.

A mutant is killed by a case judged regressed (the judge's verdict with lost checks applied: a check
the original passes and the mutant fails is a loss); each kill says whether the judge called it or a
check alone found it. A kill that only a model-graded check found counts once the run measured its
noise floor (--aa); without it the mutant is *unconfirmed*. A mutant no case killed survived, read
as one of three things: *unmapped* (no case of the set names the sections it exercises, so nothing
can be said about coverage), *blind* (cases are mapped, and none claims this section: add one) or
*claimed but unnoticed* (cases claim it, yet deleting it changed nothing they or the judge could
see); its evidence is the transcripts side by side (or the one transcript, when they are identical).
A mutant with an errored case and no kill is incomplete. `score` = killed / mutants.

When the runner or the judge is the scripted test double or the embedded model, the report says so
(`model_caveats`) and the score is not a trust figure (`trust_figure` false): with the scripted
runner a kill means "this section has list items", whatever the set is worth.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..results.reports.report import case_rows
from ..results.store.store import Store
from ..sets.confirmation import set_hash
from ..vocab import CASE_ERROR, JUDGED, REGRESSED

KILLED, SURVIVED, INCOMPLETE, UNCONFIRMED = "killed", "survived", "incomplete", "unconfirmed"
BLIND, UNNOTICED, UNMAPPED = "blind", "claimed but unnoticed", "unmapped"
BY_JUDGE, BY_CHECKS, BY_GRADED = "judge", "checks", "model-graded check"
MAP_HINT = (
    "name the sections each case exercises in its `exercises_sections` (or draft the set with "
    "`abeq draft-set`, which fills them)"
)
READINGS = {
    UNMAPPED: f"no case of this set names the sections it exercises, so no case claims this one: {MAP_HINT}",
    BLIND: "no case claims this section: add a case that needs it",
    UNNOTICED: "cases claim it, yet deleting it changed nothing they or the judge could see: the case "
    "does not make the model use it, the judge missed it, or the text is decorative for this set "
    "(compare the transcripts)",
}
EVIDENCE_CHARS = 4000  # of each transcript kept in the report


@dataclass
class MutationReport:
    report: dict
    score: float = 0.0
    incomplete: list[str] = field(default_factory=list)  # sections of mutants not fully tested

    @classmethod
    def from_row(cls, row: dict) -> MutationReport:
        rep = json.loads(row["report"])
        rep["id"], rep["status"] = row["id"], row["status"]
        return cls(rep, rep["score"], [m["section"] for m in rep["mutants"] if m["status"] == INCOMPLETE])

    @property
    def mutants(self) -> list[dict]:
        return self.report["mutants"]


def _pair(db: Store, r, claimed: bool) -> dict:
    teacher = db.mutations.transcript(r.teacher_key)[:EVIDENCE_CHARS]
    mutant = db.mutations.transcript(r.candidate_key)[:EVIDENCE_CHARS]
    same = teacher == mutant
    return {
        "case_id": r.case_id,
        "claims_section": claimed,
        "verdict": r.machine_verdict,
        "identical": same,  # then `mutant` is empty: the one transcript is `teacher`
        "teacher": teacher,
        "mutant": "" if same else mutant,
    }


def kill_by(r) -> str:
    """Who found a kill: the judge, a code check alone, or only a model-graded check (the grader)."""
    if r.judge_verdict == REGRESSED:
        return BY_JUDGE
    lost = r.checks_lost
    return BY_CHECKS if any(c.kind != "model" for c in lost) else BY_GRADED


def model_caveats(runner, judge, mode_kind: str) -> list[str]:
    """What the report must say when a test double or the embedded model made its calls."""
    roles: dict[str, list[str]] = {}
    for role, spec in (("runner", runner), ("judge", judge)):
        if role == "runner" and mode_kind == "command":
            continue  # an agent CLI's model is its own
        if spec.provider.caution and spec.provider.in_process:
            roles.setdefault(spec.name, []).append(role)
    specs = {runner.name: runner, judge.name: judge}
    out = [
        f"the {' and the '.join(r)} {'are' if len(r) > 1 else 'is'} {name}: "
        + specs[name].provider.caution.rstrip(".")
        for name, r in roles.items()
    ]
    if out and runner.name.startswith("scripted/") and mode_kind != "command":
        out.append(
            "with the scripted runner a mutant is killed when its section has list items the runner "
            "repeats; tables, code and prose always survive: this score says nothing about the set"
        )
    return out


def _about(m, claims: list[str]) -> dict:
    """What a mutant is: its section, kind ("section" / "model"), what it removed, who claims it."""
    out = {
        "section": m.section,
        "kind": m.kind,
        "operator": m.operator,
        "file": m.file,
        "claimed_by": list(claims),
        "removed": m.removed[:300],
        "removed_chars": len(m.removed),
    }
    if m.what:  # a model's mutant: the behaviour it says it removed
        out["removed_behaviour"] = m.what
    return out


def mutant_result(
    db: Store, m, run_id: int, claims: list[str], noisy: set[str], mapped: bool = True, aa: bool = True
) -> dict:
    """`mapped`: some case of the set names a section (else a survivor is unmapped, not blind);
    `aa`: the run measured the noise floor, so a kill only a model-graded check found counts."""
    rows = case_rows(db, run_id)
    judged = [r for r in rows if r.status == JUDGED]
    found = [r for r in judged if r.machine_verdict == REGRESSED]
    kills = [r for r in found if aa or kill_by(r) != BY_GRADED]
    unconfirmed = [r for r in found if r not in kills]
    errors = [r for r in rows if r.status == CASE_ERROR]
    # no kill: survived only when every case was judged (an error, a cancel leave it untested)
    if kills:
        status = KILLED
    elif unconfirmed:
        status = UNCONFIRMED
    else:
        status = SURVIVED if len(judged) == len(rows) else INCOMPLETE
    out = {
        **_about(m, claims),
        "status": status,
        "killed_by": [r.case_id for r in kills],
        "cases_run": len(judged),
        "run_id": run_id,
    }
    if status == KILLED:
        out["within_noise"] = all(r.within_noise or r.case_id in noisy for r in kills)
        out["killed_by_judge"] = [r.case_id for r in kills if kill_by(r) == BY_JUDGE]
        out["evidence"] = [
            {
                "case_id": r.case_id,
                "claims_section": r.case_id in claims,
                "by": kill_by(r),
                "delta": r.behaviour_delta,
                "checks_lost": [c.label for c in r.checks_lost],
            }
            for r in kills
        ]
    elif status == UNCONFIRMED:
        out["evidence"] = [
            {
                "case_id": r.case_id,
                "claims_section": r.case_id in claims,
                "by": BY_GRADED,
                "delta": r.behaviour_delta,
                "checks_lost": [c.label for c in r.checks_lost],
            }
            for r in unconfirmed
        ]
        out["errors"] = [
            "only a model-graded check found a loss (the judge did not): run with --aa so the noise "
            "floor is measured, and the kill counts"
        ]
    elif status == SURVIVED:
        out["reading"] = UNNOTICED if claims else (BLIND if mapped else UNMAPPED)
        shown = [r for r in judged if r.case_id in claims] or judged[:2]
        out["evidence"] = [_pair(db, r, r.case_id in claims) for r in shown]
    else:
        out["errors"] = [f"{r.case_id} ({r.error_stage}): {(r.error or '')[:200]}" for r in errors] or [
            f"{len(rows) - len(judged)} case(s) not judged"
        ]
    return out


def build_mutation_report(db: Store, prep, run_ids: list[int]) -> MutationReport:
    """The report of `prep`'s mutants whose runs are `run_ids` (in order; missing ones incomplete)."""
    cfg = prep.cfg
    runner = cfg.mode.label(cfg.runner)
    noisy = db.mutations.noisy_cases(prep.original.hash, set_hash(prep.ts), runner, cfg.judge.name)
    mapped = any(prep.claims.values())
    mutants = []
    for i, m in enumerate(prep.mutants):
        claims = prep.claims.get(m.section, [])
        if i < len(run_ids):
            mutants.append(mutant_result(db, m, run_ids[i], claims, noisy, mapped, cfg.aa))
        else:
            mutants.append(
                {**_about(m, claims), "status": INCOMPLETE, "killed_by": [], "cases_run": 0, "run_id": None,
                 "errors": ["not run"]}
            )  # fmt: skip
    killed = sum(1 for x in mutants if x["status"] == KILLED)
    caveats = model_caveats(cfg.runner, cfg.judge, cfg.mode.kind)
    sums: dict[str, float] = {}
    for rid in run_ids:
        stats: Mapping[str, Any] = db.log.call_stats(rid)  # every value a number (CallSums)
        for k, v in stats.items():
            sums[k] = sums.get(k, 0) + float(v or 0)
    report = {
        "original": prep.original.name,
        "original_hash": prep.original.hash,
        "transfer_set_hash": set_hash(prep.ts),
        "runner_model": runner,
        "judge_model": cfg.judge.name,
        "model_caveats": caveats,
        "trust_figure": not caveats,
        "cases_mapped": mapped,
        "all_cases": prep.all_cases,
        "score": round(killed / len(mutants), 4) if mutants else 0.0,
        "killed": killed,
        "killed_by_judge": sum(1 for x in mutants if x.get("killed_by_judge")),
        "survived": sum(1 for x in mutants if x["status"] == SURVIVED),
        "unmapped": sum(1 for x in mutants if x.get("reading") == UNMAPPED),
        "unconfirmed": sum(1 for x in mutants if x["status"] == UNCONFIRMED),
        "incomplete": sum(1 for x in mutants if x["status"] == INCOMPLETE),
        "killed_within_noise": sum(1 for x in mutants if x.get("within_noise")),
        "count": len(mutants),
        "mutants": mutants,
        "calls": {
            "made": int(sums.get("made", 0)),
            "cached": int(sums.get("cached", 0)),
            "teacher_made": int(sums.get("teacher_made", 0)),
            "tokens": int(sums.get("prompt_tokens", 0) + sums.get("completion_tokens", 0)),
            "cost": None if sums.get("unpriced") else round(sums.get("cost", 0.0), 6),
        },
    }
    if prep.written is not None:  # --model-mutants: the writing call, and each mutant discarded and why
        report["model_mutants"] = prep.written
    missing = [x["section"] for x in mutants if x["status"] == INCOMPLETE]
    return MutationReport(report, report["score"], missing)
