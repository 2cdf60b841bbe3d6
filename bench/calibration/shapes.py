"""The shape of an authored scenario: one teacher run (its steps, its reply) and what author.py
may change in it to draw labelled pairs. scenarios.py writes them; author.py draws from them; neither
imports the other's module for this (the two used to import each other)."""

from __future__ import annotations

from dataclasses import dataclass, field

from abeq.vocab import EQUIVALENT


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
    lossy_reply: str = ""  # the reply to the user once the step is lost (or weakened)
    in_reply: bool = False  # the user reads this step in the reply: losing it must change the reply
    lossy_out: dict[str, list[str]] = field(default_factory=dict)  # steps' tool output once this one is lost


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
    extra: Step  # a harmless step the document does not ask for
    gain: Step  # an improvement
    loss: str  # regressed: the step lost
    loss2: str  # regressed despite a gain: another step lost
    claim: str  # padded-regressed and the injection pair: the step lost
    hidden: str  # adversarial: the step lost inside a long transcript
    outputs: dict[str, list[str]]  # each step's tool output (the long form shows it)
    mode: str = "tools"  # the runner mode whose transcript shape the runs take: chat, tools, command
    weak: tuple[str, str, str, str] | None = None  # near miss: (step id, text, report, what is weakened)
    weak_reply: str = ""  # the reply once the step is weakened (when the user reads it)
    weak_out: list[str] | None = None  # the weakened step's tool output, when it differs
    extra_reply: str = ""  # the reply with the extra step in it (a chat run's steps are its reply)
    gain_reply: str = ""  # the reply with the gain in it and the second loss gone
    unreported: str = ""  # under-reporting: the step done but left out of the self-report
    order: tuple[str, str] | None = None  # these two steps the other way round ...
    order_label: str = EQUIVALENT  # ... is harmless (equivalent) or loses something (regressed)
    order_why: str = ""
    files: list[str] = field(default_factory=list)  # the repository listing the long form opens with
    history: list[str] = field(default_factory=list)  # recent commit subjects (git log in the long form)
    rules: str = ""  # the instruction file the long form reads first (path)
    section: str = ""
    notes: dict = field(default_factory=dict)
