"""Every check that comes before a run's first model call, in one place: the CLI, the desk and the
engine all ask these, so a refusal reads the same wherever it happens."""

from __future__ import annotations

from ..errors import InputError, NotConfirmedError
from ..models.check import model_refusal
from ..results.store import Store
from ..schemas import TransferSet
from ..sets.confirm import confirmation_problem
from .checks import problems

NOT_CONFIRMED_HINT = (
    "Review the cases (abeq check-set), then confirm them (--confirm, or Confirm in the desk)."
)
THIN_HINT = "Add cases, or accept a thin set explicitly (--allow-thin; the report records it)."


def confirmation_refusal(
    ts: TransferSet, original_hash: str, path: str | None = None, hint: str = NOT_CONFIRMED_HINT
) -> NotConfirmedError | None:
    """The refusal for a set that does not count as confirmed for this original (None when it does)."""
    problem = confirmation_problem(ts, original_hash)
    if not problem:
        return None
    return NotConfirmedError(
        f"{problem}: no runner call happens before a person accepts it", path=path, hint=hint
    )


def review_refusal(
    store: Store,
    name: str | None,
    *,
    original_hash: str | None = None,
    ts_hash: str | None = None,
    desk: bool = False,
) -> InputError | None:
    """Rounds of a review compare only when they share the original and the cases (SPEC §9): what
    the review's earlier runs used decides, not what the review points at now."""
    known = store.review(name) if name else None
    earlier = store.runs(known["id"]) if known else []
    new = "Create a new review (sidebar) for it" if desk else "Use a new --review name for it"
    if original_hash and any(r["original_hash"] != original_hash for r in earlier):
        doc = store.document(earlier[0]["original_hash"])
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


def code_refusal(ts: TransferSet, trust_code: bool, path: str | None = None) -> InputError | None:
    """A set whose checks run code (promptfoo python/javascript asserts and transforms) that nobody
    trusted is refused before any model call, naming every script: never run, never silently skipped."""
    from .code_trust import trust_state

    items, trusted = trust_state(ts, trust_code, path)
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
