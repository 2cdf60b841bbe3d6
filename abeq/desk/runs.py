"""A review's runs as the desk tells them: which are not finished (running, cancelling, cancelled,
interrupted, failed), with their models and settings, and what Review says while one runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import run_settings
from ..results.store.liveness import ACTIVE
from ..results.store.store import Store
from ..vocab import (
    CANCELLING,
    FINISHED,
    INTERRUPTED,
    JUDGED,
    PENDING,
    RUN_STATUSES,
    RUNNING,
    STOPPED_EARLY,
)

STATUS_TEXT: dict[str, str] = {
    **{s: s for s in RUN_STATUSES},  # a status says itself, except:
    CANCELLING: "cancelling…",
    INTERRUPTED: "interrupted (its process stopped)",
    STOPPED_EARLY: "stopped early (fail fast: a case regressed)",
}


def status_text(status: str, cancel_requested: bool = False) -> str:
    if status == RUNNING and cancel_requested:
        return STATUS_TEXT[CANCELLING]
    return STATUS_TEXT.get(status, status)


def settings_text(run: Mapping[str, Any]) -> str:
    """The run's models and settings in one line (what a resume will use)."""
    s = run_settings(run)
    if not s:
        return f"runner {run['runner_model']} · judge {run['judge_model']} · variant {run['variant']}"
    r, j = s["runner"], s["judge"]
    at = lambda spec: f" at {spec['api_base']}" if spec.get("api_base") else ""  # noqa: E731
    command, env = stored_command(run)
    parts = [
        # a command run's runner is its command (what a resume runs), never the model name it ignores
        f"runner command: {command}" + (f" (environment {', '.join(env)})" if env else "")
        if command
        else f"runner {r['name']}{at(r)}",
        f"judge {j['name']}{at(j)}",
        f"variant {s['variant']}",
        f"concurrency {s['concurrency']}",
        f"judge samples {s['judge_samples']}",
        f"runner samples {s['runner_samples']}" if s.get("runner_samples", 1) > 1 else "",
        "A/A replay" if s["aa"] else "",
        f"temperature {r['temperature']:g}, max tokens {r['max_tokens']}, seed {r['seed']}",
        f"timeout {r['timeout']:g} s, {s['max_retries']} retries",
        "fresh (cache ignored)" if s["fresh"] else "",
        "thin set accepted" if s["allow_thin"] else "",
    ]
    return " · ".join(p for p in parts if p)


def stored_command(run: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The shell command a command run stored and the environment names it passes ("", () otherwise)."""
    mode = (run_settings(run) or {}).get("mode") or {}
    if not isinstance(mode, dict) or mode.get("kind") != "command":
        return "", ()
    return str(mode.get("command") or ""), tuple(mode.get("env") or ())


def resume_problem(run: Mapping[str, Any]) -> str | None:
    """Why this run cannot be resumed from the desk with its own settings, or None."""
    s = run_settings(run)
    if run["status"] in ACTIVE or run["status"] == FINISHED:
        return None  # nothing to resume
    if not s:
        return "stored before abeq kept a run's settings: start it again with the same settings"
    if s.get("api_base_stripped"):
        return "its API base held credentials, which abeq never stores: start it again from the form"
    return None


def unfinished(store: Store, review_id: int) -> list[dict]:
    """The review's runs that did not finish, newest first, each with its case counts, candidate,
    settings line and whether it can be resumed."""
    out = []
    for run in reversed(store.log.runs(review_id)):
        if run["status"] == FINISHED:
            continue
        doc = store.inputs.document(run["candidate_hash"])
        out.append(
            {
                **run,
                "candidate": doc["name"] if doc else "?",
                "counts": store.log.case_counts(run["id"]),
                "settings_text": settings_text(run),
                "resume_problem": resume_problem(run),
                "command": stored_command(run)[0],
                "label": status_text(run["status"], bool(run.get("cancel_requested_at"))),
            }
        )
    return out


def review_headline(run: dict, rows: list) -> str | None:
    """What Review says instead of PASS/FAIL while the run is still running: "running — k of n
    judged" (None once it is not running: then the gate applies)."""
    if run["status"] not in ACTIVE:
        return None
    judged = sum(1 for r in rows if r.status == JUDGED)
    return (
        f"{status_text(run['status'], bool(run.get('cancel_requested_at')))} — {judged} of {len(rows)} judged"
    )


def finished_rows(run: dict, rows: list) -> list:
    """The cases to list: while the run runs, only those that finished (a pending case is not an
    error yet); afterwards all of them."""
    if run["status"] not in ACTIVE:
        return rows
    return [r for r in rows if r.status != PENDING]
