"""What the Transfer set page shows, computed without Streamlit: where the set stands (confirmed,
locked by runs), what the edited table holds and which buttons it allows, the coverage as metrics
and what the set's checks say. The page (and `transfer_set_panels`) only draw these."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field

import pandas as pd

from .. import sets
from ..errors import AbeqError
from ..execution.checks import check_audit
from ..execution.preflight import confirm_for_runs
from ..results.store.rows import SetConfirmation
from ..results.store.store import Store
from ..schemas import CASE_TYPES, Case, TransferSet
from ..sets.coverage_report import CoverageReport
from ..timestamps import local
from . import editor, policy
from .metric import Metric
from .render import md

LOCKED_EDITS = (
    "This review already has runs on these cases, and its rounds must run the same set, so these "
    "edits cannot be saved here. To run changed cases, create a new review (sidebar)."
)
THIN = "A run will be refused: this set is thin. Add cases, or tick “Accept a thin set” before confirming."


@dataclass
class SetState:
    """The review's stored set and where it stands."""

    ts: TransferSet
    ts_hash: str | None
    unconfirmed_why: str
    has_runs: bool  # rounds of a review run the same cases (so that they compare): its set is fixed
    confirmation: SetConfirmation = field(default_factory=lambda: SetConfirmation())  # when, by whom, where
    review: str = ""  # the review shown
    original: str = ""  # the hash of the review's original

    @property
    def confirmed(self) -> bool:
        return not self.unconfirmed_why

    @property
    def locked(self) -> bool:
        return self.has_runs


def set_state(store: Store, review: dict, original: dict, ts_hash: str | None = None) -> SetState:
    """The review's stored set (or the version `ts_hash` of it) and where it stands."""
    ts_hash = ts_hash or review["transfer_set_hash"]
    ts = (store.inputs.transfer_set(ts_hash) if ts_hash else None) or TransferSet(cases=[])
    why = sets.confirmation_problem(ts, original["hash"])
    prov = store.inputs.confirmation(ts_hash) if ts_hash and (not why or ts.user_confirmed) else {}
    has_runs = bool(ts_hash and store.log.runs(review["id"]))
    return SetState(ts, ts_hash, why, has_runs, prov, review["name"], original["hash"])


def _base_key(review: dict) -> str:
    return f"ts_base_{review['id']}"


def has_table_edits(state: MutableMapping, ts_hash: str | None) -> bool:
    """The case table of this version holds edits not saved yet (in this browser session)."""
    w = state.get(f"ts_editor_{ts_hash}") or {}
    return bool(w.get("edited_rows") or w.get("added_rows") or w.get("deleted_rows"))


def editing_state(store: Store, review: dict, original: dict, state: MutableMapping) -> tuple[SetState, bool]:
    """The set this desk's table edits, and whether the stored set changed since it was loaded (another
    desk, or `abeq`, saved it meanwhile). With unsaved edits the table keeps the version they were
    made on, so they are neither lost nor laid over cases they never saw; without, it follows the
    stored set."""
    current = set_state(store, review, original)
    base = state.get(_base_key(review))
    if base and base != current.ts_hash and has_table_edits(state, base) and store.inputs.transfer_set(base):
        return set_state(store, review, original, base), True
    state[_base_key(review)] = current.ts_hash
    return current, False


def follow_stored(review: dict, state: MutableMapping, saved_hash: str | None) -> None:
    """After this desk saved (or chose to drop its edits): the table works on the stored set again."""
    state[_base_key(review)] = saved_hash


CHANGED_ELSEWHERE = (
    "The set was saved elsewhere (another desk, or `abeq`) since you loaded it, and your edits are "
    "not in that version. The table still shows the version you edited. **Save edits** now would "
    "replace the other change: reload to see it (your edits are dropped), or tick the box to save "
    "yours over it."
)


