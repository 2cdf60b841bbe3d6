"""The gate's Markdown: one line per document, then each regression and divergence folded per case.

The same text is the pull-request comment, the job summary and `abeq gate --markdown`. Every value
abeq did not write itself (case ids, the judge's words, reviewers' names and reasons, paths, model
names) goes through one escaper, `esc` (abeq.untrusted.github_escape: Markdown, mentions, issue
references, bidirectional controls); the body stays under GitHub's 65,536-character limit, cut with
a note. It names what a reviewer needs to act: each run's id and models, where the store is, and
the commands that open it or record a decision.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from ..untrusted import github_escape as esc
from ..vocab import DIVERGED, EQUIVALENT, JUDGED, REGRESSED
from .changes import CHANGED, NEW, REMOVED
from .run import GateResult, Outcome

MARKER = "<!-- abeq-gate: one comment per pull request, updated in place -->"
LIMIT = 65_536
_ROOM = 400  # kept for the truncation note


def _pct(part: float, whole: float) -> str:
    return f"{round(100 * part / whole)}%" if whole else "n/a"


@dataclass
class Pointers:
    """Where a reviewer finds the gate's runs and records a decision, for the comment's last part."""

    db: str = "abeq-gate.db"  # the store's file name, as the reviewer will have it
    artifact: str = ""  # the CI artifact that holds the store ("": none uploaded)
    run_url: str = ""  # the CI run's page, which lists its artifacts
    decisions: str = ""  # the decisions file the base's abeq.toml names (overrides =)
    base: str = ""  # the branch the pull request merges into, as given to --base


def headline(o: Outcome, store, *, markdown: bool = True) -> str:
    """One line: PASS/FAIL, tokens saved, the verdict counts, the noise floor and calibration
    (`markdown` False: plain text for a terminal, which abeq's CLI makes safe itself)."""
    from ..results.reports.agreement import aa_rates, judge_calibration

    def say(text: str) -> str:
        return esc(text) if markdown else text

    def strong(word: str) -> str:
        return f"**{word}**" if markdown else word

    t = o.target
    if t.not_judged:
        said = [f"{strong('INCOMPLETE')} {say(t.path)}", f"not judged: {say(t.not_judged)}"]
        return " · ".join([*said, *what_changed(t, say)])
    if t.state == REMOVED:
        return (
            f"{strong('FAIL')} {say(t.path)} · removed by this pull request while the base's abeq.toml "
            "lists it: its cases would no longer be checked (drop it from abeq.toml on the base branch "
            "first)"
        )
    n = o.counts()
    (oc, cc), (ot, ct) = o.sizes, o.tokens
    saved = ot - ct
    tokens = (
        f"tokens saved −{_pct(saved, ot)} ({ot:,} → {ct:,})"
        if saved >= 0
        else f"tokens +{_pct(-saved, ot)} ({ot:,} → {ct:,})"
    )
    ratio = round(cc / oc, 2) if oc else 0
    word = "PASS" if o.exit == 0 else "FAIL" if o.exit == 1 else "INCOMPLETE"
    parts = [
        strong(word) + f" {say(t.path)}" + (f" (renamed from {say(t.base_path)})" if t.base_path else ""),
        *what_changed(t, say),
        f"{tokens}, size ratio {ratio}",
        f"{n[EQUIVALENT]} equivalent, {n['diverged']} diverged, {n['regressed']} regressed, "
        f"{n['errored']} errored",
    ]
    if o.report is not None:
        aa = aa_rates(store, o.run_id)
        if aa:
            parts.append(f"A/A noise floor {aa[0]['false_regression_rate']:.0%} of {aa[0]['cases']} cases")
        cal = judge_calibration(store, o.report.run["judge_model"])
        if cal.get("calibrated"):
            parts.append(say(cal["line"]))
    reviewed = len(o.decided) + (o.report.overridden if o.report is not None else 0)
    if reviewed:
        parts.append(f"{reviewed} decided by a reviewer")
    return " · ".join(parts)


def what_changed(t, esc) -> list[str]:
    """What the pull request changed beside the document's text, for its headline: the cases of its
    set (by id) and the files the candidate drops or renames."""
    out = []
    sc = t.set_changes
    if any(sc.values()):
        said = []
        if sc.get("removed"):
            said.append(f"removed {', '.join(sc['removed'])} (still run as the base has them)")
        if sc.get("changed"):
            said.append(f"changed {', '.join(sc['changed'])} (run as the base has them)")
        if sc.get("added"):
            said.append(f"added {', '.join(sc['added'])}")
        out.append(esc("this pull request changed the set: " + "; ".join(said)))
    if t.dropped or t.renamed:
        said = []
        if t.dropped:
            said.append(f"drops {', '.join(t.dropped)}")
        if t.renamed:
            said.append(f"renames {', '.join(f'{a} → {b}' for a, b in t.renamed)}")
        out.append(esc("the candidate " + " and ".join(said)))
    return out


def _changed_files(t) -> str:
    """The changed files of a document, under its headline."""
    if not t.changed_files:
        return ""
    return f"  - changed files: {esc(', '.join(t.changed_files))}\n"


def _decided_block(d: dict) -> str:
    """A case a reviewer decided before this run (no model was called for it)."""
    who = esc(d.get("reviewer") or "someone")
    verdict = esc(d.get("verdict"))
    if d.get("action") == "agree":
        said = f"accepted by {who} ({verdict})"
    else:
        said = f"overridden by {who}: {esc(d.get('reason') or '')} (now {verdict})"
    return f"- case {esc(d['case_id'])}: {said}; not run again\n"


def _case_block(row) -> str:
    """One regression or divergence, folded: what was lost or differs, checks lost, any override."""
    kind = "regressed" if row.machine_verdict == REGRESSED or row.verdict == REGRESSED else "diverged"
    body = [f"Case {esc(row.case_id)} ({kind}, judged {esc(row.judge_verdict or '')})"]
    if row.behaviour_delta:
        said = "Lost behaviour" if kind == "regressed" else "Difference"
        body.append(f"{said}: {esc(row.behaviour_delta)}")
    if row.checks_lost:
        body.append("Checks the candidate lost: " + esc("; ".join(c.label for c in row.checks_lost)))
    if row.override:
        who = esc(row.override.get("reviewer") or "someone")
        why = esc(row.override.get("reason") or "")
        body.append(f"overridden by {who}: {why} (now {esc(row.override.get('verdict'))})")
    mark = "❌" if kind == "regressed" and not row.override else "⚠️"
    summary = f"{mark} {kind}: case {esc(row.case_id)}"
    return f"<details><summary>{summary}</summary>\n\n" + "\n\n".join(body) + "\n\n</details>\n"


# what a value may hold to be shown inside a command in a code block (where nothing is escaped): no
# backtick or line break that could end the block, no control that reorders the line
_PLAIN = re.compile(r"[\w@%+=:,./'\"*?& -]+")


def _sh(value: str, placeholder: str) -> str:
    """A value for a command the comment shows: shell-quoted, or `placeholder` when it is not plain."""
    q = shlex.quote(value)
    return q if _PLAIN.fullmatch(q) else placeholder


def _runs_line(o: Outcome) -> str:
    """The run's id and its models, under a document's headline."""
    if o.report is None:
        return "  no run: reviewers decided every case\n" if o.decided else ""
    run = o.report.run
    return (
        f"  run {o.run_id} · runner {esc(run.get('runner_model') or '?')} · "
        f"judge {esc(run.get('judge_model') or '?')}\n"
    )


def next_step(result: GateResult, where: Pointers) -> str:
    """Where the runs are and the commands that open them or record a reviewer's decision."""
    runs = [o for o in result.outcomes if o.report is not None]
    if not runs:
        return ""
    db = _sh(where.db or "abeq-gate.db", "abeq-gate.db")
    if where.artifact:
        run = (
            f"[this workflow run]({where.run_url})" if _URL.fullmatch(where.run_url) else "this workflow run"
        )
        kept = f"in the artifact {esc(where.artifact)} of {run} (download it: the store {esc(db)} is inside)"
    else:
        kept = f"in the store {esc(db)}"
    first = runs[0]
    wrong = next(
        (r for o in runs for r in o.report.rows if (r.machine_verdict or r.verdict) in (REGRESSED, DIVERGED)),
        None,
    )
    run_id = next((o.run_id for o in runs if wrong is not None and wrong in o.report.rows), first.run_id)
    case = _sh(wrong.case_id, "CASE") if wrong is not None else "CASE"
    base = where.base.removeprefix("origin/") if where.base else "the base branch"
    decisions = where.decisions or "abeq-decisions.json"
    lines = [
        "",
        "#### Next step",
        "",
        f"The runs are {kept}. Each document's runs are a review named after its path:",
        "",
        "```sh",
        f"abeq app --db {db}    # Review and History pages",
        f"abeq history {_sh(first.target.path, 'PATH')} --db {db}",
        "```",
        "",
        f"A verdict a reviewer judges wrong is recorded in the store, then kept in the decisions file on "
        f"{esc(base)}: the gate reads decisions as the base has them, never as the pull request does.",
        "",
        "```sh",
        f"abeq override {run_id} {case} --verdict equivalent --reason 'why' --reviewer NAME --db {db}",
        f"abeq export --overrides {_sh(decisions, 'FILE')} --db {db}    # in a checkout of the base: "
        "adds to the file, commit it there",
        "```",
    ]
    if not where.decisions:
        lines += ["", f'(abeq.toml names no decisions file yet: add `overrides = "{decisions}"` at its top.)']
    return "\n".join(lines) + "\n"


_URL = re.compile(r"https?://[\w.:-]+/[\w./%-]*")


def render(
    result: GateResult,
    store,
    *,
    note: str = "",
    limit: int | None = LIMIT,
    where: Pointers | None = None,
) -> str:
    """The whole gate as Markdown, within GitHub's comment limit (`limit` None: all of it); `where`:
    the store and decisions file the last part points a reviewer to."""
    rev = f"base {result.revisions.base[:12]} → head {result.revisions.head[:12]}"
    gated = list(result.outcomes)
    word = "passed" if result.exit_code == 0 else "failed" if result.exit_code == 1 else "is incomplete"
    lines = [MARKER, f"### abeq gate {word} ({rev})", ""]
    if note:
        lines += [esc(note, False), ""]
    head = "\n".join(lines) + "\n"
    blocks = [f"- {headline(o, store)}\n" + _runs_line(o) + _changed_files(o.target) for o in gated]
    judged = {id(o.target) for o in gated}
    for t in result.targets:
        if t.state == NEW:
            blocks.append(f"- {esc(t.path)}: new in this pull request, not gated (no base version)\n")
        elif t.state == REMOVED and id(t) not in judged:
            blocks.append(f"- {esc(t.path)}: removed by this pull request, not gated\n")
    unchanged = sum(t.state not in (CHANGED, NEW, REMOVED) for t in result.targets)
    if unchanged:
        blocks.append(f"- {unchanged} other configured document(s) unchanged\n")
    for o in gated:
        if o.decided:
            blocks.append(f"\n#### {esc(o.target.path)}: reviewers' decisions\n\n")
            blocks += [_decided_block(d) for d in o.decided]
        if o.report is None:
            continue
        rows = [r for r in o.report.rows if r.status == JUDGED]
        shown = [
            (i, r) for i, r in enumerate(rows, 1) if (r.machine_verdict or r.verdict) in (REGRESSED, DIVERGED)
        ]
        if shown:
            blocks.append(f"\n#### {esc(o.target.path)}\n\n")
            blocks += [_case_block(r) for _, r in shown]
        errored = o.report.failed
        if errored:
            blocks.append(
                "\nErrored: "
                + esc("; ".join(f"{e['case_id']} ({e['stage']}): {e['error'][:200]}" for e in errored), True)
                + "\n"
            )
    foot = next_step(result, where or Pointers())
    body, left = head, 0
    for i, b in enumerate(blocks):
        if limit is not None and len(body) + len(b) > limit - _ROOM - len(foot):
            left = len(blocks) - i
            break
        body += b
    if left:
        body += (
            f"\n_{left} more part(s) of this report are not shown: a comment holds at most {limit:,} "
            "characters. The whole report: `abeq gate --markdown`, or the run's store (`abeq app --db`)._\n"
        )
    return body + foot


def fork_note(fails: bool = False) -> str:
    """The job summary of a fork's pull request: it was not checked, said plainly."""
    then = (
        "The gate fails it (`--fail-on-fork`) until a maintainer gates it."
        if fails
        else "The gate exits 0 all the same: a required check passes with nothing checked unless the "
        "workflow sets `fail_on_fork: true`."
    )
    return (
        f"{MARKER}\n### abeq gate did not check this pull request\n\nIt comes from a fork: GitHub gives "
        "a fork's workflow no secrets, so no model can be called and **nothing was checked**. "
        f"{then} A maintainer can push its branch to this repository to gate it.\n"
    )


def refusal(message: str) -> str:
    """The comment for a gate refused before any model call: what is wrong and who does what."""
    return f"{MARKER}\n### abeq gate could not run (exit 2)\n\n{esc(message, False)}\n"
