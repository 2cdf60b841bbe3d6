"""Reviewers' decisions the gate honours: an override or an agreement made on a case stands for the
same original, candidate and case content in a later gate run, which then calls no model for it.

Decisions come from the store the gate runs in (a shared store: the Action's cache) and from a file
the repository keeps (`abeq export --overrides decisions.json`, named by `overrides =` in abeq.toml),
for a store that is not shared. A decision is keyed by the content hashes, never by run ids.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..schemas import Case
from ..sets.confirmation import case_identity
from ..vocab import is_verdict

FORMAT = "abeq-decisions"
VERSION = 1
_FIELDS = ("action", "verdict", "judge_verdict", "reviewer", "reason", "created_at")


def case_hash(case: Case) -> str:
    """A case's content: what can change what a run of it produces (sets.confirmation.case_identity)."""
    blob = json.dumps(case_identity(case), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


Key = tuple[str, str, str]  # original hash, candidate hash, case hash


def from_store(store) -> list[dict[str, Any]]:
    """Every reviewer decision in effect in the store (the latest per run and case), with its keys."""
    latest: dict[tuple[int, str], dict] = {}
    for o in store.ledger.all_overrides():
        latest[(o["run_id"], o["case_id"])] = dict(o)
    out, sets = [], {}
    for (run_id, case_id), o in latest.items():
        run = store.log.run(run_id)
        if run is None:
            continue
        h = run["transfer_set_hash"]
        if h not in sets:
            sets[h] = store.inputs.transfer_set(h)
        ts = sets[h]
        case = next((c for c in ts.cases if c.id == case_id), None) if ts else None
        if case is None:
            continue
        out.append(
            {
                "original_hash": run["original_hash"],
                "candidate_hash": run["candidate_hash"],
                "case_id": case_id,
                "case_hash": case_hash(case),
                "run_id": run_id,
                **{k: o.get(k) for k in _FIELDS},
            }
        )
    return out


def merged(*groups: list[dict]) -> list[dict]:
    """The decisions of every group, one per (original, candidate, case) content; the latest made
    wins (as the gate reads them: Decisions.of)."""
    return list(Decisions.of(*groups).by_key.values())


def dump(decisions: list[dict]) -> str:
    return json.dumps(
        {"format": FORMAT, "version": VERSION, "decisions": decisions}, indent=2, ensure_ascii=False
    )


def parse(text: str, where: str) -> list[dict[str, Any]]:
    """A decisions file's entries; an InputError naming the file and the entry at fault."""
    hint = "Write it with `abeq export --overrides FILE`."
    try:
        data = json.loads(text)
    except ValueError as e:
        raise InputError(f"not JSON: {e}", path=where, hint=hint) from None
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or not isinstance(data.get("decisions"), list)
    ):
        raise InputError(f"not an abeq decisions file (format {FORMAT!r})", path=where, hint=hint)
    for i, d in enumerate(data["decisions"], 1):
        keys = ("original_hash", "candidate_hash", "case_hash", "case_id", "verdict", "reviewer")
        if not isinstance(d, dict) or not all(isinstance(d.get(k), str) and d[k] for k in keys):
            raise InputError(f"decision {i} lacks one of {', '.join(keys)}", path=where, hint=hint)
        if not is_verdict(d["verdict"]):
            raise InputError(f"decision {i}: unknown verdict {d['verdict']!r}", path=where, hint=hint)
    return data["decisions"]


@dataclass
class Decisions:
    """Decisions by (original, candidate, case) content; the latest made wins."""

    by_key: dict[Key, dict]

    @classmethod
    def of(cls, *groups: list[dict]) -> Decisions:
        by: dict[Key, dict] = {}
        for d in sorted((d for g in groups for d in g), key=lambda d: str(d.get("created_at") or "")):
            by[(d["original_hash"], d["candidate_hash"], d["case_hash"])] = d
        return cls(by)

    def for_case(self, original_hash: str, candidate_hash: str, case: Case) -> dict | None:
        return self.by_key.get((original_hash, candidate_hash, case_hash(case)))
