"""What the Review page shows, computed without Streamlit: which run and which case are open (from a
link, this session's last choice, or the queue), how a run is named, the search's hits, and why a
case has no evidence to show. `params` are the URL's query parameters and `state` the session
state (a dict in tests). The page (and `review_panels`, `review_view`) only draw these."""

from __future__ import annotations

import threading
from collections.abc import Mapping, MutableMapping
from typing import Any, cast

from ..results.reports.agreement import MIN_KAPPA_N, kappa_text, per_reviewer
from ..results.reports.report import CaseRow, RunReport, actions, machine_rows, report_of, with_actions
from ..results.review.assigning import assigned_to
from ..results.store.liveness import ACTIVE
from ..results.store.rows import RunRow
from ..results.store.store import Store
from ..schemas import Case
from ..timestamps import local
from ..vocab import CASE_ERROR, JUDGED, NOT_RUN_STAGE, PENDING
from . import cases, links, session
from .render import md
from .runs import finished_rows

RUN, CASE = "review_run", "review_case"  # the widgets' keys
BOARD, CASE_PANEL = "review_board", "review_case_panel"  # the page's fragments (st.rerun targets)
HEADER = "review_header"  # the compact line of the run's figures above the case
REFRESH_SECONDS = 2.0  # while the run shown runs, its queue and headline are read again this often

# What a run reads as, per database and run, while it has not changed (`stamp`); shared by every
# session of this desk process: a reload, a second reviewer or the case panel beside the run's part
# reuse one report instead of reading 200 cases again. Rows are read, never changed, by the pages.
_REPORTS: dict[tuple[str, int], tuple[tuple, RunReport, list[CaseRow]]] = {}  # stamp, report, machine rows
_SETS: dict[tuple[str, str], dict[str, Case]] = {}
_LOCK = threading.Lock()


def run_label(run: dict, candidate: str) -> str:
    """A run as the run picker lists it (a command run by its command, never a model it ignored)."""
    from .runs import stored_command

    command = stored_command(run)[0]
    runner = f"command {command[:60]}{'…' if len(command) > 60 else ''}" if command else run["runner_model"]
    return (
        f"run {run['id']} · round {run['round']} · candidate {candidate} · "
        f"{runner} / {run['judge_model']} · {run['status']} · {local(run['started_at'])}"
    )


def candidate_names(store: Store, runs: list[dict]) -> dict[str, str]:
    docs = {r["candidate_hash"]: store.inputs.document(r["candidate_hash"]) for r in runs}
    return {h: d["name"] if d else "?" for h, d in docs.items()}


def forget_run(params: MutableMapping, state: MutableMapping) -> None:
    """A review without runs: another review's run and case must not linger in the URL."""
    for name in ("run", "case"):
        links.publish(params, state, name, None, scope="review")


def choose_run(params: Mapping, state: MutableMapping, run_ids: list[int]) -> str:
    """Open the run a link asks for, else the one open before (the widget's state goes when the
    page is left: a copy is kept), else the latest; what to warn about, or ''."""
    warning = ""
    if (asked := links.adopt(params, state, "run", scope="review")) is not None:  # a deep link, a reload
        if links.run_id(asked) in run_ids:
            state[RUN] = links.run_id(asked)
        else:
            warning = md(
                f"Run {asked[:40]} is not a run of this review; showing its latest run. (Pick the run's "
                "review in the sidebar to open it.)"
            )
    if state.get(RUN) not in run_ids:
        kept = state.get(f"keep:{RUN}")
        state[RUN] = kept if kept in run_ids else run_ids[0]
    return warning


def adopt_case(params: Mapping, state: MutableMapping, run_id: int, case_ids: set[str]) -> str:
    """A link's case opens whatever this session's filters are; what to warn about, or ''."""
    if (asked := links.adopt(params, state, "case", scope="review")) is None:
        return ""
    if asked not in case_ids:
        return md(f"Run {run_id} has no case '{asked}'.")
    state["review_goto"] = asked
    state.update(review_filter="all", review_seen="all", review_search="")
    return ""


def found(store: Store, state: MutableMapping, run: dict, set_cases: dict, text: str) -> set[str] | None:
    """The cases a search finds (None without a search); kept for the run as it stands, so a
    rerun does not search the transcripts again."""
    if not text.strip():
        return None
    memo = (run["id"], text.strip(), run["status"], run["finished_at"])
    if state.get("review_found", (None,))[0] != memo:
        state["review_found"] = (memo, cases.search(store, run["id"], set_cases, text))
    return state["review_found"][1]


