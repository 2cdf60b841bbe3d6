"""What `abeq check-set` says about a set's checks: how many cases carry them, which cannot run (and
why), and which the original itself fails on a transcript already in the database. A check the
original fails can never show a regression, so it usually means the check or the case is wrong."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from ...results.store.rows import TeacherCase
from ...results.store.store import Store
from ...schemas import Case, RunnerReply, TransferSet
from ...sets.confirmation import case_identity
from .checks import case_checks, problems, run_check
from .code_trust import code_hash, trust_state
from .scripts import Sandbox, sandbox_level


@dataclass
class CheckAudit:
    cases: int = 0  # cases that carry at least one check
    checks: int = 0
    code: int = 0
    model: int = 0
    skipped: list[dict] = field(default_factory=list)  # case_id, check, reason
    problems: list[str] = field(default_factory=list)  # checks a run would refuse
    tried_cases: int = 0  # cases whose checks met a stored teacher transcript
    original_fails: list[dict] = field(default_factory=list)  # case_id, check, evidence, run_id, model
    scripts: list[dict] = field(default_factory=list)  # every script the checks run (code_trust.CodeItem)
    code_hash: str = ""  # what trust is given for
    code_trusted: bool = False  # --trust-code, or this code's hash in the user's trust file
    sandbox: str = ""  # how trusted scripts run on this machine: "bubblewrap" or "limits"
    code_not_tried: int = 0  # script checks not tried on stored transcripts: their code is not trusted

    def as_dict(self) -> dict:
        return asdict(self)

    def script_lines(self, set_path: str) -> list[str]:
        """What `abeq check-set` says of the set's code: a line, then one per script and where it is."""
        if not self.scripts:
            return []
        state = "trusted" if self.code_trusted else "not trusted: a run refuses without --trust-code"
        out = [
            f"code: {len(self.scripts)} script(s) run on this machine when a run trusts them "
            f"(code {self.code_hash[:12]}, {state}; here they run "
            + (
                "inside bubblewrap"
                if self.sandbox == "bubblewrap"
                else "only with --unsandboxed: bubblewrap cannot make a sandbox here"
            )
            + "):"
        ]
        for i in self.scripts:
            line = f":{i['line']}" if i["line"] else ""
            src = f" ({i['file']}, read in at import)" if i["file"] else ""
            what = f"{i['language']} {i['role']}{src}"
            out.append(f"  {set_path}{line}: case {i['case_id']}, check {i['check']}: {what}")
        return out

    def warnings(self) -> list[str]:
        out = [f"case {s['case_id']}: check {s['check']} is skipped: it {s['reason']}" for s in self.skipped]
        if self.code_not_tried:
            out.append(
                f"{self.code_not_tried} check(s) run the set's code, not trusted: not tried on the "
                "stored transcripts (--trust-code tries them)"
            )
        out += [
            f"case {f['case_id']}: the original fails its own check {f['check']} (run {f['run_id']}, "
            f"{f['runner_model']}: {f['evidence']}); a check the original fails can never show a "
            "regression: fix the check or the case"
            for f in self.original_fails
        ]
        return out


def audit(
    ts: TransferSet,
    store: Store | None = None,
    original_hash: str | None = None,
    *,
    set_path: str | None = None,
    trust_code: bool = False,
    sandbox: Sandbox | None = None,
) -> CheckAudit:
    """Count the set's checks and list the code they run; with a store, try each on the newest stored
    teacher transcript of the same case (same input, gate answers and workspace) for this original
    (a script only when its code is trusted: `trust_code` or the user's trust file)."""
    a = CheckAudit()
    items, a.code_trusted = trust_state(ts, trust_code, set_path)
    a.scripts = [i.as_dict() for i in items]
    if items:
        a.code_hash, a.sandbox = code_hash(items), sandbox_level(sandbox)
    for case in ts.cases:
        checks = case_checks(case)
        if not checks:
            continue
        a.cases += 1
        a.checks += len(checks)
        a.code += sum(1 for c in checks if c.kind == "code")
        a.model += sum(1 for c in checks if c.kind == "model")
        a.skipped += [
            {"case_id": case.id, "check": c.label, "reason": c.reason} for c in checks if c.kind == "skipped"
        ]
        a.problems += problems(case)
    if store is not None and original_hash and a.cases:
        _try_on_teacher(a, ts, store, original_hash, sandbox)
    return a


def _runnable(case: Case) -> str:
    """What the runner sees of a case: a stored transcript of it is a transcript of this case."""
    ident = {k: v for k, v in case_identity(case).items() if k not in ("assertions", "expectations")}
    return json.dumps(ident, sort_keys=True, ensure_ascii=False)


def _try_on_teacher(
    a: CheckAudit, ts: TransferSet, store: Store, original_hash: str, sandbox: Sandbox | None
) -> None:
    wanted = {case.id: case for case in ts.cases if case_checks(case)}
    sets: dict[str, TransferSet | None] = {}
    found: dict[str, TeacherCase] = {}
    for r in store.log.teacher_runs(original_hash):  # newest run first
        case = wanted.get(r["case_id"])
        if case is None or case.id in found or not r["teacher_key"]:
            continue
        h = r["transfer_set_hash"]
        if h not in sets:
            sets[h] = store.inputs.transfer_set(h)
        stored = sets[h]
        old = next((c for c in (stored.cases if stored else []) if c.id == case.id), None)
        if old is not None and _runnable(old) == _runnable(case):
            found[case.id] = r
    for cid, r in found.items():
        row = store.cache.runner_result(r["teacher_key"])
        if row is None:
            continue
        reply = RunnerReply.model_validate(
            {"transcript": row["transcript"], "self_report": json.loads(row["self_report"])}
        )
        a.tried_cases += 1
        graded = {
            g["label"]: g for g in store.log.check_results(r["run_id"]).get(cid, []) if g["kind"] == "model"
        }
        for c in case_checks(wanted[cid]):
            if c.kind == "code" and c.runs_code and not a.code_trusted:
                a.code_not_tried += 1
                continue
            if c.kind == "code":
                passed, evidence = run_check(c, reply, wanted[cid], sandbox)
            elif c.kind == "model" and c.label in graded and graded[c.label]["teacher"] is not None:
                passed, evidence = bool(graded[c.label]["teacher"]), graded[c.label]["teacher_evidence"]
            else:  # a natural-language check not graded on this transcript yet: a run will
                continue
            if not passed:
                a.original_fails.append(
                    {
                        "case_id": cid,
                        "check": c.label,
                        "evidence": evidence[:200],
                        "run_id": r["run_id"],
                        "runner_model": r["runner_model"],
                    }
                )
