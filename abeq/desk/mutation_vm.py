"""What the Transfer set page's "Would this set notice a loss?" shows, computed without Streamlit:
the mutation test the Run page's models make, its job in a background thread (like a run's, it
outlives a browser session and Cancel reaches it), and the document as blocks coloured by what
deleting each section did. `mutation_panels` only draws these."""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..api import DESK_LABELS
from ..execution.engine import Stop
from ..mutation.estimate import describe_mutation_estimate
from ..mutation.mutants import section_spans
from ..mutation.render import caveat as caveat  # the panel says when a test double made the calls
from ..mutation.render import kind
from ..mutation.render import written_lines as written_lines  # the panel says what the model wrote
from ..mutation.report import BLIND, KILLED, READINGS, SURVIVED, UNMAPPED, UNNOTICED
from ..mutation.run import NOT_IN_A_MUTATION, PreparedMutation, prepare_mutation
from ..results.store.store import Store
from ..schemas import TransferSet
from ..sets.confirmation import set_hash
from ..vocab import CANCELLED
from . import policy
from .run_vm import desk_settings, stored_document
from .session import SIGNED_IN_KEY

# state -> (background, edge): green keep, red blind, amber claimed but unnoticed, grey otherwise
COLOURS = {
    KILLED: ("#dafbe1", "#2da44e"),
    BLIND: ("#ffebe9", "#cf222e"),
    UNNOTICED: ("#fff8c5", "#d4a72c"),
    UNMAPPED: ("#fbefff", "#8250df"),
    "other": ("#f6f8fa", "#8c959f"),
}
LEGEND = (
    "Green: killed (a case noticed the deletion: keep it). Red: survived, blind (no case claims the "
    "section: add one). Amber: survived, claimed but unnoticed (a candidate to cut, unless the case "
    "never makes the model use it or the judge missed it: compare the transcripts). Purple: survived, "
    "unmapped (no case names the sections it exercises: set exercises_sections, or draft the set). "
    "Grey: not tested."
)


@dataclass
class Job:
    thread: threading.Thread
    cancel: Stop = field(default_factory=Stop)
    progress: dict | None = None
    error: str | None = None


_jobs: dict[str, Job] = {}
_lock = threading.Lock()


def prepare(store: Store, original: dict, ts: TransferSet, state: Mapping) -> PreparedMutation:
    """The mutation test of this set with the Run page's settings (an AbeqError says why not)."""
    doc = stored_document(store, original)  # a skill with its folder: each mutant carries it
    settings = desk_settings(state, ts, leave=NOT_IN_A_MUTATION)
    policy.current(state.get(SIGNED_IN_KEY)).check(settings)  # what the desk's operator allowed
    return prepare_mutation(doc, ts, store=store, settings=settings, labels=DESK_LABELS)


def estimate_text(prep: PreparedMutation) -> str:
    return describe_mutation_estimate(prep.estimate(), prep.all_cases)


def start(db: str, prep: PreparedMutation) -> str:
    """Run the test in a background thread with its own connection; starting it again while it
    runs returns the same job."""
    with _lock:
        job = _jobs.get(prep.key)
        if job and job.thread.is_alive():
            return prep.key
        job = Job(threading.Thread(name="abeq-mutate", daemon=True, target=_work, args=(db, prep, prep.key)))
        _jobs[prep.key] = job
        job.thread.start()
    return prep.key


def _work(db: str, prep: PreparedMutation, key: str) -> None:
    job = _jobs[key]
    store = Store(db)
    try:
        prep.run(on_progress=lambda p: setattr(job, "progress", p), cancel=job.cancel, store=store)
    except Exception as e:  # noqa: BLE001 — the page says what went wrong instead of waiting forever
        job.error = f"{type(e).__name__}: {e}"
    finally:
        store.close()


def running(key: str) -> Job | None:
    job = _jobs.get(key)
    return job if job and job.thread.is_alive() else None


def job_error(key: str) -> str | None:
    job = _jobs.get(key)
    return job.error if job else None


