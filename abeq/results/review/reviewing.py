"""A reviewer's word on a judged case: agree with the judge, or override it with a verdict and a reason.

Both are recorded with the reviewer's name and the time; the latest action on a case is in effect
and the older ones stay as the audit trail. Each action records what it replaced and the verdict
the reviewer had in front of them. Saving over an action the reviewer has not seen (another
reviewer's, made after they opened the case) is refused with a ReviewConflict that says who did
what and when, until the caller asks to replace it.

The CLI (`abeq agree`, `abeq override`) and the desk's Review page both call `record`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import InputError, ReviewConflict
from ...timestamps import ago
from ...vocab import AGREE, CASE_ERROR, JUDGED, OVERRIDE, REVIEW_ACTIONS, VERDICTS, is_verdict
from ..reports.report import case_rows
from ..store.rows import OverrideRow
from ..store.store import Store

CURRENT = "current"  # seen=CURRENT: the caller reads the case as it saves (the CLI): no conflict


def describe(action: Mapping[str, Any], now_s: float | None = None) -> str:
    """One line for an action: "ana overrode this 2 min ago to equivalent"."""
    who = action.get("reviewer") or "someone"
    when = ago(action.get("created_at"), now_s)
    where = f" in run {action['carried_from']}" if action.get("carried_from") else ""
    if action.get("action") == AGREE:
        return f"{who} agreed with the judge ({action['verdict']}) {when}{where}"
    return f"{who} overrode this {when}{where} to {action['verdict']}"


def in_effect(store: Store, run_id: int, case_id: str) -> OverrideRow | None:
    """The action in effect on a case: its latest in this run, else one carried from an identical
    judgement in another run; None when no reviewer has acted on it."""
    return store.ledger.action_in_effect(run_id, case_id)


def record(
    store: Store,
    run_id: int,
    case_id: str,
    *,
    action: str,
    reviewer: str,
    verdict: str | None = None,
    reason: str = "",
    seen: int | None | str = CURRENT,
    replace: bool = False,
) -> int:
    """Record an agreement or an override; returns its id.

    `seen` is the id of the action in effect when the reviewer read the case (None: none). When
    another one is in effect now, a ReviewConflict is raised and nothing is written, unless
    `replace`. An agreement accepts the verdict abeq gave (the judge's, made regressed by a check
    the candidate lost); an override needs a verdict and a reason. Either way the action keeps the
    judge's own verdict, so κ measures the judge.
    """
    if action not in REVIEW_ACTIONS:
        raise InputError(f"unknown review action '{action}'", hint=f"Use {' or '.join(REVIEW_ACTIONS)}.")
    if store.log.run(run_id) is None:
        raise InputError(f"no run {run_id} in this database", path=store.path)
    rc = store.log.run_case(run_id, case_id)
    if rc is None:
        raise InputError(f"run {run_id} has no case '{case_id}'")
    if rc["status"] != JUDGED:
        why = "errored" if rc["status"] == CASE_ERROR else "was not run"
        raise InputError(
            f"case '{case_id}' {why}: there is no verdict to {action}",
            hint="Run it again (the same command, or Start on Run, resumes the run).",
        )
    reviewer = (reviewer or "").strip()
    if not reviewer:
        raise InputError(
            f"an {'override' if action == OVERRIDE else 'agreement'} needs the reviewer's name",
            hint="It goes into the audit trail (--reviewer on the command line).",
        )
    judge = rc["verdict"]
    if action == AGREE:  # abeq's verdict: a judged case always has one
        verdict = case_rows(store, run_id, case_id)[0].machine_verdict
    if not is_verdict(verdict):
        raise InputError(f"unknown verdict '{verdict}'", hint=f"Use one of: {', '.join(VERDICTS)}.")
    if action == OVERRIDE and not reason.strip():
        raise InputError("an override needs a reason", hint="Say why the judge's verdict is wrong.")
    try:
        return store.ledger.add_override(
            run_id,
            case_id,
            verdict,
            reason,
            reviewer,
            judge,
            action=action,
            check_seen=not replace and seen != CURRENT,
            seen_id=None if isinstance(seen, str) else seen,  # a str is CURRENT
        )
    except ReviewConflict as e:
        raise ReviewConflict(e.current, f"{describe(e.current)}: replace?") from None
