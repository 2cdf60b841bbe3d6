"""Scoring for the comparator: inputs checked, totals computed in code (never taken from the model),
and the rubric as table rows."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import mean

from ..errors import InputError
from ..schemas import ComparisonResult, WeightedTotals, Winner
from ..vocab import CONTENT_CRITERIA, STRUCTURE_CRITERIA


@dataclass(frozen=True)
class Weights:
    """How overall is made from content and structure (abeq's default 60/40, not upstream's mean)."""

    content: float = 0.6
    structure: float = 0.4

    def __post_init__(self):
        if min(self.content, self.structure) < 0 or abs(self.content + self.structure - 1) > 1e-9:
            raise InputError(
                f"weights must be non-negative and add up to 1 (got {self.content} + {self.structure})"
            )


DEFAULT_WEIGHTS = Weights()


def check_text(text: str, what: str) -> str:
    """Refuse what cannot be compared: empty, binary or non-text input."""
    if not isinstance(text, str):
        raise InputError(f"{what} must be text")
    if "\x00" in text:
        raise InputError(f"{what} looks binary (it contains NUL bytes)", hint="Pass a UTF-8 text file.")
    if not text.strip():
        raise InputError(f"{what} is empty", hint="Pass text with content.")
    return text


def read_assertions(path: str) -> list[dict]:
    """An assertions file (`abeq compare --assertions`): a JSON list of strings or of {"id", "text"}."""
    import json

    from ..documents import read_text_file
    from ..sets.formats import load_json

    text = read_text_file(path, what="assertions file")
    try:
        data = load_json(text, path)  # a number too long to read, half a character: named
    except json.JSONDecodeError as e:
        raise InputError(
            f"not valid JSON ({e.msg}, line {e.lineno})",
            path=path,
            hint='Give a JSON list of strings or of {"id": …, "text": …} objects.',
        ) from None
    return normalize_assertions(data, path=path)


def normalize_assertions(items, path: str | None = None) -> list[dict]:
    """A JSON list of strings or of {id, text} → [{id, text}], ids filled in (a1, a2, …) and unique."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise InputError('assertions must be a JSON list of strings or of {"id", "text"} objects', path=path)
    out, seen = [], set()
    for i, item in enumerate(items):
        if isinstance(item, str):
            aid, text = f"a{i + 1}", item
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            aid, text = str(item.get("id") or f"a{i + 1}"), item["text"]
        else:
            raise InputError(
                f'assertion {i + 1} is neither a string nor an object with a "text" string', path=path
            )
        if not text.strip():
            raise InputError(f"assertion {i + 1} is empty", path=path)
        if aid in seen:
            raise InputError(f"assertion id '{aid}' is used twice", path=path)
        seen.add(aid)
        out.append({"id": aid, "text": text.strip()})
    return out


def _scores(rubric, side: str) -> tuple[list[float], list[float]]:
    c = [getattr(getattr(rubric.content_quality, k), side) for k in CONTENT_CRITERIA]
    s = [getattr(getattr(rubric.structural_quality, k), side) for k in STRUCTURE_CRITERIA]
    return c, s


def weighted_totals(rubric, weights: Weights = DEFAULT_WEIGHTS) -> WeightedTotals:
    """Content = mean of content criteria, structure = mean of structural ones, overall weighted."""
    out = {}
    for side in ("a", "b"):
        c, s = _scores(rubric, side)
        content, structure = mean(c), mean(s)
        out[side] = {
            "content": round(content, 4),
            "structure": round(structure, 4),
            "overall": round(weights.content * content + weights.structure * structure, 4),
        }
    return WeightedTotals.model_validate(out)


def _rubric_winner(t: WeightedTotals) -> Winner:
    return "A" if t.a.overall > t.b.overall else "B" if t.b.overall > t.a.overall else "tie"


def rubric_rows(result: ComparisonResult) -> list[dict]:
    """One row per criterion for a table: both orders and the mean, all in input terms (a, b)."""
    rows = []
    for group, names in (("content", CONTENT_CRITERIA), ("structure", STRUCTURE_CRITERIA)):
        gkey = f"{group}_quality" if group == "content" else "structural_quality"
        row_mean = getattr(result.rubric_scores, gkey)
        for n in names:
            row = {"group": group, "criterion": n}
            for o in result.orders:
                c = getattr(getattr(o.judgement.rubric_scores, gkey), n)
                a, b = (c.a, c.b) if o.shown["A"] == "a" else (c.b, c.a)
                row[f"a (order {o.order})"], row[f"b (order {o.order})"] = a, b
            m = getattr(row_mean, n)
            row["a (mean)"], row["b (mean)"], row["note"] = m.a, m.b, m.note
            rows.append(row)
    return rows
