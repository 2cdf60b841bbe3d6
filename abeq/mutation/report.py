"""A mutation test's report, read from its mutants' runs: killed or survived, by which cases, why.

A mutant is killed by a case judged regressed (the judge's verdict with lost checks applied: a check
the original passes and the mutant fails is a loss); the evidence is the judge's delta. A mutant no
case killed survived, read as one of two things: *blind* (no case claims its section: add one) or
*claimed but unnoticed* (cases claim it, yet deleting it changed nothing they or the judge could
see); its evidence is the transcripts that stayed alike, side by side. A mutant with an errored case
and no kill is incomplete. `score` = killed / mutants.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..results.report import case_rows
from ..results.store import Store
from ..sets.confirm import set_hash
from ..vocab import REGRESSED

KILLED, SURVIVED, INCOMPLETE = "killed", "survived", "incomplete"
BLIND, UNNOTICED = "blind", "claimed but unnoticed"
READINGS = {
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
    return {
        "case_id": r.case_id,
        "claims_section": claimed,
        "verdict": r.machine_verdict,
        "teacher": db.mutations.transcript(r.teacher_key)[:EVIDENCE_CHARS],
        "mutant": db.mutations.transcript(r.candidate_key)[:EVIDENCE_CHARS],
    }


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


def mutant_result(db: Store, m, run_id: int, claims: list[str], noisy: set[str]) -> dict:
    rows = case_rows(db, run_id)
    judged = [r for r in rows if r.status == "judged"]
    kills = [r for r in judged if r.machine_verdict == REGRESSED]
    errors = [r for r in rows if r.status == "error"]
    # no kill: survived only when every case was judged (an error, a cancel leave it untested)
    status = KILLED if kills else (SURVIVED if len(judged) == len(rows) else INCOMPLETE)
    out = {
        **_about(m, claims),
        "status": status,
        "killed_by": [r.case_id for r in kills],
        "cases_run": len(judged),
        "run_id": run_id,
    }
    if status == KILLED:
        out["within_noise"] = all(r.within_noise or r.case_id in noisy for r in kills)
        out["evidence"] = [
            {
                "case_id": r.case_id,
                "claims_section": r.case_id in claims,
                "delta": r.behaviour_delta,
                "checks_lost": [c.label for c in r.checks_lost],
            }
            for r in kills
        ]
    elif status == SURVIVED:
        out["reading"] = UNNOTICED if claims else BLIND
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
    mutants = []
    for i, m in enumerate(prep.mutants):
        claims = prep.claims.get(m.section, [])
        if i < len(run_ids):
            mutants.append(mutant_result(db, m, run_ids[i], claims, noisy))
        else:
            mutants.append(
                {**_about(m, claims), "status": INCOMPLETE, "killed_by": [], "cases_run": 0, "run_id": None,
                 "errors": ["not run"]}
            )  # fmt: skip
    killed = sum(1 for x in mutants if x["status"] == KILLED)
    sums: dict[str, float] = {}
    for rid in run_ids:
        stats: Mapping[str, Any] = db.call_stats(rid)  # every value a number (CallSums)
        for k, v in stats.items():
            sums[k] = sums.get(k, 0) + float(v or 0)
    report = {
        "original": prep.original.name,
        "original_hash": prep.original.hash,
        "transfer_set_hash": set_hash(prep.ts),
        "runner_model": runner,
        "judge_model": cfg.judge.name,
        "all_cases": prep.all_cases,
        "score": round(killed / len(mutants), 4) if mutants else 0.0,
        "killed": killed,
        "survived": sum(1 for x in mutants if x["status"] == SURVIVED),
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
