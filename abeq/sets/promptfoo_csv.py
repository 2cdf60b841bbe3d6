"""promptfoo's CSV tests, read the way promptfoo reads them (its src/csv.ts, testCaseFromCsvRow).

Column names are trimmed. Plain columns are vars. Special columns (two underscores):
- `__expected`, `__expected1`, … : one assert each, in column order, in promptfoo's string forms
  (promptfoo_asserts.from_string); an empty cell adds none;
- `__config:__expected:KEY` / `__config:__expectedN:KEY`: KEY (promptfoo accepts `threshold`) set
  on the first / the N-th assert, and copied into the test's metadata as promptfoo does;
- `__metric` names every assert of the row; `__threshold` is the test's threshold (set when it is
  a non-zero number); `__description`; `__metadata:NAME` (NAME[] is a list split at commas, `\\,`
  being a comma); `__prefix` / `__suffix` (the test's options); `__providerOutput`.
Nothing special ever becomes a var: a `__config` text in the input would change what the runner
is given (and its cache key) while the threshold is lost.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ..errors import InputError
from .promptfoo_asserts import from_string

_SPECIAL = (
    "expected",
    "prefix",
    "suffix",
    "description",
    "providerOutput",
    "metric",
    "threshold",
    "metadata",
)
_CONFIG_KEYS = ("threshold",)  # what promptfoo's __config columns accept
_CONFIG = re.compile(r"^__config:(__expected(\d*)):([^:]*)$")


def promptfoo_csv(text: str, where: str, warnings: list[str]) -> list[dict]:
    """The tests of a promptfoo CSV file, one per row."""
    reader = csv.reader(io.StringIO(text))
    header = [c.strip() for c in next(reader, [])]
    if not any(header):
        raise InputError("the CSV has no header row", path=where)
    name = Path(where).name
    for col in header:
        if not col.startswith("__") and any(col.startswith(f"_{k}") for k in (*_SPECIAL, "config")):
            warnings.append(
                f"{name}: column '{col}' has one underscore, so it is read as a var "
                f"(promptfoo does the same); did you mean '_{col}'?"
            )
    if "__metadata" in header:
        warnings.append(f"{name}: column '__metadata' has no key (write __metadata:NAME); it is ignored")
    configs = [_config_column(col, where) for col in header]
    tests = []
    for n, cells in enumerate(reader, start=2):
        if not cells:
            continue
        if len(cells) > len(header):
            raise InputError(f"row {n} has more cells than the header", path=where)
        row = dict(zip(header, [*cells, *[""] * (len(header) - len(cells))]))
        tests.append(_test(row, configs, where, n))
    return tests


def _config_column(col: str, where: str) -> tuple[int, str] | None:
    """(index of the assert, key) for a __config column; None for any other column."""
    if not col.startswith("__config:"):
        return None
    m = _CONFIG.match(col)
    if not m:
        raise InputError(
            f"column '{col}' is not a __config column promptfoo reads",
            path=where,
            hint="Write __config:__expected:threshold (the first assert) or __config:__expected2:threshold.",
        )
    if m.group(3) not in _CONFIG_KEYS:
        raise InputError(
            f"column '{col}' sets '{m.group(3)}'; promptfoo's __config columns set only "
            + ", ".join(_CONFIG_KEYS),
            path=where,
            hint="Rename the column to __config:__expected…:threshold, or move the setting into a YAML test.",
        )
    if m.group(2) in ("", None):
        return 0, m.group(3)
    if int(m.group(2)) < 1:
        raise InputError(f"column '{col}': assert numbers start at 1", path=where)
    return int(m.group(2)) - 1, m.group(3)


def _test(row: dict[str, str], configs: list, where: str, n: int) -> dict:
    t: dict = {"vars": {}, "assert": [], "metadata": {}}
    metric: str | None = None
    assert_configs: dict[int, dict[str, float]] = {}  # an assert's index -> its threshold etc.
    for (col, val), cfg in zip(row.items(), configs):
        if col.startswith("__expected"):
            if val.strip():
                t["assert"].append(from_string(val.strip()))  # promptfoo trims the cell first
        elif cfg is not None:
            index, key = cfg
            try:
                number = float(val)
            except ValueError:
                number = float("nan")
            if number != number or number in (float("inf"), float("-inf")):
                raise InputError(
                    f"row {n}: '{col}' is {val!r}, not a number", path=where, hint="Write a number like 0.8."
                )
            assert_configs.setdefault(index, {})[key] = number
        elif col == "__description":
            t["description"] = val
        elif col.startswith("__metadata:"):
            _metadata(col.split(":", 1)[1], val, t["metadata"])
        elif col == "__metadata":
            continue
        elif col == "__threshold":
            try:
                if float(val):  # promptfoo sets a test threshold only when it is a non-zero number
                    t["threshold"] = float(val)
            except ValueError:
                pass
        elif col == "__metric":
            metric = val
        elif col in ("__prefix", "__suffix"):
            t.setdefault("options", {})[col[2:]] = val
        elif col == "__providerOutput":
            t["providerOutput"] = val
        else:
            t["vars"][col] = val
    for i, a in enumerate(t["assert"]):
        if metric:
            a["metric"] = metric
        for key, value in assert_configs.get(i, {}).items():
            a[key] = value
            t["metadata"][key] = value  # promptfoo copies each one onto the test's metadata
    if not t["metadata"]:
        del t["metadata"]
    return t


def _metadata(key: str, val: str, meta: dict) -> None:
    if key.endswith("[]"):
        items = [s.replace("\\,", ",").strip() for s in re.split(r"(?<!\\),", val)]
        if any(items):
            meta[key[:-2]] = [s for s in items if s]
    elif val.strip():
        meta[key] = val
