"""Transfer sets as the rows of the desk's table editor, and back (validated by transferset)."""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from .. import transferset
from ..errors import InputError
from ..schemas import Case, TransferSet

COLUMNS = ["id", "type", "input", "exercises_sections", "gate_responses", "status"]


def to_frame(ts: TransferSet) -> pd.DataFrame:
    """One row per case; sections as comma-separated text, gate responses as JSON text."""
    rows = [{"id": c.id, "type": c.type, "input": c.input, "exercises_sections": ", ".join(c.exercises_sections),
             "gate_responses": json.dumps([g.model_dump() for g in c.gate_responses], ensure_ascii=False)
             if c.gate_responses else "",
             "status": c.status} for c in ts.cases]
    return pd.DataFrame(rows, columns=COLUMNS).astype(object)


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v)


def from_frame(df: pd.DataFrame, ts: TransferSet) -> list[Case]:
    """The edited rows as cases; an InputError names the row and field of the first problem."""
    old = {c.id: c for c in ts.cases}
    raw = []
    for n, rec in enumerate(df.to_dict("records"), start=1):
        cells = {k: _cell(rec.get(k)).strip() for k in COLUMNS}
        if not any(cells[k] for k in COLUMNS if k != "status"):
            continue  # an added row left blank
        gates: Any = []
        if cells["gate_responses"]:
            try:
                gates = json.loads(cells["gate_responses"])
            except json.JSONDecodeError as e:
                raise InputError(f"row {n}: gate_responses is not valid JSON ({e.msg})",
                                 hint='Write a JSON list, e.g. [{"pattern": "confirm", "response": "yes"}].') from None
            if isinstance(gates, dict):
                gates = [gates]
        case = {"id": cells["id"], "type": cells["type"], "input": _cell(rec.get("input")),
                "exercises_sections": [s.strip() for s in cells["exercises_sections"].split(",") if s.strip()],
                "gate_responses": gates}
        prev = old.get(cells["id"])
        if prev is not None:  # fields the table does not show travel with the case
            case["status"] = prev.status
            case["expectations"] = prev.expectations
        raw.append(case)
    if not raw:
        raise InputError("the table has no cases", hint="Add at least one row.")
    return transferset.from_obj({"cases": raw}, "transfer-set table").cases


def changed(ts: TransferSet, cases: list[Case]) -> bool:
    """True when the table differs from the stored set in anything the runner or judge sees."""
    return transferset.set_hash(ts.model_copy(update={"cases": cases})) != transferset.set_hash(ts)


def import_text(text: str, filename: str, original_hash: str) -> TransferSet:
    """A set from an uploaded file; a confirmation made for a different original does not carry over."""
    fmt = transferset.format_of(filename)
    ts = transferset.from_obj(transferset.parse_text(text, fmt, filename), filename)
    if ts.user_confirmed and ts.document_hash != original_hash:
        ts = ts.model_copy(update={"user_confirmed": False, "confirmation_timestamp": None})
    return ts