def choose_case(state: MutableMapping, ids: list[str], run_id: int, needed: list[str] | None = None) -> str:
    """The case to open: one a link asked for, else the one open before if still listed, else the
    one this session last read in this run, else the case after the one that left the list (an
    action moved it out of the filter), else the first that still needs this reviewer (`needed`, in
    the order `needing` gives), else the first."""
    if (goto := state.pop("review_goto", None)) in ids:
        state[CASE] = goto
    if state.get(CASE) not in ids:
        kept = state.get(f"keep:{CASE}")
        before = state.get("review_ids", [])
        cur = state.get(CASE)
        after = before[before.index(cur) + 1 :] if cur in before else []
        fresh = next((c for c in needed or () if c in ids), ids[0])
        state[CASE] = (
            kept[1]
            if kept and kept[0] == run_id and kept[1] in ids
            else next((c for c in after if c in ids), fresh)
        )
    state["review_ids"] = ids
    return state[CASE]


def no_evidence(row: CaseRow, run_id: int | str = "") -> tuple[str, str, str | None] | None:
    """Why a case has nothing to compare, as (kind, Markdown, code to show), or None when judged."""
    if row.error_stage == NOT_RUN_STAGE:
        return "info", md(row.error or NOT_RUN_STAGE), None
    if row.status == PENDING:
        return (
            "warning",
            f"This case was not run: the run was cancelled or interrupted before it. **Resume run {run_id}** "
            "on Run (with its own settings) runs it; the cases judged stand. Until then the gate cannot "
            "pass; the case is listed as not run in the export.",
            None,
        )
    if row.status != JUDGED:
        return (
            "error",
            f"This case has no verdict: it errored at the **{md(row.error_stage or row.status)}** stage. "
            "An errored case fails the gate; it is listed under `errors` in the export.",
            row.error or "the case was never judged (interrupted or cancelled run)",
        )
    return None


def case_input_title(case: Case) -> str:
    # an expander label is Markdown: the section names come from the set file
    return f"Case input ({case.type}; exercises {md(', '.join(case.exercises_sections) or 'no section')})"


def gate_answers(case: Case) -> list[str]:
    return [md(f"gate answer: when asked “{g.pattern}” → “{g.response}”") for g in case.gate_responses]


def needing(rows: list[CaseRow], owner: Mapping[str, str], me: str, after: str | None = None) -> list[str]:
    """The cases that still need this reviewer (`me`), in the order the queue goes to them: judged
    and reviewed by nobody; their own first (assigned to them), then nobody's, then a teammate's
    (when the reviewer's own are done, the team's others follow). Within each, the queue's order
    from the case after `after`, wrapping round: acting on a teammate's case (opened from a link)
    goes back to the reviewer's own queue, not on through the teammate's."""
    ids = [r.case_id for r in rows]
    if after in ids:
        i = ids.index(after)
        rows = rows[i + 1 :] + rows[:i]
    todo = [r for r in rows if r.status == JUDGED and not r.reviewed]

    def tier(r: CaseRow) -> int:
        who = owner.get(r.case_id)
        return 0 if who is not None and who == me else 1 if who is None else 2

    return [r.case_id for r in sorted(todo, key=tier)]  # stable: the queue's order within a tier


def owners(store: Store, run_id: int) -> dict[str, str]:
    """Whose each assigned case of the run is (case id -> reviewer)."""
    return {c: a["reviewer"] for c, a in store.assignments.of_run(run_id).items()}


def next_case(rows: list[CaseRow], owner: Mapping[str, str], me: str, case_id: str) -> str | None:
    """Where Agree or Override goes next (`rows` the queue as listed): the next case that still
    needs this reviewer (`needing`), else the next one listed."""
    ids = [r.case_id for r in rows]
    todo = [c for c in needing(rows, owner, me, after=case_id) if c != case_id]
    return todo[0] if todo else cases.neighbours(ids, case_id)[1]


def whose(owner: Mapping[str, str], me: str, case_id: str) -> str:
    """Whose the case is, when the run's cases are shared out ('' when they are not): plain text."""
    if not owner:
        return ""
    who = owner.get(case_id)
    if who is None:
        return "assigned to nobody"
    return f"yours ({who})" if who == me else f"assigned to {who}"


def live(run: Mapping[str, Any] | None) -> bool:
    """The run is running (or cancelling): the page reads it again every REFRESH_SECONDS."""
    return run is not None and run.get("status") in ACTIVE


def in_flight(store: Store, run: Mapping[str, Any], rows: list[CaseRow]) -> list[str]:
    """While the run runs: its cases with a call of this attempt landed but no verdict yet."""
    if not live(run):
        return []
    pending = {r.case_id for r in rows if r.status == PENDING}
    got = store.log.cases_with_calls(run["id"], run.get("attempt_first_call") or 0)
    return [r.case_id for r in rows if r.case_id in pending & got]


