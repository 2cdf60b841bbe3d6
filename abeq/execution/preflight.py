"""Every check that comes before a run's first model call, in one place.

`preflight` runs them all once for a run (a mutation test: once for all its mutants) and returns
one `Preflight` every caller reads: the refusals, the coverage, the warnings and cautions. The
engine reads the same result before it creates the run; a person's confirmation (`abeq check-set
--confirm`, the desk's Confirm) refuses what a run would refuse of the set (`confirm_for_runs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..documents import Document
from ..errors import AbeqError, InputError, NotConfirmedError
from ..models.check import model_refusal
from ..results.store.store import Store
from ..schemas import TransferSet
from ..sets.confirmation import confirm, confirmation_problem, confirmer
from ..sets.coverage_report import CoverageReport, coverage, thin_refusal
from .checks.checks import problems
from .checks.code_trust import CodeItem, trust_state
from .config import RunConfig
from .runners.agent_cmd import command_notices
from .samples import ALPHA, behaviours_decidable

NOT_CONFIRMED_HINT = (
    "Review the cases (abeq check-set), then confirm them (--confirm, or Confirm in the desk)."
)
CLI_LABELS = ("--runner-model", "--judge-model")
DESK_LABELS = ("Runner model", "Judge model")
MODE_HINT = (
    "Runner modes: chat; tools (a model that can call functions, e.g. openai/gpt-4o-mini or scripted/rules); "
    "command (--runner-cmd CMD)."
)


@dataclass
class Preflight:
    """What the checks before a run found: every refusal (none: the run may start), the set's
    coverage, the warnings a user should read and the cautions about the models."""

    problems: list[AbeqError]
    coverage: CoverageReport
    unconfirmed: str = ""  # why the set does not count as confirmed for this original ("" when it does)
    code: list[CodeItem] = field(default_factory=list)  # the scripts the set's checks run
    code_trusted: bool = True
    warnings: list[str] = field(default_factory=list)
    cautions: list[str] = field(default_factory=list)
    # what min_judge_recall says of the judge ("": met, or not asked), and whether it is a refusal
    judge: str = ""
    judge_refused: bool = False

    def raise_first(self) -> None:
        """Raise the first refusal, if any."""
        if self.problems:
            raise self.problems[0]


def preflight(
    original: Document,
    ts: TransferSet,
    config: RunConfig,
    *,
    set_path: str | None = None,
    labels: tuple[str, str] = CLI_LABELS,
    models: bool = True,
    store: Store | None = None,
) -> Preflight:
    """Every reason this run would be refused before its first model call, with the coverage and
    warnings; nothing is written. (Review consistency needs the store: the engine checks it.)
    `models=False` leaves out asking whether each model string can be served (for a page that
    redraws: a hosted model's check imports litellm, seconds). `store`: where the judge's
    calibration is read, for `min_judge_recall` (every door passes the run's own store)."""
    out: list[AbeqError] = []
    judge_said = judge_minimum(config, store, labels)
    unconfirmed = confirmation_problem(ts, original.hash)
    if unconfirmed:
        out.append(_not_confirmed(unconfirmed, set_path))
    items, trusted = trust_state(ts, config.trust_code, set_path)
    refused: AbeqError | None = (
        check_refusal(ts, set_path)
        or _code_refusal(items, trusted, set_path)
        or _sandbox_refusal(items, config.unsandboxed)
    )
    if refused:
        out.append(refused)
    cov = coverage(original.text, ts, allow_thin=config.allow_thin)
    refused = thin_refusal(cov, set_path)
    if refused:
        out.append(refused)
    out += [InputError(p, hint=MODE_HINT) for p in config.mode.problems()]
    if config.mode.kind == "tools" and not config.runner.provider.tools:
        out.append(InputError(f"{labels[0]} {config.runner.name} cannot call tools", hint=MODE_HINT))
    # a runner command brings its own model: the runner model option is not used
    specs = [] if config.mode.kind == "command" else [(config.runner, labels[0])]
    if config.mode.kind == "command" or config.judge.name != config.runner.name:
        specs.append((config.judge, labels[1]))
    if models:
        out += model_refusals(*specs)
    if judge_said and config.require_judge_recall:
        out.append(InputError(judge_said, hint=JUDGE_HINT))
    return Preflight(
        out,
        cov,
        unconfirmed,
        items,
        trusted,
        warnings=[
            *unsandboxed_caution(items, config.unsandboxed),
            *command_notices(config.mode),
            *cov.warnings,
            *samples_warnings(config),
            *([judge_said] if judge_said and not config.require_judge_recall else []),
        ],
        cautions=cautions(config),
        judge=judge_said,
        judge_refused=bool(judge_said) and config.require_judge_recall,
    )


JUDGE_HINT = (
    "Calibrate the judge (abeq calibrate --judge-model MODEL), choose a judge that meets the minimum, "
    "or lower it."
)


def judge_minimum(config: RunConfig, store: Store | None, labels: tuple[str, str] = CLI_LABELS) -> str:
    """What `min_judge_recall` says of this run's judge: why it fails the minimum (or was never
    measured), "" when it meets it or no minimum is set. The one place the setting acts, whichever
    door started the run (the CLI, the API, the gate, MCP, the desk)."""
    if config.min_judge_recall is None:
        return ""
    from ..results.reports.agreement import judge_minimum_warning

    asked = "minimum judge recall" if labels == DESK_LABELS else "--min-judge-recall"
    if store is None:
        return f"judge {config.judge.name}: its calibration was not read (no database), so {asked} is unmet"
    return judge_minimum_warning(store, config.judge.name, config.min_judge_recall, asked=asked) or ""


def samples_notice(n: int) -> list[str]:
    """At a small N a loss cannot be called among a case's behaviours: said before the run."""
    if n <= 1:
        return []
    most = behaviours_decidable(n)
    guide = "Undecided cases do not fail the gate: docs/guides/samples.md gives the N a loss needs."
    if most == 0:
        return [
            f"--runner-samples {n}: no behaviour the candidate never shows can be called lost at this N "
            f"(3 samples are the fewest, at {ALPHA:g}). {guide}"
        ]
    return (
        [
            f"--runner-samples {n}: a behaviour the candidate never shows is called lost only when its case "
            f"tests at most {most} behaviour(s) that can differ (the judge's, and one per check; a check "
            f"both sides always pass does not count; Holm-corrected at {ALPHA:g}). {guide}"
        ]
        if most < 10
        else []
    )


def cautions(config: RunConfig) -> list[str]:
    """What a user should know about the models chosen (the embedded one is tiny)."""
    specs = (config.judge,) if config.mode.kind == "command" else (config.runner, config.judge)
    return list(dict.fromkeys(s.provider.caution for s in specs if s.provider.caution))


def samples_warnings(config: RunConfig) -> list[str]:
    """What to know before sampling: a small N, and a runner whose samples are not worth the time."""
    slow = config.runner_samples > 1 and config.mode.kind != "command"
    return samples_notice(config.runner_samples) + (
        [config.runner.provider.samples_caution] if slow and config.runner.provider.samples_caution else []
    )


def confirm_for_runs(
    ts: TransferSet,
    original_text: str,
    original_hash: str,
    *,
    allow_thin: bool,
    path: str | None = None,
    by: str | None = None,
) -> TransferSet:
    """A person accepts the set (`abeq check-set --confirm`, the desk's Confirm): refused, as a run
    would refuse the set, when a check cannot be evaluated or the set is thin and not accepted as
    thin; otherwise the set frozen, hashed and stamped for this original, with who confirmed it
    (`by`, else `git config user.name`, else "unknown")."""
    if not ts.cases:
        raise InputError("not confirmed: the transfer set has no cases", path=path, hint="Add cases first.")
    cov = coverage(original_text, ts, allow_thin=allow_thin)
    refused = check_refusal(ts, path) or thin_refusal(cov, path)
    if refused:
        thin = "Add cases, or accept a thin set (--allow-thin; on the desk, tick “Accept a thin set”)."
        raise InputError(
            f"not confirmed: a run would refuse this set ({refused.message})",
            path=path,
            hint=thin if refused.message.startswith("thin") else refused.hint,
        )
    return confirm(ts, original_hash, thin_accepted=(allow_thin and cov.thin) or None, by=confirmer(by))


def _not_confirmed(problem: str, path: str | None, hint: str = NOT_CONFIRMED_HINT) -> NotConfirmedError:
    return NotConfirmedError(
        f"{problem}: no runner call happens before a person accepts it", path=path, hint=hint
    )


def confirmation_refusal(
    ts: TransferSet, original_hash: str, path: str | None = None, hint: str = NOT_CONFIRMED_HINT
) -> NotConfirmedError | None:
    """The refusal for a set that does not count as confirmed for this original (None when it does)."""
    problem = confirmation_problem(ts, original_hash)
    return _not_confirmed(problem, path, hint) if problem else None


def review_refusal(
    store: Store,
    name: str | None,
    *,
    original_hash: str | None = None,
    ts_hash: str | None = None,
    desk: bool = False,
) -> InputError | None:
    """Rounds of a review compare only when they share the original and the cases: what the
    review's earlier runs used decides, not what the review points at now (docs/reference/rules.md,
    "Rounds of a review")."""
    known = store.inputs.review(name) if name else None
    earlier = store.log.runs(known["id"]) if known else []
    new = "Create a new review (sidebar) for it" if desk else "Use a new --review name for it"
    if original_hash and any(r["original_hash"] != original_hash for r in earlier):
        doc = store.inputs.document(earlier[0]["original_hash"])
        was = doc["name"] if doc else "another document"
        return InputError(
            f"review '{name}' already has runs against a different original ({was})",
            hint=f"Rounds of one review compare candidates of one original. {new}.",
        )
    if ts_hash and any(r["transfer_set_hash"] != ts_hash for r in earlier):
        return InputError(
            f"review '{name}' already has runs against a different transfer set",
            hint=f"Rounds of one review run the same cases, so that they compare. {new}"
            + ("; export this set first to start from it." if desk else "."),
        )
    return None


def check_refusal(ts: TransferSet, path: str | None = None) -> InputError | None:
    """A code check that cannot be evaluated (a pattern that does not compile, a missing value)
    would fail on both arms and report nothing: refused before the run, naming every one."""
    found = [p for c in ts.cases for p in problems(c)]
    if not found:
        return None
    return InputError(
        "; ".join(found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else ""),
        path=path,
        hint="Fix the checks (assertions) of these cases, then confirm the set again.",
    )


def model_refusals(*specs) -> list[InputError]:
    """A refusal per (spec, option label) whose model string no provider can serve."""
    out = []
    for spec, option in specs:
        refused = model_refusal(spec.name, option, spec.api_base)
        if refused:
            out.append(InputError(refused[0], hint=refused[1]))
    return out


TRUST_HINT = (
    "Read each script (abeq check-set lists them), then run with --trust-code, or remember the trust "
    "for exactly this code with `abeq check-set --confirm --trust-code` (the desk: Confirm with "
    "'Trust its code'). Trusted code runs with a reduced environment and limits: docs/security.md."
)


def _sandbox_refusal(items: list[CodeItem], unsandboxed: bool) -> InputError | None:
    """Trusted code runs inside bubblewrap; where it cannot, only when the person said --unsandboxed
    (outside a sandbox a script runs as them and can read their other processes' keys)."""
    from .checks.scripts import UNSANDBOXED_HINT, no_sandbox

    why = no_sandbox() if items and not unsandboxed else ""
    if not why:
        return None
    return InputError(
        f"the transfer set's code would run without a sandbox: {why}", path=None, hint=UNSANDBOXED_HINT
    )


def unsandboxed_caution(items: list[CodeItem], unsandboxed: bool) -> list[str]:
    """Said with every run whose trusted code runs outside bubblewrap."""
    from .checks.scripts import no_sandbox

    why = no_sandbox() if items and unsandboxed else ""
    if not why:
        return []
    return [
        f"UNSANDBOXED: the set's {len(items)} script(s) run without bubblewrap ({why}): "
        "they can read your files and your other processes' environments"
    ]


def _code_refusal(items: list[CodeItem], trusted: bool, path: str | None = None) -> InputError | None:
    """A set whose checks run code (promptfoo python/javascript asserts and transforms) that nobody
    trusted is refused before any model call, naming every script: never run, never silently skipped."""
    if trusted:
        return None
    shown = [i.where(path) for i in items[:8]]
    more = f"; and {len(items) - 8} more" if len(items) > 8 else ""
    return InputError(
        f"the transfer set runs code on this machine that you have not trusted ({len(items)} "
        f"script(s)): " + "; ".join(shown) + more,
        path=None,
        hint=TRUST_HINT,
    )
