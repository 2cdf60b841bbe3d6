"""abeq's vocabulary, spelled once: each list is a Literal type here (the schemas' fields use it, so
mypy checks every value), and the tuple beside it (the CLI's choices, the desk's lists) is read from
that type, never written a second time."""

from __future__ import annotations

from typing import Final, Literal, TypeGuard, get_args

# the judge's verdicts; the report schema lists them in this order
Verdict = Literal["equivalent", "candidate-regressed", "candidate-diverged"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
REGRESSED: Final = "candidate-regressed"
DIVERGED: Final = "candidate-diverged"
EQUIVALENT: Final = "equivalent"


def is_verdict(name: object) -> TypeGuard[Verdict]:
    """A verdict's name (and, for mypy, a Verdict from here on)."""
    return name in VERDICTS


# most cautious first: a tie between judge samples resolves to the earliest
# (docs/reference/rules.md, "When unsure, regressed")
VERDICT_ORDER: tuple[Verdict, ...] = (REGRESSED, DIVERGED, EQUIVALENT)
# an A/A replay (the teacher judged against its own re-run) with any of these verdicts shows the
# judge's noise: the Python rule (abeq.results.reports.report) and the SQL counts (the ledger) both read it
AA_NOISY: tuple[Verdict, ...] = tuple(v for v in VERDICTS if v != EQUIVALENT)

# what a reviewer does with a judged case: accept the judge's verdict, or replace it (with a reason)
ReviewAction = Literal["agree", "override"]
REVIEW_ACTIONS: tuple[ReviewAction, ...] = get_args(ReviewAction)
AGREE: Final = "agree"
OVERRIDE: Final = "override"

CaseType = Literal["happy", "edge", "adversarial", "composition"]
CASE_TYPES: tuple[CaseType, ...] = get_args(CaseType)
# where a case of a transfer set came from (its `status` field): drafted from the original, edited or
# added by a person, or confirmed as drafted
CaseProvenance = Literal["derived", "user-modified", "user-added", "confirmed"]
CASE_PROVENANCES: tuple[CaseProvenance, ...] = get_args(CaseProvenance)
# what a calibration pair shows (abeq/calibration): the category names what the candidate did
# differently, not the verdict it must carry (suite.CATEGORY_LABELS pairs each with its verdict)
CalibrationCategory = Literal[
    "step-dropped",
    "step-changed",
    "step-weakened",
    "loss-beside-gain",
    "reordered-loss",
    "extra-step",
    "reply-changed",
    "identical",
    "reworded",
    "redundant-lines-dropped",
    "unreported-step",
    "harmless-reorder",
    "order-swap",
    "reviewed",
]
CALIBRATION_CATEGORIES: tuple[CalibrationCategory, ...] = get_args(CalibrationCategory)
Variant = Literal["skill", "instruction-file"]
VARIANTS: tuple[Variant, ...] = get_args(Variant)
# how a document is run on a case: one chat call that narrates; a model with tools over a copy of
# the case's workspace; any agent CLI run as a command in that copy
RunnerModeName = Literal["chat", "tools", "command"]
RUNNER_MODES: tuple[RunnerModeName, ...] = get_args(RunnerModeName)

# gate profiles (docs/reference/rules.md, "Gate profiles"): compress passes with no regression;
# directive-clarity also needs a measured directness gain
Gate = Literal["compress", "directive-clarity"]
GATES: tuple[Gate, ...] = get_args(Gate)
COMPRESS, DIRECTIVE_CLARITY = GATES  # the options table's default gate is COMPRESS

# the blind comparator's rubric (docs/reference/rules.md, "comparison.json")
CONTENT_CRITERIA: tuple[str, ...] = ("completeness", "accuracy", "usefulness", "clarity", "depth")
STRUCTURE_CRITERIA: tuple[str, ...] = (
    "organization",
    "progressive_disclosure",
    "conciseness",
    "formatting",
    "consistency",
)

# what a runner records for an interactive gate the case gave no answer for
STOPPED = "STOPPED (no scripted answer)"

# what a check did on the two arms of a case (abeq.execution.checks.checks): only LOST changes a verdict
CheckOutcome = Literal["kept", "lost", "gained", "failed-both", "skipped"]
CHECK_OUTCOMES: tuple[CheckOutcome, ...] = get_args(CheckOutcome)
CHECK_KEPT: Final = "kept"
CHECK_LOST: Final = "lost"
CHECK_GAINED: Final = "gained"
CHECK_FAILED_BOTH: Final = "failed-both"
CHECK_SKIPPED: Final = "skipped"

# a run as stored: a process works on it (running, cancelling), or it ended one of five ways; a run
# read back as running whose process is gone reads interrupted (abeq.results.store.liveness)
RunStatus = Literal["running", "cancelling", "finished", "cancelled", "interrupted", "failed", "stopped"]
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
RUNNING: Final = "running"
CANCELLING: Final = "cancelling"
FINISHED: Final = "finished"
CANCELLED: Final = "cancelled"
INTERRUPTED: Final = "interrupted"
FAILED: Final = "failed"
STOPPED_EARLY: Final = "stopped"  # --fail-fast: no new case started after a regression
# why a run's cancel flag was set: a person pressed Cancel, or Ctrl-C, SIGTERM, the desk shutting down
StopReason = Literal["cancelled", "interrupted"]

# a case within a run: waiting, judged, errored at some stage, or never started (--fail-fast)
CaseRunStatus = Literal["pending", "judged", "error", "not-run"]
CASE_RUN_STATUSES: tuple[CaseRunStatus, ...] = get_args(CaseRunStatus)
PENDING: Final = "pending"
JUDGED: Final = "judged"
CASE_ERROR: Final = "error"

# --fail-fast: a case never started because an earlier one was judged regressed; reported beside
# the errors with this stage, never as an error of its own and never as a verdict
NOT_RUN_STAGE = "not run (stopped early)"
NOT_RUN_STATUS: Final = "not-run"
# a case a cancelled or interrupted run never judged (still pending): not run, never an error
PENDING_STAGE = "not run"
