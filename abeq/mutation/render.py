"""A mutation report as text: the CLI's table and the Markdown report."""

from __future__ import annotations

import re

from ..untrusted import md_escape
from .report import BLIND, KILLED, READINGS, SURVIVED

WHAT_TO_DO = {
    KILLED: "keep: the set notices its loss",
    BLIND: "add a case that needs it",
    "unnoticed": "a candidate to cut (or a case that does not use it, or a judge that misses it)",
}


def state(m: dict) -> str:
    """killed, killed (within noise), survived: blind, survived: claimed but unnoticed, incomplete."""
    if m["status"] == KILLED:
        return KILLED + (" (within noise)" if m.get("within_noise") else "")
    if m["status"] == SURVIVED:
        return f"{SURVIVED}: {m['reading']}"
    return m["status"]


def headline(rep: dict) -> str:
    calls = rep["calls"]
    return (
        f"mutation score {rep['score']:.0%}: {rep['killed']} of {rep['count']} mutants killed, "
        f"{rep['survived']} survived"
        + (f", {rep['incomplete']} incomplete" if rep["incomplete"] else "")
        + (f" ({rep['killed_within_noise']} killed within A/A noise)" if rep["killed_within_noise"] else "")
        + f" · {calls['made']} calls made ({calls['teacher_made']} teacher), {calls['cached']} from cache"
        + f" · {calls['tokens']} tokens"
    )


def table(rep: dict) -> str:
    """One line per mutant: its section, state, the cases that killed it and those that claim it."""
    rows = [("section", "operator", "state", "killed by", "claimed by")]
    for m in rep["mutants"]:
        where = f"{m['section']} ({m['file']})" if m.get("file") else m["section"]
        rows.append(
            (where, m["operator"], state(m), ", ".join(m["killed_by"]) or "-", ", ".join(m["claimed_by"]))
        )
    widths = [min(40, max(len(r[i]) for r in rows)) for i in range(4)]
    cut = [[c[:w].ljust(w) for c, w in zip(r, widths, strict=False)] + [r[4] or "-"] for r in rows]
    return "\n".join("  ".join(r) for r in cut)


def _cell(text: str) -> str:
    """Text from the document, the set or a model, on one line of Markdown: literal (the one escaper)."""
    return md_escape(" ".join(str(text).split()), one_line=True)


def markdown(rep: dict) -> str:
    """The report for a person: the score, a table of mutants, then each mutant's evidence."""
    out = [
        f"# Would this set notice a loss? {_cell(rep['original'])}",
        "",
        f"**{headline(rep)}**",
        "",
        f"Runner `{rep['runner_model']}`, judge `{rep['judge_model']}`. A mutant is the original with one "
        "section deleted; it is killed when a case is judged regressed on it (or loses a check the "
        "original passes). Killed: keep the section. Survived and claimed: a candidate to cut, unless "
        "the case does not make the model use it or the judge missed it (read the transcripts).",
        "",
        "| Section | Operator | State | Killed by | Claimed by |",
        "|---|---|---|---|---|",
    ]
    for m in rep["mutants"]:
        out.append(
            f"| {_cell(m['section'])} | {m['operator']} | {state(m)} | "
            f"{_cell(', '.join(m['killed_by']) or '-')} | {_cell(', '.join(m['claimed_by']) or '-')} |"
        )
    for m in rep["mutants"]:
        out += ["", f"## {_cell(m['section'])}: {state(m)}", ""]
        if m["status"] == SURVIVED:
            out += [READINGS[m["reading"]] + ".", ""]
        for e in m.get("evidence", []):
            if "delta" in e:
                lost = f" Checks lost: {_cell(', '.join(e['checks_lost']))}." if e["checks_lost"] else ""
                out.append(f"- **{_cell(e['case_id'])}**: {_cell(e['delta']) or '(no delta given)'}{lost}")
            else:
                out += [
                    f"### {_cell(e['case_id'])} ({e['verdict']})",
                    "",
                    "Original:",
                    "",
                    _fence(e["teacher"]),
                    "",
                    "Without this section:",
                    "",
                    _fence(e["mutant"]),
                    "",
                ]
        for err in m.get("errors", []):
            out.append(f"- error: {_cell(err)}")
    return "\n".join(out) + "\n"


def _fence(text: str) -> str:
    """A code block no run of backticks inside the text can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}text\n{text}\n{ticks}"
