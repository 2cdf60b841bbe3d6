"""Calibration from your own reviews: every judged case a reviewer acted on (agreed with or
overrode) becomes a pair labelled with the reviewer's verdict, so a judge (the one the runs used,
or another candidate) can be measured on the cases that matter to you."""

from __future__ import annotations

import json

from ..errors import InputError
from ..models.spec import ModelSpec
from ..results.store.rows import RunRow
from ..results.store.store import Store
from ..vocab import VERDICTS
from .suite import REVIEWED, CalibrationRun, Pair, Source, Suite


def _run_of(store: Store, key: str | None) -> CalibrationRun | None:
    row = store.cache.runner_result(key) if key else None
    if not row:
        return None
    observed = json.loads(row.get("observed") or "{}")
    return CalibrationRun(
        transcript=row["transcript"],
        self_report=json.loads(row["self_report"]),
        workspace_changes=observed.get("workspace_changes", []),
    )


def reviewed_runs(store: Store, review: str | None = None) -> list[RunRow]:
    """The runs whose reviewed cases count: all of them, or those of one review (by name)."""
    if review is None:
        return store.log.runs()
    r = store.inputs.review(review)
    if r is None:
        names = ", ".join(x["name"] for x in store.inputs.reviews()) or "none yet"
        raise InputError(
            f"no review named '{review}'", path=store.path, hint=f"Reviews in this database: {names}."
        )
    return store.log.runs(r["id"])


def suite_from_reviews(store: Store, review: str | None = None) -> Suite:
    """A suite of the reviewed cases (latest action per case of each run; an agreement's verdict is
    the judge's), each keeping its runs' cache keys. An InputError when there is none."""
    pairs, sources = [], []
    for run in sorted(reviewed_runs(store, review), key=lambda r: r["id"]):
        acted = store.ledger.reviewed(run["id"])
        if not acted:
            continue
        ts = store.inputs.transfer_set(run["transfer_set_hash"])
        inputs = {c.id: c.input for c in (ts.cases if ts else [])}
        src = f"run-{run['id']}"
        used = False
        for case_id, action in sorted(acted.items()):
            rc = store.log.run_case(run["id"], case_id)
            if not rc or action["verdict"] not in VERDICTS or case_id not in inputs:
                continue
            teacher, candidate = _run_of(store, rc["teacher_key"]), _run_of(store, rc["candidate_key"])
            if teacher is None or candidate is None:
                continue
            why = " ".join((action.get("reason") or "").split()) or "no reason given"
            pairs.append(
                Pair(
                    id=f"{src}/{case_id}",
                    category=REVIEWED,
                    label=action["verdict"],
                    reason=f"{action['action']} by {action.get('reviewer') or 'a reviewer'}: {why}"[:300],
                    source=src,
                    case_input=inputs[case_id],
                    teacher=teacher,
                    candidate=candidate,
                    teacher_key=rc["teacher_key"] or "",
                    candidate_key=rc["candidate_key"] or "",
                    truncated=bool(rc.get("gate_truncated")),
                )
            )
            used = True
        if used:
            sources.append(
                Source(
                    id=src,
                    kind="reviewed-run",
                    repo="(this database)",
                    path=str(store.path),
                    url=f"abeq run {run['id']}",
                    what=f"run {run['id']}: {run['runner_model']} judged by {run['judge_model']}",
                )
            )
    if not pairs:
        where = f" in review '{review}'" if review else ""
        raise InputError(
            f"no reviewed cases{where} to calibrate on",
            path=store.path,
            hint="Agree with or override judged cases first (abeq agree, abeq override, or the Review page).",
        )
    name = f"reviews:{review}" if review else "reviews"
    return Suite(
        name=name, description="cases reviewers agreed with or overrode", sources=sources, pairs=pairs
    )


def current_judge(store: Store, review: str | None = None) -> ModelSpec | None:
    """The judge the latest of these runs used, with its own sampling (None when it is not stored)."""
    from ..execution.config import RunConfig

    for run in sorted(reviewed_runs(store, review), key=lambda r: -r["id"]):
        settings = json.loads(run.get("config") or "{}").get("settings")
        if settings:
            return RunConfig.from_settings(settings).judge
    return None
