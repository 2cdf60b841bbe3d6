"""Exports of a run in the forms people use: the report and the run record (JSON), a Markdown
review report, CSV, JUnit XML.

Every export applies reviewer overrides and says so. `render` is the one entry point: the CLI's
`--out/--record/--markdown/--csv/--junit` and the desk's download buttons both go through it.
"""

from __future__ import annotations

import csv
import io
import json
import re
from xml.etree import ElementTree as ET

from ... import vocab
from ...documents import compression_ratio, size_stats
from ...sets.coverage_report import coverage
from ...untrusted import csv_report_cell, md_escape
from ...vocab import (
    CHECK_FAILED_BOTH,
    CHECK_SKIPPED,
    COMPRESS,
    DIRECTIVE_CLARITY,
    DIVERGED,
    NOT_RUN_STAGE,
    REGRESSED,
)
from ..store.mutations import mutation_line
from ..store.store import Store
from .agreement import trust_lines
from .record import run_record
from .report import RunReport, gate_result
from .sampling import samples_md, verdict_label

# format: (what it is, file name suffix, MIME type); the keys are the CLI's option names
FORMATS: dict[str, tuple[str, str, str]] = {
    "out": ("Report (JSON)", ".json", "application/json"),
    "record": ("Run record (JSON)", ".record.json", "application/json"),
    "markdown": ("Markdown", ".md", "text/markdown"),
    "csv": ("CSV", ".csv", "text/csv"),
    "junit": ("JUnit XML", ".junit.xml", "application/xml"),
}


def render(store: Store, rr: RunReport, fmt: str, gate: str = COMPRESS) -> str:
    """One export of a run, as text: `fmt` is a key of FORMATS."""
    if fmt == "out":
        return json.dumps(rr.with_errors(), indent=2, ensure_ascii=False)
    if fmt == "record":
        return json.dumps(run_record(store, rr, gate), indent=2, ensure_ascii=False)
    if fmt == "markdown":
        return markdown(store, rr, gate)
    if fmt == "csv":
        return to_csv(rr)
    if fmt == "junit":
        return to_junit(rr, gate)
    raise ValueError(f"unknown export format {fmt!r}")


def file_name(rr: RunReport, fmt: str) -> str:
    return f"abeq-run-{rr.run['id']}{FORMATS[fmt][1]}"


CAVEAT = (
    "This conclusion holds only for inputs like the transfer set's cases. Behaviour the cases do not "
    "exercise was not tested."
)


def _docs(store: Store, rr: RunReport):
    run = rr.run
    o, c = store.inputs.document(run["original_hash"]), store.inputs.document(run["candidate_hash"])
    return o, c, store.inputs.transfer_set(run["transfer_set_hash"])


def _md_cell(text) -> str:
    """An untrusted value in the report (a PR comment): literal text on one line, whatever it holds."""
    return md_escape(text, one_line=True)