def status(s: SetState) -> list[tuple[str, str]]:
    """What the page says about the set, as (kind, Markdown): kind is success, info or warning."""
    ts = s.ts
    if s.confirmed:
        said = f"Confirmed {local(ts.confirmation_timestamp)} · set {sets.set_hash(ts)[:12]}"
        by, where = s.confirmation.get("confirmed_by"), s.confirmation.get("confirmed_in")
        unknown = " · who confirmed it is not recorded (before abeq kept it)"
        if by == "unknown":  # nobody signed in and no `git config user.name` where it was confirmed
            unknown = " · by unknown: nobody was signed in and git has no user.name there"
        said += f" · by {by}" if by and by != "unknown" else unknown
        if where and where != s.review:  # the same cases for the same original, confirmed elsewhere
            said += f" in review {where} (its confirmation counts here: same cases, same original)"
        return [
            ("success", md(said)),
            (
                "info",
                "This review has runs, so its cases are fixed (its rounds must run the same set); to run "
                "changed cases, create a new review."
                if s.has_runs
                else "Editing makes a new unconfirmed version: runs are refused until you confirm it again.",
            ),
        ]
    if ts.user_confirmed:
        return [("warning", confirmed_elsewhere(s))]
    return [
        ("warning", "Not confirmed: no runner call happens until you read these cases and press Confirm.")
    ]


def confirmed_elsewhere(s: SetState) -> str:
    """A set that carries a confirmation that does not hold here, said as it happened: who confirmed
    these cases and where, when this database knows; never "confirmed" for a set nobody confirmed
    for this original (Markdown)."""
    by, where = s.confirmation.get("confirmed_by"), s.confirmation.get("confirmed_in")
    if s.ts.document_hash and s.ts.document_hash != s.original:
        who = " by " + md(by) if by else ""
        at = f" in review {md(where)}" if where and where != s.review else ""
        said = (
            f"Not confirmed for this original: these cases were confirmed{who}{at} for another document, "
            "not this review's original (nobody has confirmed them for it)."
        )
    else:
        said = md(f"Not confirmed: {s.unconfirmed_why}.")
    return said + " Read the cases against this original and press Confirm."


def export_json(ts: TransferSet, original_text: str) -> str:
    """The set as a file, with the coverage this page shows (the stored set keeps the cases;
    coverage is measured on the original)."""
    exported = ts.model_copy(update={"coverage": sets.coverage(original_text, ts).as_coverage()})
    return sets.dump(exported)


def import_notes(name: str, read_as: str, n: int, warnings: list[str]) -> tuple[str, list[str]]:
    """What an import says once: the success line and its warnings (Markdown)."""
    return md(f"Imported {n} cases from {name} (read as {read_as})."), [md(w) for w in warnings]


@dataclass
class Edits:
    """The table as edited: its cases (None while a cell is wrong), what changed, the buttons it allows."""

    s: SetState
    cases: list[Case] | None
    problem: AbeqError | None
    unsaved: dict[str, list[str]] = field(default_factory=dict)

    @property
    def dirty(self) -> bool:
        return self.cases is not None and editor.changed(self.s.ts, self.cases)

    @property
    def shown(self) -> TransferSet:
        """The set as the table shows it (what coverage and the checks are measured on)."""
        return self.s.ts.model_copy(update={"cases": self.cases}) if self.cases is not None else self.s.ts

    @property
    def problem_shown(self) -> bool:
        # an empty table of a set without cases is where a set starts, not a mistake
        return self.problem is not None and bool(self.s.ts.cases or self.problem.message != editor.NO_CASES)

    def unsaved_text(self) -> str:
        if not any(self.unsaved.values()):
            return ""
        listed = "; ".join(f"{k} {', '.join(v)}" for k, v in self.unsaved.items() if v)
        return md(f"Unsaved edits: {listed}. Save keeps them unconfirmed; Confirm saves and freezes them.")

    def edited_fields(self) -> dict[str, str]:
        """Per case id, what the table changed (for the case detail)."""
        out = {e.split(": ", 1)[0]: e.split(": ", 1)[1] for e in self.unsaved.get("edited", [])}
        out.update({cid: "new case" for cid in self.unsaved.get("added", [])})
        return out

    @property
    def thin_box_disabled(self) -> bool:
        return self.s.confirmed and not self.dirty

    @property
    def save_disabled(self) -> bool:
        return not self.dirty or self.s.locked

    @property
    def confirm_disabled(self) -> bool:
        return self.cases is None or (self.s.confirmed and not self.dirty) or (self.s.locked and self.dirty)

    def to_save(self) -> TransferSet:
        assert self.cases is not None  # Save is disabled until the table has changed the set
        return sets.edit(self.s.ts, self.cases)

    def to_confirm(
        self,
        original: Mapping,
        allow_thin: bool,
        trust_code: bool = False,
        by: str | None = None,
        signed_in: str | None = None,
    ) -> TransferSet:
        """The set as confirmed for the stored `original` (its hash and content) by `by`, refused as
        `abeq check-set --confirm` refuses it (the same function: a set a run would refuse); with
        `trust_code`, its code is remembered as trusted by this user (as `--trust-code` there), when
        the desk's policy lets the person `signed_in` (if any) trust it."""
        if trust_code:
            policy.current(signed_in).check_trust()
        # dirty: the table (cases) changed the set
        base = sets.edit(self.s.ts, self.cases) if self.dirty and self.cases is not None else self.s.ts
        # the box says whether a thin set is accepted, whatever the stored set said
        base = base.model_copy(update={"thin_accepted": allow_thin})
        done = confirm_for_runs(base, original["content"], original["hash"], allow_thin=allow_thin, by=by)
        if trust_code:
            from ..execution.checks.code_trust import code_items, remember_trust

            remember_trust(code_items(base))
        return done


