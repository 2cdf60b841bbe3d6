"""A mutation report as text: the CLI's table and the Markdown report."""

from __future__ import annotations

import re

from ..untrusted import md_escape
from .report import BLIND, BY_JUDGE, KILLED, READINGS, SURVIVED, UNMAPPED

WHAT_TO_DO = {
    KILLED: "keep: the set notices its loss",
    BLIND: "add a case that needs it",
    UNMAPPED: "map the cases to sections (exercises_sections) first",
    "unnoticed": "a candidate to cut (or a case that does not use it, or a judge that misses it)",
}


def state(m: dict) -> str:
    """killed by the judge / by checks alone (within noise), survived: blind / unmapped / claimed but
    unnoticed, unconfirmed, incomplete."""
    if m["status"] == KILLED:
        judged = m.get("killed_by_judge")
        by = "" if judged is None else (" by the judge" if judged else " by checks alone")
        return KILLED + by + (" (within noise)" if m.get("within_noise") else "")
    if m["status"] == SURVIVED:
        return f"{SURVIVED}: {m['reading']}"
    return m["status"]


def caveat(rep: dict) -> str:
    """The models' caveat in a sentence ("" when a capable model made the calls)."""
    said = rep.get("model_caveats") or []
    if not said:
        return ""
    return "Not a trust figure: " + "; ".join(said) + "."


def headline(rep: dict) -> str:
    calls = rep["calls"]
    judge = rep.get("killed_by_judge")
    return (
        f"mutation score {rep['score']:.0%}"
        + ("" if rep.get("trust_figure", True) else " (test double or embedded model: not a trust figure)")
        + f": {rep['killed']} of {rep['count']} mutants killed"
        + ("" if judge is None else f" ({judge} by the judge, {rep['killed'] - judge} by checks alone)")
        + f", {rep['survived']} survived"
        + (f" ({rep['unmapped']} unmapped)" if rep.get("unmapped") else "")
        + (f", {rep['unconfirmed']} unconfirmed" if rep.get("unconfirmed") else "")
        + (f", {rep['incomplete']} incomplete" if rep["incomplete"] else "")
        + (f" ({rep['killed_within_noise']} killed within A/A noise)" if rep["killed_within_noise"] else "")
        + f" · {calls['made']} calls made ({calls['teacher_made']} teacher), {calls['cached']} from cache"
        + f" · {calls['tokens']} tokens"
    )


def kind(m: dict) -> str:
    """The mutant's kind, section or model (a report older than model mutants holds only sections)."""
    return m.get("kind", "section")


def removed(m: dict) -> str:
    """What the mutant removed, in a line: the whole section, or the behaviour a model names."""
    return m.get("removed_behaviour") or "the whole section"


def written_lines(rep: dict) -> list[str]:
    """What --model-mutants asked and what came of it, each discarded mutant with its reason."""
    w = rep.get("model_mutants")
    if not w:
        return []
    out = [
        f"model mutants: asked {w['model']} ({w['prompt']}) for {w['asked']}; it wrote {w['written']}, "
        f"{w['kept']} kept" + (" (its reply read from the cache)" if w["cached"] else "")
    ]
    out += [
        f"discarded model mutant {d['index']} ({d['removed_behaviour']}): {d['reason']}"
        for d in w["discarded"]
    ]
    return out


def table(rep: dict) -> str:
    """One line per mutant: its section, kind, state, the cases that killed it and those that claim it
    (a model's mutant: the behaviour it removed, after its section)."""
    rows = [("section", "kind", "state", "killed by", "claimed by")]
    for m in rep["mutants"]:
        where = f"{m['section']} ({m['file']})" if m.get("file") else m["section"]
        if kind(m) == "model":
            where += f": {m.get('removed_behaviour', '')}"
        rows.append((where, kind(m), state(m), ", ".join(m["killed_by"]) or "-", ", ".join(m["claimed_by"])))
    widths = [min(40, max(len(r[i]) for r in rows)) for i in range(4)]
    cut = [[c[:w].ljust(w) for c, w in zip(r, widths, strict=False)] + [r[4] or "-"] for r in rows]
    tail = [caveat(rep)] if caveat(rep) else []
    return "\n".join(["  ".join(r) for r in cut] + written_lines(rep) + tail)


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
        *([f"> **{_cell(caveat(rep))}**", ""] if caveat(rep) else []),
        f"Runner `{rep['runner_model']}`, judge `{rep['judge_model']}`. A mutant is the original with one "
        "section deleted (kind `section`) or, written by a model, one behaviour weakened or removed "
        "(kind `model`); it is killed when a case is judged regressed on it (or loses a check the "
        "original passes). Killed: keep the text. Survived and claimed: a candidate to cut, unless "
        "the case does not make the model use it or the judge missed it (read the transcripts).",
        "",
        *[x for line in written_lines(rep) for x in (f"- {_cell(line)}", "")],
        "| Section | Kind | Removed | State | Killed by | Claimed by |",
        "|---|---|---|---|---|---|",
    ]
    for m in rep["mutants"]:
        out.append(
            f"| {_cell(m['section'])} | {kind(m)} | {_cell(removed(m))} | {state(m)} | "
            f"{_cell(', '.join(m['killed_by']) or '-')} | {_cell(', '.join(m['claimed_by']) or '-')} |"
        )
    for m in rep["mutants"]:
        title = _cell(m["section"]) + (f" ({kind(m)}: {_cell(removed(m))})" if kind(m) == "model" else "")
        out += ["", f"## {title}: {state(m)}", ""]
        if m["status"] == SURVIVED:
            out += [READINGS[m["reading"]] + ".", ""]
        for e in m.get("evidence", []):
            if "delta" in e:
                lost = f" Checks lost: {_cell(', '.join(e['checks_lost']))}." if e["checks_lost"] else ""
                by = (
                    ""
                    if "by" not in e
                    else (" (the judge)" if e["by"] == BY_JUDGE else f" ({e['by']} alone)")
                )
                out.append(
                    f"- **{_cell(e['case_id'])}**{by}: {_cell(e['delta']) or '(no delta given)'}{lost}"
                )
            elif e.get("identical"):
                out += [
                    f"### {_cell(e['case_id'])} ({e['verdict']})",
                    "",
                    "The original and the mutant produced the identical transcript:",
                    "",
                    _fence(e["teacher"]),
                    "",
                ]
            else:
                out += [
                    f"### {_cell(e['case_id'])} ({e['verdict']})",
                    "",
                    "Original:",
                    "",
                    _fence(e["teacher"]),
                    "",
                    "Without this section:" if kind(m) == "section" else "The mutant:",
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
