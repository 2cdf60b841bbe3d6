"""A set's frozen hash, confirmation (a person accepted exactly these cases for this original) and edits."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess

from ..schemas import Case, TransferSet
from ..timestamps import now
from .workspace import identity as workspace_identity

# what a case gives the runner and the checks besides its input and gate answers: in its identity
# only when set, so the identity of a case without them is what it always was. Expectations are
# checks (graded on both arms; a lost one fails the case), so they are confirmed like the rest.
_OPTIONAL_IDENTITY = ("assertions", "expectations", "files", "command_outputs")


def case_identity(case: Case) -> dict:
    """Everything about a case that can change what a run of it produces or how it is checked;
    the cache keys and the set's hash are built from it."""
    out = case.model_dump(include={"input", "gate_responses"})
    for name in _OPTIONAL_IDENTITY:
        value = getattr(case, name)
        if value:
            out[name] = case.model_dump(include={name})[name]
    if case.workspace is not None:
        out["workspace"] = workspace_identity(case)  # the folder's content, not its path
    read = checked_metadata(case)
    if read:
        out["checked_metadata"] = read
    return out


_CODE_TYPES = ("python", "javascript", "not-python", "not-javascript")
_TRANSFORM_KEYS = ("transform", "test_transform")
_TEMPLATE = re.compile(r"\{\{")


def checked_metadata(case: Case) -> dict:
    """What of a case's metadata its checks read, so a confirmation covers it: a script (an assert or
    a transform) is handed the whole metadata (promptfoo's context.test.metadata); a check with a
    {{var}} has the case's vars filled in. Metadata nothing reads stays out (a note, provenance)."""
    if not case.assertions or not case.metadata:
        return {}
    dumped = [a.model_dump() for a in case.assertions]
    if any(_runs_code(a) for a in dumped):
        return case.metadata
    if "vars" in case.metadata and _TEMPLATE.search(json.dumps(dumped, ensure_ascii=False)):
        return {"vars": case.metadata["vars"]}
    return {}


def _runs_code(a: object) -> bool:
    """An assertion (or an assert-set member, at any depth) that runs a script."""
    if isinstance(a, list):
        return any(_runs_code(x) for x in a)
    if not isinstance(a, dict):
        return False
    opts = a.get("options")
    if not isinstance(opts, dict):
        opts = {}
    if a.get("type") in _CODE_TYPES or any(a.get(k) or opts.get(k) for k in _TRANSFORM_KEYS):
        return True
    return _runs_code(a.get("value")) or _runs_code(opts.get("assert"))


def set_hash(ts: TransferSet) -> str:
    """Hash of what the runner and judge see of the set; status and confirmation are excluded,
    so confirming does not change it and any edit to a case does."""
    cases = [
        {**c.model_dump(include={"id", "type", "exercises_sections"}), **case_identity(c)} for c in ts.cases
    ]
    blob = json.dumps(cases, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def confirm(
    ts: TransferSet, document_hash: str, *, thin_accepted: bool | None = None, by: str | None = None
) -> TransferSet:
    """A person accepted the set: freeze it (every case confirmed), stamp the time and who (`by`)."""
    cases = [c.model_copy(update={"status": "confirmed"}) for c in ts.cases]
    upd: dict = {
        "cases": cases,
        "user_confirmed": True,
        "confirmation_timestamp": now(),
        "document_hash": document_hash,
        "confirmed_hash": set_hash(ts),
        "confirmed_by": by,
    }
    if thin_accepted is not None:
        upd["thin_accepted"] = thin_accepted
    return ts.model_copy(update=upd)


def confirm_for_run(
    ts: TransferSet, document_hash: str, *, thin_accepted: bool | None = None, by: str | None = None
) -> TransferSet:
    """A person accepted the set for one run only (`abeq run --confirm`, a resume of such a run): the
    run goes ahead on it, and the store keeps the set as it was given (`as_given`), unconfirmed."""
    who = by or confirmer()
    done = confirm(ts, document_hash, thin_accepted=thin_accepted, by=who)
    done._one_run = (who, ts)
    return done


def one_run(ts: TransferSet) -> str | None:
    """Who confirmed the set for this one run (None: its confirmation, if any, is the set's own)."""
    return ts._one_run[0] if ts._one_run else None


def as_given(ts: TransferSet) -> TransferSet:
    """The set to keep in the store: without a confirmation made for one run only."""
    return ts._one_run[1] if ts._one_run else ts


def git_user() -> str:
    """`git config user.name` ('' when git or the setting is missing)."""
    try:
        out = subprocess.run(
            ["git", "config", "user.name"],
            capture_output=True,
            text=True,
            timeout=5,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()[:100] if out.returncode == 0 else ""


def confirmer(signed_in: str | None = None) -> str:
    """Who a confirmation is recorded under: the signed-in person, else `git config user.name`, else
    "unknown" (never a guess from the login)."""
    return (signed_in or "").strip() or git_user() or "unknown"


def edit(ts: TransferSet, cases: list[Case]) -> TransferSet:
    """Replace the cases: any change to a confirmed set makes a new, unconfirmed version.

    Provenance: a new id is user-added, a changed case user-modified, an unchanged one keeps
    its status.
    """
    old = {c.id: c for c in ts.cases}
    marked = []
    for c in cases:
        prev = old.get(c.id)
        if prev is None:
            c = c.model_copy(update={"status": "user-added"})
        elif c.model_dump(exclude={"status"}) != prev.model_dump(exclude={"status"}):
            c = c.model_copy(update={"status": "user-modified"})
        else:
            c = c.model_copy(update={"status": prev.status})
        marked.append(c)
    new = ts.model_copy(update={"cases": marked})
    # Any change un-confirms, even one the hash ignores (rationale, metadata): the person
    # accepted that exact set.
    before = [c.model_dump(exclude={"status"}) for c in ts.cases]
    after = [c.model_dump(exclude={"status"}) for c in cases]
    if after != before:
        new = new.model_copy(update=UNCONFIRMED)
    return new


UNCONFIRMED = {
    "user_confirmed": False,
    "confirmation_timestamp": None,
    "confirmed_hash": None,
    "confirmed_by": None,
}


def confirmation_problem(ts: TransferSet, original_hash: str | None = None) -> str:
    """Why this set cannot count as confirmed for this original ("" when it can).

    A set counts only as a person confirmed it: its cases still hash to what was confirmed (so a
    file edited by hand afterwards, or marked confirmed by hand, is not), for the same original.
    """
    if not ts.user_confirmed:
        return "the transfer set is not confirmed"
    if not ts.confirmed_hash:
        return (
            "the transfer set is marked confirmed but carries no confirmation hash "
            "(it was not confirmed by abeq)"
        )
    if ts.confirmed_hash != set_hash(ts):
        return "the transfer set's cases changed after it was confirmed"
    if original_hash and not ts.document_hash:
        return "the transfer set is marked confirmed but names no original (its document_hash is empty)"
    if original_hash and ts.document_hash != original_hash:
        # not "a different version of the original": the other document may be any document at all
        return "the transfer set's cases were confirmed for another original document, not this one"
    return ""
