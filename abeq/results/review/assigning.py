"""Work shared out: the cases of a run assigned to reviewers, by name or dealt out evenly.

The CLI (`abeq assign`) and the desk's Review page both call `assign` and `unassign`; each reviewer's
progress and agreement with the judge are read by results.reports.agreement.per_reviewer.
"""

from __future__ import annotations

from collections import Counter

from ...errors import InputError
from ...vocab import CASE_ERROR, NOT_RUN_STATUS
from ..store.rows import RunCaseRow
from ..store.store import Store

MAX_NAME = 100  # as the desk's reviewer field


def reviewers(text: str | list[str]) -> list[str]:
    """Reviewer names from 'ana, bo' (or a list): stripped, in order, each once."""
    names = text.split(",") if isinstance(text, str) else text
    out: list[str] = []
    for n in (x.strip() for x in names):
        if n and n not in out:
            if len(n) > MAX_NAME:
                raise InputError(f"a reviewer's name is over {MAX_NAME} characters: '{n[:40]}…'")
            out.append(n)
    return out


def _run_cases(store: Store, run_id: int) -> list[RunCaseRow]:
    if store.log.run(run_id) is None:
        hint = "`abeq history` lists runs."
        raise InputError(f"no run {run_id} in this database", path=store.path, hint=hint)
    return sorted(store.log.run_cases(run_id), key=lambda c: c["position"])


def _known(rows: list[RunCaseRow], cases: list[str], run_id: int) -> None:
    known = {c["case_id"] for c in rows}
    unknown = [c for c in cases if c not in known]
    if unknown:
        raise InputError(
            f"run {run_id} has no case {', '.join(repr(c) for c in unknown[:5])}"
            + (f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else ""),
            hint="Give the cases' ids as the transfer set names them.",
        )


def assign(
    store: Store,
    run_id: int,
    to: str | list[str],
    cases: list[str] | None = None,
    *,
    deal: bool = False,
    by: str = "",
) -> dict[str, str]:
    """Assign cases of a run to reviewers; what was assigned (case id -> reviewer).

    `cases` None: every case of the run nobody is assigned yet that a reviewer may get to act on
    (an errored or not-run case has no verdict to review). Named cases are assigned even when
    someone has them (re-assigned). One name takes them all; several need `deal`: each case in the
    set's order goes to the named reviewer with the fewest cases of this run so far (ties: the
    first named), so the team's loads come out even. Decided and written in one exclusive
    transaction, so two people dealing at once do not both deal the same cases."""
    names = reviewers(to)
    if not names:
        raise InputError("no reviewer to assign cases to", hint="Name them, comma-separated: ana, bo.")
    if len(names) > 1 and not deal:
        raise InputError(
            f"{len(names)} reviewers named and no --deal",
            hint="Add --deal to deal the cases out evenly among them, or name one reviewer.",
        )
    rows = _run_cases(store, run_id)
    if cases is not None:
        _known(rows, cases, run_id)
    with store.log.exclusive():
        current = store.assignments.of_run(run_id)
        if cases is None:
            todo = [
                c["case_id"]
                for c in rows
                if c["case_id"] not in current and c["status"] not in (CASE_ERROR, NOT_RUN_STATUS)
            ]
        else:
            wanted = set(cases)
            todo = [c["case_id"] for c in rows if c["case_id"] in wanted]  # the set's order
        load = Counter(a["reviewer"] for cid, a in current.items() if cid not in set(todo))
        plan: dict[str, str] = {}
        for case_id in todo:
            who = min(names, key=lambda n: (load[n], names.index(n)))
            plan[case_id] = who
            load[who] += 1
        store.assignments.assign(run_id, plan, by)
    return plan


def unassign(store: Store, run_id: int, cases: list[str] | None = None, *, by: str | None = None) -> int:
    """Take back assignments of a run (of these cases, else all); how many there were. With `by`
    (the desk: who acts there), only the ones `by` may take back (see `takeable`)."""
    rows = _run_cases(store, run_id)
    if cases is not None:
        _known(rows, cases, run_id)
    if by is not None:
        allowed = set(takeable(store, run_id, by))
        cases = [c for c in (cases if cases is not None else allowed) if c in allowed]
    return store.assignments.clear(run_id, cases)


def takeable(store: Store, run_id: int, by: str) -> list[str]:
    """The assignments of a run that `by` may take back on the desk: the ones they dealt and the ones
    that are theirs; nobody's when `by` is blank. (`abeq assign --clear` takes back any: whoever runs
    it holds the database file, and could delete the rows as easily.)"""
    name = by.strip()
    if not name:
        return []
    return [
        cid
        for cid, a in store.assignments.of_run(run_id).items()
        if a["reviewer"] == name or (a["assigned_by"] or "").strip() == name
    ]


def assigned_to(store: Store, run_id: int, reviewer: str) -> list[str]:
    """The cases of a run assigned to this reviewer."""
    name = reviewer.strip()
    return [cid for cid, a in store.assignments.of_run(run_id).items() if a["reviewer"] == name]