def markdown(store: Store, rr: RunReport, gate: str = COMPRESS) -> str:
    o, c, ts = _docs(store, rr)
    so, sc = size_stats(o["content"]), size_stats(c["content"])
    g = gate_result(rr, gate)
    s = rr.report["summary"]
    cov = (
        coverage(o["content"], ts, truncated={r.case_id: r.gate_section for r in rr.rows if r.gate_truncated})
        if ts
        else None
    )
    est = "" if so.tokens_exact else " (est.)"
    stop = rr.stopped_early()
    lines = [
        f"# abeq review: {_md_cell(o['name'])} → {_md_cell(c['name'])}",
        "",
        f"**Gate `{gate}`: {'PASS' if g['pass'] else 'FAIL'}** — {s['equivalents']} equivalent, "
        f"{s['divergences']} diverged, {s['regressions']} regressed, {len(rr.failed)} errored"
        + (
            f", {stop['not_run']} not run (--fail-fast stopped after case {stop['after_case']})."
            if stop
            else (f" ({rr.incomplete()})." if rr.incomplete() else ".")
        ),
        "",
    ]
    if rr.overridden:
        lines += [f"Overrides applied: {rr.overridden} case(s) carry a reviewer's verdict.", ""]
    if gate == DIRECTIVE_CLARITY:
        lines += [
            f"Mean directness: original {g['mean_original_directness']}, candidate "
            f"{g['mean_candidate_directness']}.",
            "",
        ]
    lines += [
        "## Size",
        "",
        "| | original | candidate | change |",
        "|---|---|---|---|",
        f"| characters | {so.characters} | {sc.characters} | {sc.characters - so.characters:+d} |",
        f"| tokens{est} | {so.tokens} | {sc.tokens} | {sc.tokens - so.tokens:+d} |",
        f"| lines | {so.lines} | {sc.lines} | {sc.lines - so.lines:+d} |",
        "",
        "Compression ratio (candidate / original characters): "
        f"{compression_ratio(o['content'], c['content'])}",
        "",
    ]
    if ts and cov:
        lines += [
            "## Transfer set",
            "",
            f"{len(ts.cases)} cases; coverage {cov.coverage_pct:.0f}% ({len(cov.sections_covered)} of "
            f"{len(cov.sections_identified)} sections); "
            + ", ".join(f"{k} {v}" for k, v in cov.per_type.items())
            + (" — accepted as a thin set." if rr.run.get("thin_accepted") else "."),
            "",
        ]
        lines += [f"- warning: {_md_cell(w)}" for w in cov.warnings] + ([""] if cov.warnings else [])
        m = store.mutations.latest(rr.run["transfer_set_hash"], rr.run["original_hash"])
        lines += [f"Mutation score of this set: {_md_cell(mutation_line(m))}", ""] if m else []
    lines += ["## Judge", "", *(f"- {_md_cell(x)}" for x in trust_lines(store, rr.run)), ""]
    lines += [
        "## Cases",
        "",
        "| case | verdict | behaviour delta | directness (orig → cand) | overridden |",
        "|---|---|---|---|---|",
    ]
    for r in rr.rows:
        if r.status == vocab.JUDGED:
            ov = (
                f"yes (judge said {r.judge_verdict}: {_md_cell(r.override['reason'])})"
                if r.override
                else "no"
            )
            lines.append(
                f"| {_md_cell(r.case_id)} | {verdict_label(r)} | {_md_cell(r.behaviour_delta)} | "
                f"{r.original_directness} → {r.candidate_directness} | {ov} |"
            )
        else:
            what = "not run" if r.status != vocab.CASE_ERROR else f"**error** ({r.error_stage})"
            lines.append(f"| {_md_cell(r.case_id)} | {what} | {_md_cell(r.error or '')} | | |")
    lines += _checks_md(rr) + samples_md(rr.rows, _md_cell)
    trunc = [r.case_id for r in rr.rows if r.gate_truncated]
    if trunc:
        lines += [
            "",
            "## Gate-truncated cases",
            "",
            "These stopped at an interactive gate with no scripted answer and were judged only up to it: "
            + ", ".join(_md_cell(t) for t in trunc)
            + ".",
        ]
    lines += ["", "## Caveat", "", CAVEAT, ""]
    return "\n".join(lines)


def _mark(passed: bool | None) -> str:
    return "—" if passed is None else ("✓" if passed else "✗")


