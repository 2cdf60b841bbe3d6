"""abeq's vocabulary, spelled once: the schemas' Literals, the CLI's choices and the desk's lists
are all built from these tuples."""

from __future__ import annotations

# the judge's verdicts; the report schema lists them in this order
VERDICTS: tuple[str, ...] = ("equivalent", "candidate-regressed", "candidate-diverged")
REGRESSED, DIVERGED, EQUIVALENT = "candidate-regressed", "candidate-diverged", "equivalent"
# most cautious first: a tie between judge samples resolves to the earliest (SPEC §3: when unsure, regressed)
VERDICT_ORDER: tuple[str, ...] = (REGRESSED, DIVERGED, EQUIVALENT)
# an A/A replay (the teacher judged against its own re-run) with any of these verdicts shows the
# judge's noise: the Python rule (abeq.results.report) and the SQL counts (the ledger) both read it
AA_NOISY: tuple[str, ...] = tuple(v for v in VERDICTS if v != EQUIVALENT)

# what a reviewer does with a judged case: accept the judge's verdict, or replace it (with a reason)
AGREE, OVERRIDE = "agree", "override"
REVIEW_ACTIONS: tuple[str, ...] = (AGREE, OVERRIDE)

CASE_TYPES: tuple[str, ...] = ("happy", "edge", "adversarial", "composition")
CASE_STATUSES: tuple[str, ...] = ("derived", "user-modified", "user-added", "confirmed")
VARIANTS: tuple[str, ...] = ("skill", "instruction-file")
# how a document is run on a case: one chat call that narrates; a model with tools over a copy of
# the case's workspace; any agent CLI run as a command in that copy
RUNNER_MODES: tuple[str, ...] = ("chat", "tools", "command")

# gate profiles (SPEC §8): compress passes with no regression; directive-clarity also needs a
# measured directness gain
GATES: tuple[str, ...] = ("compress", "directive-clarity")

# the blind comparator's rubric (SPEC §10)
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

# what a check did on the two arms of a case (abeq.execution.checks): only LOST changes a verdict
CHECK_KEPT, CHECK_LOST, CHECK_GAINED, CHECK_FAILED_BOTH, CHECK_SKIPPED = (
    "kept",
    "lost",
    "gained",
    "failed-both",
    "skipped",
)
CHECK_OUTCOMES: tuple[str, ...] = (CHECK_KEPT, CHECK_LOST, CHECK_GAINED, CHECK_FAILED_BOTH, CHECK_SKIPPED)

# --fail-fast: a case never started because an earlier one was judged regressed; reported beside
# the errors with this stage, never as an error of its own and never as a verdict
NOT_RUN_STAGE = "not run (stopped early)"
NOT_RUN_STATUS = "not-run"
# a case a cancelled or interrupted run never judged (still pending): not run, never an error
PENDING_STAGE = "not run"