def cancel(key: str) -> None:
    job = _jobs.get(key)
    if job:
        job.cancel.stop(CANCELLED)


def wait(key: str, timeout: float | None = None) -> None:
    job = _jobs.get(key)
    if job:
        job.thread.join(timeout)


def progress_text(p: dict | None) -> str:
    if not p or "mutant" not in p:
        return "Starting…"
    return (
        f"Mutant {p['mutant']} of {p['mutants']} (without {p.get('label', p['section'])}): "
        f"{p['done']} of {p['total']} "
        f"cases · {p['runner_done']} runner and {p['judge_done']} judge calls, {p['cached']} from the cache"
    )


def latest_report(store: Store, original: dict, ts: TransferSet) -> dict | None:
    """The newest finished mutation test of this set on this original (any models)."""
    row = store.mutations.latest(set_hash(ts), original["hash"])
    if row is None:
        return None
    return {**json.loads(row["report"]), "id": row["id"]}


@dataclass
class Block:
    """A stretch of the original: a section (with its mutant's index in the report) or text between."""

    text: str
    section: str = ""
    mutant: int | None = None
    state: str = ""

    @property
    def colour(self) -> tuple[str, str]:
        key = KILLED if self.state.startswith(KILLED) else self.state.split(": ")[-1]
        return COLOURS.get(key, COLOURS["other"])

    def html(self) -> str:
        e = html.escape
        bg, edge = self.colour
        label = f"<b>{e(self.section)}</b> · {e(self.state)}" if self.section else "(not a section)"
        box = f"background:{bg};border-left:4px solid {edge};padding:4px 8px;margin:0;color:#1f2328"
        pre = "white-space:pre-wrap;margin:0;background:none;font:12px/1.45 ui-monospace,monospace"
        return (
            f'<div style="{box}" data-state="{e(self.state)}"><div style="font:12px sans-serif">{label}</div>'
            f'<pre style="{pre}">{e(self.text.rstrip())}</pre></div>'
        )


def state(m: dict) -> str:
    if m["status"] == KILLED:
        return f"killed by {', '.join(m['killed_by'])}" + (" (within noise)" if m.get("within_noise") else "")
    if m["status"] == SURVIVED:
        return f"survived: {m['reading']}"
    return m["status"]


def blocks(text: str, report: dict) -> list[Block]:
    """The original in order: each section with its deletion's state, the text between as it is
    (a model's mutants are listed apart: `model_mutants`)."""
    by_section = {m["section"]: (i, m) for i, m in enumerate(report["mutants"]) if kind(m) == "section"}
    out, at = [], 0
    for name, a, b in section_spans(text):
        if text[at:a].strip():
            out.append(Block(text[at:a]))
        i, m = by_section.get(name, (None, None))
        out.append(Block(text[a:b], name, i, state(m) if m else "not tested"))
        at = b
    if text[at:].strip():
        out.append(Block(text[at:]))
    return out


def model_mutants(report: dict) -> list[tuple[int, dict]]:
    """The mutants a model wrote (index in the report, mutant): each one behaviour removed."""
    return [(i, m) for i, m in enumerate(report["mutants"]) if kind(m) == "model"]


def headline(report: dict) -> str:
    n, written = report["count"], len(model_mutants(report))
    what = f"{n} mutants ({n - written} section deletions, {written} written by a model)"
    what = what if written else f"{n} section deletions"
    return (
        f"Mutation score {report['score']:.0%}: {report['killed']} of {what} "
        f"noticed ({report['runner_model']} / {report['judge_model']}; mutation test {report['id']})"
        + ("" if report.get("trust_figure", True) else ": not a trust figure")
        + "."
    )


def reading(m: dict) -> str:
    """What a mutant's evidence means, in a sentence."""
    if m["status"] == SURVIVED:
        return READINGS[m["reading"]][0].upper() + READINGS[m["reading"]][1:] + "."
    if m["status"] == KILLED:
        return "Deleting it changed what these cases did; the judge said:"
    return "Not fully tested: " + "; ".join(m.get("errors", []))
