"""The gate's Markdown: one line per document, then each regression and divergence folded per case.

The same text is the pull-request comment, the job summary and `abeq gate --markdown`. Every piece
of untrusted text (case ids, the judge's words, reviewers' names and reasons, paths) goes through
abeq.untrusted.md_escape; the body stays under GitHub's 65,536-character limit, cut with a note.
"""

from __future__ import annotations

from ..untrusted import md_escape
from ..vocab import DIVERGED, EQUIVALENT, JUDGED, REGRESSED
from .changes import CHANGED, NEW, REMOVED
from .run import GateResult, Outcome

MARKER = "<!-- abeq-gate: one comment per pull request, updated in place -->"
LIMIT = 65_536
_ROOM = 400  # kept for the truncation note


def _pct(part: float, whole: float) -> str:
    return f"{round(100 * part / whole)}%" if whole else "n/a"


def headline(o: Outcome, store, *, markdown: bool = True) -> str:
    """One line: PASS/FAIL, tokens saved, the verdict counts, the noise floor and calibration
    (`markdown` False: plain text for a terminal, which abeq's CLI makes safe itself)."""
    from ..results.reports.agreement import aa_rates, judge_calibration

    def esc(text: str) -> str:
        return md_escape(text, True) if markdown else text

    def strong(word: str) -> str:
        return f"**{word}**" if markdown else word

    t = o.target
    if t.not_judged:
        said = [f"{strong('INCOMPLETE')} {esc(t.path)}", f"not judged: {esc(t.not_judged)}"]
        return " · ".join([*said, *what_changed(t, esc)])
    if t.state == REMOVED:
        return (
            f"{strong('FAIL')} {esc(t.path)} · removed by this pull request while the base's abeq.toml "
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
        strong(word) + f" {esc(t.path)}" + (f" (renamed from {esc(t.base_path)})" if t.base_path else ""),
        *what_changed(t, esc),
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
            parts.append(esc(cal["line"]))
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
    return f"  - changed files: {md_escape(', '.join(t.changed_files), True)}\n"


def _decided_block(d: dict) -> str:
    """A case a reviewer decided before this run (no model was called for it)."""
    who = md_escape(d.get("reviewer") or "someone", True)
    verdict = md_escape(d.get("verdict"), True)
    if d.get("action") == "agree":
        said = f"accepted by {who} ({verdict})"
    else:
        said = f"overridden by {who}: {md_escape(d.get('reason') or '', True)} (now {verdict})"
    return f"- case {md_escape(d['case_id'], True)}: {said}; not run again\n"


def _case_block(row, index: int) -> str:
    """One regression or divergence, folded: what was lost or differs, checks lost, any override."""
    kind = "regressed" if row.machine_verdict == REGRESSED or row.verdict == REGRESSED else "diverged"
    body = [
        f"Case {md_escape(row.case_id, True)} ({kind}, judged {md_escape(row.judge_verdict or '', True)})"
    ]
    if row.behaviour_delta:
        said = "Lost behaviour" if kind == "regressed" else "Difference"
        body.append(f"{said}: {md_escape(row.behaviour_delta, True)}")
    if row.checks_lost:
        body.append(
            "Checks the candidate lost: " + md_escape("; ".join(c.label for c in row.checks_lost), True)
        )
    if row.override:
        who = md_escape(row.override.get("reviewer") or "someone", True)
        why = md_escape(row.override.get("reason") or "", True)
        body.append(f"overridden by {who}: {why} (now {md_escape(row.override.get('verdict'), True)})")
    summary = f"{'❌' if kind == 'regressed' and not row.override else '⚠️'} {kind}: case {index}"
    return f"<details><summary>{summary}</summary>\n\n" + "\n\n".join(body) + "\n\n</details>\n"


def render(result: GateResult, store, *, note: str = "", limit: int | None = LIMIT) -> str:
    """The whole gate as Markdown, within GitHub's comment limit (`limit` None: all of it)."""
    rev = f"base {result.revisions.base[:12]} → head {result.revisions.head[:12]}"
    gated = list(result.outcomes)
    word = "passed" if result.exit_code == 0 else "failed" if result.exit_code == 1 else "is incomplete"
    lines = [MARKER, f"### abeq gate {word} ({rev})", ""]
    if note:
        lines += [md_escape(note), ""]
    head = "\n".join(lines) + "\n"
    blocks = [f"- {headline(o, store)}\n" + _changed_files(o.target) for o in gated]
    judged = {id(o.target) for o in gated}
    for t in result.targets:
        if t.state == NEW:
            blocks.append(
                f"- {md_escape(t.path, True)}: new in this pull request, not gated (no base version)\n"
            )
        elif t.state == REMOVED and id(t) not in judged:
            blocks.append(f"- {md_escape(t.path, True)}: removed by this pull request, not gated\n")
    unchanged = sum(t.state not in (CHANGED, NEW, REMOVED) for t in result.targets)
    if unchanged:
        blocks.append(f"- {unchanged} other configured document(s) unchanged\n")
    for o in gated:
        if o.decided:
            blocks.append(f"\n#### {md_escape(o.target.path, True)}: reviewers' decisions\n\n")
            blocks += [_decided_block(d) for d in o.decided]
        if o.report is None:
            continue
        rows = [r for r in o.report.rows if r.status == JUDGED]
        shown = [
            (i, r) for i, r in enumerate(rows, 1) if (r.machine_verdict or r.verdict) in (REGRESSED, DIVERGED)
        ]
        if shown:
            blocks.append(f"\n#### {md_escape(o.target.path, True)}\n\n")
            blocks += [_case_block(r, i) for i, r in shown]
        errored = o.report.failed
        if errored:
            blocks.append(
                "\nErrored: "
                + md_escape(
                    "; ".join(f"{e['case_id']} ({e['stage']}): {e['error'][:200]}" for e in errored), True
                )
                + "\n"
            )
    body, left = head, 0
    for i, b in enumerate(blocks):
        if limit is not None and len(body) + len(b) > limit - _ROOM:
            left = len(blocks) - i
            break
        body += b
    if left:
        body += (
            f"\n_{left} more part(s) of this report are not shown: a comment holds at most {limit:,} "
            "characters. The whole report: `abeq gate --markdown`, or the run's store (`abeq app --db`)._\n"
        )
    return body


def fork_note() -> str:
    return (
        MARKER + "\n### abeq gate did not run\n\nThis pull request comes from a fork: GitHub gives its "
        "workflow no secrets, so no model can be called. A maintainer can run `abeq gate` on a branch "
        "of this repository instead.\n"
    )


def refusal(message: str) -> str:
    """The comment for a gate refused before any model call: what is wrong and who does what."""
    return f"{MARKER}\n### abeq gate could not run (exit 2)\n\n{md_escape(message)}\n"