def counts(rr: RunReport) -> dict[str, int]:
    """The one count the banner and the headline both say: judged, errored and total cases."""
    judged = sum(1 for r in rr.rows if r.status == JUDGED)
    return {
        "judged": judged,
        "errored": sum(1 for r in rr.rows if r.status == CASE_ERROR),
        "total": len(rr.rows),
    }


def banner(rr: RunReport, latest_id: int, running: list[str]) -> str:
    """What to do next about the run shown (not the review's latest: a link may open an older one)."""
    run, c = rr.run, counts(rr)
    older = f" (an older run: the latest is run {latest_id})" if run["id"] != latest_id else ""
    did = f"{c['judged']} of {c['total']} judged" + (f", {c['errored']} errored" if c["errored"] else "")
    if live(run):
        now = f", {len(running)} running" if running else ""
        return f"Run {run['id']}{older} is {run['status']}: {did}{now}. Verdicts appear here as they land."
    if rr.incomplete():
        rest = f"**Resume run {run['id']}** on **Run** runs the rest."
        return f"Run {run['id']}{older}: {md(rr.incomplete() or '')}. {rest}"
    todo = sum(1 for r in rr.rows if r.status == JUDGED and not r.reviewed)
    if todo:
        return (
            f"Run {run['id']}{older}: {todo} of {c['judged']} judged cases await a reviewer; **Agree** or "
            "**Override** each (uncertain and regressed cases come first)."
        )
    return f"Every judged case of run {run['id']}{older} is reviewed: export the report below."


def stamp(store: Store, run: Mapping[str, Any]) -> tuple[tuple, Any]:
    """What changes when the run's report would: (the run's own part, the reviewer actions'). The
    run as read (its status is read live: a run whose process died reads interrupted), its cases (a
    status change moves a count; a re-judged case is a new row), its calls (costs) and its checks;
    apart, any reviewer action (carried ones too). One indexed read instead of the report's seven."""
    cases, acted, calls, checks = store.log.report_stamp(run["id"])
    return (*sorted(run.items()), cases, calls, checks), acted


def report(store: Store, run: Mapping[str, Any]) -> RunReport:
    """The run's report (`run` as just read), built again only when its stamp moved. A reviewer's
    action moves only its second part: then the run's rows as read before serve again, with the
    actions read again and applied (an Agree on a 10,000-case run reads no case)."""
    run_id = run["id"]
    key, (own, acted) = (store.path, run_id), stamp(store, run)
    with _LOCK:
        hit = _REPORTS.get(key)
    if hit and hit[0] == (own, acted):
        return hit[1]
    if hit and hit[0][0] == own:
        machine = hit[2]
    else:
        machine = machine_rows(store, run_id)
    rr = report_of(cast(RunRow, dict(run)), with_actions(machine, actions(store, run_id)))
    with _LOCK:
        if len(_REPORTS) > 16:
            _REPORTS.clear()
        _REPORTS[key] = ((own, acted), rr, machine)
    return rr


def set_cases(store: Store, run: Mapping[str, Any]) -> dict[str, Case]:
    """The run's transfer set's cases by id (a set's content never changes under its hash)."""
    key = (store.path, run["transfer_set_hash"])
    if key not in _SETS:
        ts = store.inputs.transfer_set(run["transfer_set_hash"])
        _SETS[key] = {c.id: c for c in (ts.cases if ts else [])}
    return _SETS[key]


def queue(store: Store, state: MutableMapping, run: Mapping[str, Any], rows: list[CaseRow]) -> list[CaseRow]:
    """The cases listed, in queue order, through this session's filters (Show, Reviewed, Search),
    the reviewer's own (assigned to them) first; while the run runs, only the finished ones."""
    shown = finished_rows(dict(run), rows)
    text = state.get("review_search") or ""
    hits = found(store, state, dict(run), set_cases(store, run), text)
    which, seen = state.get("review_filter") or "all", state.get("review_seen") or "all"
    return cases.filter_rows(shown, which, seen, hits, first=mine(store, state, run["id"]))


def mine(store: Store, state: Mapping, run_id: int) -> set[str]:
    """The cases of the run assigned to this session's reviewer."""
    me = session.reviewer(state)
    return set(assigned_to(store, run_id, me)) if me else set()


def own_queue(store: Store, state: Mapping, run_id: int, rows: list[CaseRow]) -> str:
    """ "Your queue: 3 of 7 left" for a reviewer with cases of this run assigned; what the team's
    sharing means for them otherwise; '' when the run's cases are not shared out."""
    assigned = store.assignments.of_run(run_id)
    if not assigned:
        return ""
    me, own = session.reviewer(state), mine(store, state, run_id)
    if not own:
        who = md(me) if me else "you (no reviewer name yet)"
        return f"No case of this run is assigned to {who}: the queue is in its usual order."
    left = [r for r in rows if r.case_id in own and r.status == JUDGED and not r.reviewed]
    waiting = sum(1 for r in rows if r.case_id in own and r.status == PENDING)
    said = f"Your queue ({md(me)}): {len(left)} of {len(own)} left"
    said += f", {waiting} not judged yet" if waiting else ""
    return said + (" · listed first" if left else " · done: the team's other cases follow")


