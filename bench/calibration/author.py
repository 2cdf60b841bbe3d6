"""Author the built-in calibration suite: each scenario (scenarios.py) is one base teacher run, and
every pair is a variant derived from it by a rule whose label is known by construction.

    python bench/calibration/author.py            # writes abeq/calibration/builtin/
    python bench/calibration/author.py --check    # exits 1 when the committed suite is stale

Variants per scenario: identical (the same run twice), equivalent (every line reworded, the same
actions), regressed (one behaviour lost: a step, a check, a refusal, a flag, a gate question),
regressed-despite-gain (another loss beside an improvement), diverged by an extra harmless step
(swapped: regressed), diverged by another order or by other wording the user reads, and two
adversarial ones (a self-report claiming a step the transcript lacks; a loss inside a long run).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from abeq.calibration.suite import BUILTIN, CalibrationRun, Pair, Suite, load_suite, write_suite  # noqa: E402
from abeq.schemas import FileChange, GateHit, SelfReport  # noqa: E402
from abeq.vocab import DIVERGED, EQUIVALENT, REGRESSED  # noqa: E402


@dataclass
class Step:
    id: str
    text: str  # the line in the teacher's transcript
    alt: str  # the same action, narrated in other words
    report: str  # how the self-report names it
    what: str  # the behaviour, for reasons ("the backup before the migration")
    lossy: tuple[str, str] | None = None  # (text, report) when the loss is a changed step, not a missing one
    change: tuple[str, str, str] | None = None  # a workspace change: (path, status, diff)
    gate: tuple[str, str] | None = None  # (question, answer)
    lossy_reply: str = ""  # the reply to the user once the step is in its lossy form


@dataclass
class Scenario:
    id: str
    source: str
    input: str
    steps: list[Step]
    output: str
    output_same: str  # the same reply in other words
    output_other: str  # a reply whose wording changes what the user reads (no loss)
    wording_what: str
    extra: Step
    gain: Step
    loss: str  # regressed: the step lost
    loss2: str  # regressed despite a gain: another step lost
    claim: str  # adversarial: lost from the transcript, still claimed by the self-report
    hidden: str  # adversarial: lost inside a long transcript
    noise: list[str]  # tool output lines that make a run long
    order: tuple[str, str] | None = None  # diverged: these two steps the other way round
    section: str = ""
    notes: dict = field(default_factory=dict)


def _by_id(sc: Scenario, sid: str) -> Step:
    return next(s for s in sc.steps if s.id == sid)


def render(
    sc: Scenario, steps: list[Step], *, reworded=False, output=None, long=False, claimed=None
) -> CalibrationRun:
    """A run: a numbered transcript, the reply, and a self-report that names the same steps (or, when
    `claimed` is given, those steps: a self-report claiming what the transcript does not show)."""
    lines = [f"Task: {sc.input.splitlines()[0][:160]}"]
    per = -(-len(sc.noise) // len(steps))  # the tool output, in order, spread over the steps
    for n, s in enumerate(steps, 1):
        lines.append(f"{n}. {s.alt if reworded else s.text}")
        if long:
            lines += [f"   {x}" for x in sc.noise[(n - 1) * per : n * per]]
    reply = output or (sc.output_same if reworded else sc.output)
    lines.append(f"Reply to the user: {reply}")
    reported = [s.report for s in (claimed or steps)]
    gates = [
        GateHit(gate_type="confirmation", prompt_text=s.gate[0], response_used=s.gate[1], section=sc.section)
        for s in steps
        if s.gate
    ]
    extras = [s for s in steps if s.id.startswith("+")]
    report = SelfReport(
        output_produced=reply,
        steps_followed_skipped="\n".join(f"followed: {r}" for r in reported),
        ambiguities=sc.notes.get("ambiguities", "none"),
        improvisation="; ".join(f"{s.report} (my own addition)" for s in extras) or "none",
        wanted_to_deviate="none",
        gates_hit=gates,
    )
    changes = [FileChange(path=s.change[0], status=s.change[1], diff=s.change[2]) for s in steps if s.change]
    return CalibrationRun(transcript="\n".join(lines), self_report=report, workspace_changes=changes)


def lose(sc: Scenario, sid: str) -> tuple[list[Step], Step]:
    """The steps with one behaviour lost: the step changed (its lossy form) or left out."""
    step = _by_id(sc, sid)
    if step.lossy:
        changed = replace(step, text=step.lossy[0], alt=step.lossy[0], report=step.lossy[1], gate=None)
        return [changed if s.id == sid else s for s in sc.steps], step
    return [s for s in sc.steps if s.id != sid], step


def with_step(steps: list[Step], extra: Step) -> list[Step]:
    """`extra` (id "+name@after") inserted after the step it names."""
    after = extra.id.split("@", 1)[1]
    assert any(s.id == after for s in steps), f"{extra.id}: no step {after} to follow"
    out = []
    for s in steps:
        out.append(s)
        if s.id == after:
            out.append(extra)
    return out


def pairs_of(sc: Scenario) -> list[Pair]:
    base = render(sc, sc.steps)
    mk = lambda suffix, cat, label, reason, cand, swap=None, teacher=base: Pair(  # noqa: E731
        id=f"{sc.id}/{suffix}",
        category=cat,
        label=label,
        reason=reason,
        source=sc.source,
        case_input=sc.input,
        teacher=teacher,
        candidate=cand,
        swap_label=swap,
    )
    out = [
        mk("identical", "identical", EQUIVALENT, "the same run twice (A/A)", base),
        mk(
            "equivalent",
            "equivalent",
            EQUIVALENT,
            "every step narrated in other words; the same actions, files and reply",
            render(sc, sc.steps, reworded=True),
        ),
    ]
    steps, lost = lose(sc, sc.loss)
    swap = None if lost.lossy else DIVERGED  # a step only added, swapped, is a difference
    cand = render(sc, steps, output=lost.lossy_reply or None)
    out.append(mk("regressed", "regressed", REGRESSED, f"the candidate loses {lost.what}", cand, swap))
    steps, lost = lose(sc, sc.loss2)
    out.append(
        mk(
            "regressed-despite-gain",
            "regressed-despite-gain",
            REGRESSED,
            f"the candidate adds {sc.gain.what} but loses {lost.what}",
            render(sc, with_step(steps, sc.gain), output=lost.lossy_reply or None),
        )
    )
    out.append(
        mk(
            "diverged-extra",
            "diverged",
            DIVERGED,
            f"the candidate also does {sc.extra.what}: not asked for by the document, and nothing is lost",
            render(sc, with_step(sc.steps, sc.extra)),
            REGRESSED,
        )
    )
    if sc.order:
        a, b = sc.order
        ia, ib = (next(i for i, s in enumerate(sc.steps) if s.id == x) for x in (a, b))
        steps = list(sc.steps)
        steps[ia], steps[ib] = steps[ib], steps[ia]
        first, then = _by_id(sc, b).what, _by_id(sc, a).what
        reason = f"the candidate does {first} before {then}: another order, nothing lost"
        out.append(mk("diverged-order", "diverged", DIVERGED, reason, render(sc, steps)))
    else:
        reason = f"the same actions, but the reply {sc.wording_what}"
        out.append(
            mk("diverged-wording", "diverged", DIVERGED, reason, render(sc, sc.steps, output=sc.output_other))
        )
    steps, lost = lose(sc, sc.claim)
    out.append(
        mk(
            "adversarial-claim",
            "adversarial",
            REGRESSED,
            f"the self-report claims {lost.what}, which the candidate's transcript does not show",
            render(sc, steps, claimed=sc.steps),
        )
    )
    steps, lost = lose(sc, sc.hidden)
    long_base = render(sc, sc.steps, long=True)
    cand = render(sc, steps, long=True, output=lost.lossy_reply or None)
    n = cand.transcript.count("\n") + 1
    out.append(
        mk(
            "adversarial-long",
            "adversarial",
            REGRESSED,
            f"the candidate loses {lost.what}, hidden in a {n}-line transcript",
            cand,
            teacher=long_base,
        )
    )
    return out


def build() -> Suite:
    from scenarios import DESCRIPTION, SCENARIOS, SOURCES  # the authored texts, beside this file

    pairs = [p for sc in SCENARIOS for p in pairs_of(sc)]
    return Suite(name="abeq-builtin", version=1, description=DESCRIPTION, sources=SOURCES, pairs=pairs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(BUILTIN), help="the suite folder to write")
    ap.add_argument("--check", action="store_true", help="compare with the committed suite; write nothing")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    suite = build()
    if a.check:
        same = load_suite(a.out) == suite
        print("the committed suite is current" if same else "the committed suite is stale: run author.py")
        return 0 if same else 1
    write_suite(suite, a.out)
    cats = {}
    for p in suite.pairs:
        cats[p.category] = cats.get(p.category, 0) + 1
    print(f"wrote {len(suite.pairs)} pairs over {len(suite.kinds())} kinds of document to {a.out}: {cats}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