def edits(s: SetState, edited: pd.DataFrame, sections: list[str]) -> Edits:
    """Read the edited table against the stored set."""
    try:
        cases = editor.from_frame(edited, s.ts, sections=sections)
    except AbeqError as e:
        return Edits(s, None, e)
    out = Edits(s, cases, None)
    if out.dirty:
        out.unsaved = editor.unsaved(s.ts, cases)
    return out


def coverage_metrics(cov: CoverageReport) -> list[Metric]:
    """Sections covered, then the cases of each type."""
    covered = Metric(
        "Sections covered",
        f"{cov.coverage_pct:.0f}%",
        f"{len(cov.sections_covered)} of {len(cov.sections_identified)}",
    )
    return [covered] + [Metric(t, cov.per_type[t]) for t in CASE_TYPES]


def uncovered_text(cov: CoverageReport) -> str:
    uncovered = [s for s in cov.sections_identified if s not in cov.sections_covered]
    return "**Sections no case exercises:** " + "; ".join(md(s) for s in uncovered) if uncovered else ""


@dataclass
class ChecksSaid:
    caption: str
    warnings: list[str]
    errors: list[str]


def checks_said(shown: TransferSet) -> ChecksSaid:
    """What the set's checks come to: a count, warnings, and the problems a run would refuse."""
    a = check_audit.audit(shown)
    caption = (
        f"Checks: {a.cases} of {len(shown.cases)} cases carry {a.checks} ({a.code} run in code, {a.model} "
        f"graded by the judge model, {len(a.skipped)} skipped). A check the original passes and the "
        "candidate fails makes the case regressed."
        if a.checks
        else ""
    )
    warnings = [md(w) for w in a.warnings()]
    if a.scripts:
        state = "trusted" if a.code_trusted else "not trusted: a run is refused until you trust it"
        warnings.insert(
            0,
            md(f"The checks run {len(a.scripts)} script(s) on this machine ({state}): ")
            + "; ".join(
                md(f"case {i['case_id']}, check {i['check']}: {i['language']} {i['role']}") for i in a.scripts
            ),
        )
    return ChecksSaid(caption, warnings, [md(f"{p}: a run would refuse this set.") for p in a.problems])


def code_said(ts: TransferSet) -> str:
    """ "3 scripts (python, javascript)" when the set's checks run code nobody trusted yet, else ""."""
    from ..execution.checks.code_trust import trust_state

    items, trusted = trust_state(ts, False)
    if not items or trusted:
        return ""
    langs = ", ".join(sorted({i.language for i in items}))
    return f"{len(items)} script(s) ({langs})"