def _checks_md(rr: RunReport) -> list[str]:
    """Every check on both arms; a check the teacher passes and the candidate fails made the case
    regressed, one both fail changed nothing."""
    rows = [r for r in rr.rows if r.checks]
    if not rows:
        return []
    out = [
        "",
        "## Checks",
        "",
        "A check the original passes and the candidate fails makes the case regressed, whatever the judge "
        "said; one both fail is a property of the task and changes nothing.",
        "",
        "| case | check | teacher | candidate | outcome | evidence (teacher / candidate) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        for c in r.checks:
            ev = c.reason if c.outcome == CHECK_SKIPPED else f"{c.teacher_evidence} / {c.candidate_evidence}"
            out.append(
                f"| {_md_cell(r.case_id)} | {_md_cell(c.label)} | {_mark(c.teacher)} | "
                f"{_mark(c.candidate)} | {c.outcome} | {_md_cell(ev[:300])} |"
            )
    return out


CSV_FIELDS = [
    "case_id",
    "status",
    "verdict",
    "judge_verdict",
    "overridden",
    "override_reason",
    "reviewed",
    "reviewer",
    "behaviour_delta",
    "judge_behaviour_delta",
    "original_directness",
    "candidate_directness",
    "agreement",
    "uncertain",
    "aa_verdict",
    "gate_truncated",
    "calls_made",
    "calls_cached",
    "tokens",
    "cost",
    "cost_unpriced_calls",
    "error",
    "checks",
    "checks_lost",
    "checks_failed_both",
    "checks_skipped",
    "checks_disagree_with_judge",
    "checks_detail",
]


def to_csv(rr: RunReport) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
    w.writeheader()
    for r in rr.rows:
        w.writerow(_safe_row(_csv_row(r)))
    return buf.getvalue()


def _safe_row(row: dict) -> dict:
    # every cell: ids, reasons, reviewer names and judge text can start with = + - @ (issue 27)
    return {k: csv_report_cell(v) for k, v in row.items()}


def _csv_row(r) -> dict:
    return {
        "case_id": r.case_id,
        "status": r.status,
        "verdict": r.verdict,
        "judge_verdict": r.judge_verdict,
        "overridden": bool(r.override),
        "override_reason": r.override["reason"] if r.override else "",
        "reviewed": r.review.get("action", "override") if r.review else "",
        "reviewer": r.review["reviewer"] if r.review else "",
        "behaviour_delta": r.behaviour_delta,  # effective: a reviewer's reason if overridden
        "judge_behaviour_delta": r.judge_delta,  # what the judge said, whatever the review
        "original_directness": r.original_directness,
        "candidate_directness": r.candidate_directness,
        "agreement": r.agreement,
        "uncertain": r.uncertain,
        "aa_verdict": r.aa_verdict,
        "gate_truncated": r.gate_truncated,
        "calls_made": r.calls_made,
        "calls_cached": r.calls_cached,
        "tokens": r.tokens,
        "cost": "" if r.known_cost is None else f"{r.known_cost:.6f}",
        "cost_unpriced_calls": r.unpriced_calls,
        "error": r.error or "",
        "checks": len(r.checks),
        "checks_lost": "; ".join(c.label for c in r.checks_lost),
        "checks_failed_both": "; ".join(c.label for c in r.checks if c.outcome == CHECK_FAILED_BOTH),
        "checks_skipped": "; ".join(c.label for c in r.checks if c.outcome == CHECK_SKIPPED),
        "checks_disagree_with_judge": r.checks_disagree,
        "checks_detail": json.dumps(
            [{"check": c.label, "teacher": c.teacher, "candidate": c.candidate} for c in r.checks],
            ensure_ascii=False,
        )
        if r.checks
        else "",
    }


def gate_reason(rr: RunReport, g: dict) -> str:
    """Why a gate failed, in one line (empty when it passed)."""
    if g["pass"]:
        return ""
    parts = [
        f"{n} case(s) {what}"
        for n, what in (
            (g["regressions"], "regressed"),
            (g["errors"], "errored"),
            (g.get("not_run", 0), "not run (--fail-fast stopped early)"),
        )
        if n
    ]
    if g["gate"] == DIRECTIVE_CLARITY and not g["mean_candidate_directness"] > g["mean_original_directness"]:
        parts.append(
            f"mean directness did not rise: original {g['mean_original_directness']} → candidate "
            f"{g['mean_candidate_directness']}"
        )
    return f"gate {g['gate']} failed: " + "; ".join(parts or ["its condition was not met"])


def _overruled(r) -> bool:
    """A reviewer's verdict other than regressed overrides what the checks found."""
    return bool(r.override) and r.verdict != REGRESSED


def _check_properties(tc: ET.Element, r) -> None:
    """A case's checks as properties of its testcase (one each: outcome on both arms, and why), so
    `tests` counts cases: a lost check already makes its case regressed (a failure), unless a
    reviewer overrode the case; a skipped check says why; one failed on both arms is a property of
    the task, not a regression."""
    props = ET.SubElement(tc, "properties")
    for c in r.checks:
        both = f"teacher {_mark(c.teacher)}, candidate {_mark(c.candidate)}"
        if c.outcome == CHECK_SKIPPED:
            said = f"skipped: {c.reason}"
        elif c.lost and _overruled(r):
            why = r.override["reason"]
            said = f"lost on the candidate ({both}), but a reviewer overrode the case: {why}"
        elif c.lost:
            said = (
                f"lost on the candidate ({both}); teacher: {c.teacher_evidence}; "
                f"candidate: {c.candidate_evidence}"
            )
        elif c.outcome == CHECK_FAILED_BOTH:
            said = f"fails on both arms ({both}): a property of the task, not a regression"
        else:
            said = f"{c.outcome} ({both})"
        ET.SubElement(props, "property", name=f"check: {c.label}", value=said[:1000])


_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def to_junit(rr: RunReport, gate: str = COMPRESS) -> str:
    """One testcase per case: regressed cases fail, errored cases are errors, cases not run are
    skipped; overrides applied. A case's checks are properties of its testcase (a lost check makes
    the case regressed), so `tests` is the number of cases.

    A gate with a condition beyond "no case regressed" (directive-clarity) gets a testcase of its
    own, so a CI reading only the XML sees the same PASS/FAIL as the exit code.
    """
    g = gate_result(rr, gate)
    gate_case = gate != COMPRESS  # compress passes exactly when no case fails or errors
    gate_failed = gate_case and not g["pass"]
    suite = ET.Element(
        "testsuite",
        name=f"abeq run {rr.run['id']}",
        tests=str(len(rr.rows) + gate_case),
        failures=str(rr.report["summary"]["regressions"] + gate_failed),
        errors=str(len(rr.failed)),
        skipped=str(len(rr.not_run)),
    )
    props = ET.SubElement(suite, "properties")
    for k, v in (
        ("gate", gate),
        ("overrides_applied", rr.overridden),
        ("runner_model", rr.run["runner_model"]),
        ("judge_model", rr.run["judge_model"]),
    ):
        ET.SubElement(props, "property", name=k, value=str(v))
    for r in rr.rows:
        tc = ET.SubElement(suite, "testcase", classname="abeq.equivalence", name=r.case_id)
        if r.checks:
            _check_properties(tc, r)
        if r.error_stage == NOT_RUN_STAGE or r.status == vocab.PENDING:  # not run: never an error
            ET.SubElement(tc, "skipped", message=(r.error or "not run (cancelled or interrupted run)")[:200])
        elif r.status != vocab.JUDGED:
            ET.SubElement(
                tc,
                "error",
                message=f"{r.error_stage or 'not run'}: {(r.error or 'never judged')[:200]}",
                type="incomplete",
            ).text = r.error or ""
        elif r.verdict == REGRESSED:
            note = f" (override; the judge said {r.judge_verdict})" if r.override else ""
            ET.SubElement(
                tc,
                "failure",
                message=(r.behaviour_delta or "regressed")[:200] + note,
                type=REGRESSED,
            ).text = r.behaviour_delta
        elif r.verdict == DIVERGED or r.override:  # an override's reason shows on every verdict
            ET.SubElement(tc, "system-out").text = f"{r.verdict}: {r.behaviour_delta}"
        if r.gate_truncated:
            ET.SubElement(
                tc, "system-err"
            ).text = f"gate-truncated at {r.gate_section or 'a gate'}: judged only up to the unanswered gate"
    if gate_case:
        tc = ET.SubElement(suite, "testcase", classname="abeq.gate", name=f"gate {gate}")
        if gate_failed:
            reason = gate_reason(rr, g)
            ET.SubElement(tc, "failure", message=reason[:200], type="gate-failed").text = reason
    # characters XML 1.0 cannot hold (terminal colour codes, form feeds in a pasted reason) are dropped
    return _XML_INVALID.sub("", ET.tostring(suite, encoding="unicode", xml_declaration=True))