def team(store: Store, run_id: int, rows: list[CaseRow]) -> tuple[list[dict], str]:
    """The per-reviewer table the Review page shows (assigned, reviewed, left, agreement, κ) and a
    line on how much of the run is shared out."""
    assigned = {c: a["reviewer"] for c, a in store.assignments.of_run(run_id).items()}
    table = [
        {
            "reviewer": r["reviewer"],
            "assigned": r["assigned"],
            "reviewed": r["reviewed"],
            "by others": r["by_others"],
            "left": r["left"],
            # a row with nothing of theirs acted on has no figure (not 100% from a teammate's cases)
            "agreement": "—" if r["raw_agreement"] is None else f"{r['raw_agreement']:.0%}",
            "Cohen's κ": kappa_text(r["kappa"], r["kappa_note"], r["acted"]),
            "note": "; ".join(
                x
                for x in (
                    f"{r['elsewhere']} action(s) on teammates' cases, not counted here"
                    if r["elsewhere"]
                    else "",
                    r["kappa_note"] if r["acted"] >= MIN_KAPPA_N else "",
                )
                if x
            ),
        }
        for r in per_reviewer(rows, assigned)
    ]
    assignable = sum(1 for r in rows if r.status in (JUDGED, PENDING))  # not errored, not left unrun
    return table, f"{len(assigned)} of {assignable} cases assigned"


def live_caption(running: list[str], unlisted: int) -> str:
    """While the run runs: that the page follows it, what runs now, and how many finished cases the
    case picker does not list yet (the timer does not redraw it: a step through the queue does)."""
    said = f"The run is still going: this page reads it again every {REFRESH_SECONDS:g} s."
    if running:
        more = f" and {len(running) - 6} more" if len(running) > 6 else ""
        said += f" Running now: {', '.join(running[:6])}{more}."
    if unlisted > 0:
        said += (
            f" {unlisted} finished case(s) not in the case picker yet: Next, Previous or a pick lists them."
        )
    return said


def figures(rr: RunReport, running: list[str] | None = None) -> list[tuple[str, object, str | None]]:
    """The run's figures as (label, value, help). While the run runs, its cases without a verdict
    are queued or running, not "not run" (that is what a Cancel or --fail-fast leaves)."""
    s = rr.report["summary"]
    reviewed = sum(1 for r in rr.rows if r.reviewed)
    judged = sum(1 for r in rr.rows if r.status == JUDGED)
    out: list[tuple[str, object, str | None]] = [
        ("Regressed", s["regressions"], None),
        ("Diverged", s["divergences"], None),
        ("Equivalent", s["equivalents"], None),
        ("Errored", len(rr.failed), "Cases started that produced no verdict (they fail the gate)."),
    ]
    if live(rr.run):
        pending = sum(1 for r in rr.rows if r.status == PENDING)
        now = len(running or [])
        out += [
            ("Running", now, "Cases with a model call landed and no verdict yet."),
            ("Queued", pending - now, "Cases this run has not started yet."),
        ]
    else:
        out.append(
            (
                "Not run",
                len(rr.not_run),
                "Cases a Cancel, an interrupt or --fail-fast left unrun: not errors.",
            )
        )
    out += [
        ("Overridden", rr.overridden, None),
        ("Reviewed", f"{reviewed}/{judged}", "Judged cases a reviewer agreed with or overrode."),
    ]
    return out


def headline(rr: RunReport, gate: Mapping[str, Any], running: list[str] | None = None) -> str:
    """The run's figures in one line of Markdown, for the top of the page: the gate (or how far a
    live run is) and each non-zero count."""
    if live(rr.run):
        c = counts(rr)
        state = f":blue[**{rr.run['status']}**] {c['judged']} of {c['total']} judged"
    elif incomplete := rr.incomplete():
        state = f":orange[**{incomplete.split(':')[0]}**]"
    else:
        state = (":green[**✓ PASS**]" if gate["pass"] else ":red[**✗ FAIL**]") + f" ({gate['gate']} gate)"
    parts = [f"{v} {label.lower()}" for label, v, _ in figures(rr, running) if label != "Reviewed" and v]
    reviewed = next(v for label, v, _ in figures(rr, running) if label == "Reviewed")
    return " · ".join([f"Run {rr.run['id']}: {state}", *parts, f"{reviewed} reviewed"])
