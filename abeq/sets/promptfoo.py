"""promptfoo configs and test files as abeq cases (types are supplied later: see imported.py)."""

from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path
from typing import Any

from ..documents import read_text_file
from ..errors import InputError
from ._common import (
    MAX_CASES,
    Imported,
    _as_list,
    _declared_type,
    _json_text,
    _kind,
    _need_mapping,
    slugify,
    unique_id,
)
from .formats import parse_text
from .parse import MAX_SET_BYTES, format_of

_TEXT_SUFFIXES = {"", ".txt", ".md", ".markdown", ".json", ".yaml", ".yml", ".csv", ".html", ".xml", ".log"}
_CODE_SUFFIXES = {".js", ".mjs", ".cjs", ".ts", ".py"}


class PromptfooReader:
    """promptfoo configs and test files: `tests:` lists (inline, file:// references, globs), YAML,
    JSON, JSONL and promptfoo-style CSV, with `defaultTest` vars and asserts applied."""

    def __init__(self, path: str):
        self.path = path
        self.warnings: list[str] = []
        self.tests: list[tuple[str, dict]] = []  # (label, test) in order
        self.default: dict = {}

    def read(self, text: str) -> Imported:
        fmt = format_of(self.path)
        base = Path(self.path).resolve().parent
        if fmt == "yaml" or fmt == "json":
            data = parse_text(text, fmt, self.path)
            if isinstance(data, dict):
                self._config(data, base)
            else:
                self._add_tests(data, base, "", depth=0)
        elif fmt in ("jsonl", "csv"):
            self._add_tests(self._load_text(text, fmt, self.path), base, "", depth=0)
        else:
            raise InputError(f"a promptfoo file is YAML, JSON, JSONL or CSV, not .{fmt}", path=self.path)
        if not self.tests:
            raise InputError(
                "no tests to import",
                path=self.path,
                hint="A promptfoo config lists its cases under 'tests:' (inline or as file:// references).",
            )
        return self._cases()

    # ------------------------------------------------ gathering tests
    def _config(self, data: dict, base: Path) -> None:
        if "tests" not in data:
            raise InputError(
                "this promptfoo config has no 'tests'",
                path=self.path,
                hint="Import the file that holds the tests, or add them under 'tests:'.",
            )
        dt = data.get("defaultTest") or {}
        if isinstance(dt, str):
            loaded = self._load_ref(dt, base, "defaultTest")
            dt = loaded[0][1] if loaded else {}
        if not isinstance(dt, dict):
            raise InputError("defaultTest must be a mapping", path=self.path)
        self.default = dt
        if data.get("scenarios"):
            self.warnings.append("'scenarios' are not imported; only 'tests' are")
        self._add_tests(data["tests"], base, "", depth=0)

    def _add_tests(self, tests: Any, base: Path, origin: str, depth: int) -> None:
        if depth > 4:
            raise InputError("file:// references nest too deeply (a loop?)", path=self.path)
        if tests is None:
            return
        if isinstance(tests, (str, dict)):
            tests = [tests]
        if not isinstance(tests, list):
            raise InputError("'tests' must be a list of tests or file:// references", path=self.path)
        for item in tests:
            if isinstance(item, str):
                for ref_path, data in self._load_ref(item, base, "tests"):
                    # references inside a referenced file are relative to that file, as in promptfoo
                    self._add_tests(data, ref_path.parent, ref_path.name, depth + 1)
            elif isinstance(item, dict) and "path" in item and "vars" not in item:
                self.warnings.append(
                    f"skipped generated tests from {item['path']}: promptfoo has to run that code; "
                    "export the tests it makes to a file and import that"
                )
            elif isinstance(item, dict):
                n = len(self.tests) + 1
                self.tests.append((f"test {n}" + (f" (from {origin})" if origin else ""), item))
            else:
                raise InputError(f"test {len(self.tests) + 1} is not a mapping", path=self.path)
            if len(self.tests) > MAX_CASES:
                raise InputError(f"more than {MAX_CASES} tests", path=self.path)

    def _load_ref(self, ref: str, base: Path, what: str) -> list[tuple[Path, Any]]:
        """A file:// reference (or glob) as [(file, parsed content)]; [] when it cannot be read here."""
        if ref.startswith(("huggingface://", "http://", "https://")):
            self.warnings.append(f"skipped {what} from {ref}: only local files can be imported")
            return []
        rel = ref.removeprefix("file://")
        if Path(rel.split(":", 1)[0]).suffix.lower() in _CODE_SUFFIXES:  # file://gen.py:create_tests
            self.warnings.append(
                f"skipped {what} from {ref}: promptfoo makes those by running code; "
                "export the tests it makes to a file and import that"
            )
            return []
        if any(ch in rel for ch in "*?["):
            found = sorted(p for p in base.glob(rel) if p.is_file())
            if not found:
                raise InputError(f"{what}: no files match {ref}", path=self.path)
        else:
            found = [base / rel]
            if not found[0].is_file():
                raise InputError(f"{what}: {ref} does not exist (looked in {base})", path=self.path)
        return [(p, self._load_file(p)) for p in found]

    def _load_file(self, p: Path):
        fmt = format_of(p)
        if fmt not in ("yaml", "json", "jsonl", "csv"):
            raise InputError(
                f"tests in {p.name}: promptfoo test files are YAML, JSON, JSONL or CSV", path=self.path
            )
        return self._load_text(
            read_text_file(p, what="promptfoo test file", max_bytes=MAX_SET_BYTES), fmt, str(p)
        )

    def _load_text(self, text: str, fmt: str, where: str):
        if fmt == "csv":
            return _promptfoo_csv(text, where)
        data = parse_text(text, fmt, where)
        if isinstance(data, dict) and "tests" in data:  # a referenced file may itself be a config
            return data["tests"]
        return data

    # ------------------------------------------------ tests -> cases
    def _cases(self) -> Imported:
        dvars = self.default.get("vars") or {}
        dasserts = _as_list(self.default.get("assert"))
        dmeta = self.default.get("metadata") or {}
        for key, val in (("vars", dvars), ("metadata", dmeta)):
            _need_mapping(val, "defaultTest", key, self.path)
        cases, labels, taken = [], [], set()
        for label, test in self.tests:
            tvars = test.get("vars") or {}
            _need_mapping(tvars, label, "vars", self.path)
            _need_mapping(test.get("metadata") or {}, label, "metadata", self.path)
            if isinstance(test.get("description"), (dict, list)):
                raise InputError(
                    f"{label}: 'description' must be text, not a {_kind(test['description'])}",
                    path=self.path,
                    hint="Write the test's description as one line of text.",
                )
            merged = {**dvars, **tvars}
            if not merged:
                raise InputError(
                    f"{label}: has no vars, so there is no input to give the runner",
                    path=self.path,
                    hint="Each test needs vars; with one var its value is the input, with several "
                    "the input lists them as 'name: value' lines.",
                )
            expectations = [x for a in [*dasserts, *_as_list(test.get("assert"))] for x in _assertion_text(a)]
            meta = {**dmeta, **(test.get("metadata") or {})}
            ctype = _declared_type(meta, self.path, label)
            combos = self._combinations(merged, label)
            for k, combo in enumerate(combos):
                inp = _input_text(combo)
                if not inp.strip():
                    raise InputError(
                        f"{label}: its vars are empty, so there is no input to give the runner",
                        path=self.path,
                    )
                desc = test.get("description")
                want = slugify(str(desc)) if desc else ""
                want = want or f"case-{len(cases) + 1}"
                cid = unique_id(want, taken)
                if desc and cid != want and len(combos) == 1:
                    self.warnings.append(f"{label}: id '{want}' was already taken; named it '{cid}'")
                case: dict = {"id": cid, "input": inp, "expectations": expectations, "status": "user-added"}
                if ctype:
                    case["type"] = ctype
                cases.append(case)
                labels.append(label + (f", combination {k + 1}" if len(combos) > 1 else ""))
        return Imported(self.path, "promptfoo", cases, labels, self.warnings)

    def _combinations(self, merged: dict, label: str) -> list[dict]:
        """promptfoo runs every combination of list-of-string vars; file:// values are read here."""
        keys, choices = [], []
        base = Path(self.path).resolve().parent
        for k, v in merged.items():
            if isinstance(v, str) and v.startswith("file://"):
                options = self._var_files(v, base, label, k)
            elif isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                options = v
            else:
                options = [v]
            keys.append(k)
            choices.append(options)
        combos = [dict(zip(keys, vals)) for vals in itertools.product(*choices)]
        if len(combos) > 1:
            self.warnings.append(f"{label}: list-valued vars make {len(combos)} combinations; each is a case")
        if len(combos) > MAX_CASES:
            raise InputError(f"{label}: its vars make {len(combos)} combinations", path=self.path)
        return combos

    def _var_files(self, ref: str, base: Path, label: str, key: str) -> list[str]:
        rel = ref.removeprefix("file://")
        paths = sorted(base.glob(rel)) if any(ch in rel for ch in "*?[") else [base / rel]
        out = []
        for p in paths:
            if p.suffix.lower() in _TEXT_SUFFIXES and p.is_file():
                out.append(read_text_file(p, what=f"var '{key}' file").rstrip("\n"))
            else:
                why = "does not exist" if not p.exists() else "is not a text file abeq can pass to the runner"
                self.warnings.append(
                    f"{label}: var '{key}' refers to {p.name}, which {why}; kept the reference as text"
                )
                out.append(f"file://{p.name if not p.exists() else p}")
        return out or [ref]


def _promptfoo_csv(text: str, where: str) -> list[dict]:
    """promptfoo's CSV tests: plain columns are vars, __expected* asserts, __description, __metadata:*."""
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames:
        raise InputError("the CSV has no header row", path=where)
    tests = []
    for n, row in enumerate(reader, start=2):
        if None in row:
            raise InputError(f"row {n} has more cells than the header", path=where)
        t: dict = {"vars": {}, "assert": [], "metadata": {}}
        for col, val in row.items():
            val = val or ""
            if col.startswith("__expected"):
                if val.strip():
                    t["assert"].append(val.strip())
            elif col == "__description":
                t["description"] = val
            elif col.startswith("__metadata:"):
                t["metadata"][col.split(":", 1)[1].rstrip("[]")] = val
            elif not col.startswith("__"):
                t["vars"][col] = val
        tests.append(t)
    return tests


def _assertion_text(a: Any) -> list[str]:
    if isinstance(a, str):
        return [a]
    if not isinstance(a, dict):
        return [_json_text(a)]
    t = str(a.get("type", ""))
    if t == "assert-set":
        return [x for inner in _as_list(a.get("assert")) for x in _assertion_text(inner)]
    head = t + (f" (threshold {a['threshold']})" if "threshold" in a else "")
    v = a.get("value")
    if v is None:
        return [head or _json_text(a)]
    if not isinstance(v, str):
        v = _json_text(v)
    return [f"{head}: {v}" if head else v]


def _input_text(vars_: dict) -> str:
    vals = {k: (v if isinstance(v, str) else _json_text(v)) for k, v in vars_.items()}
    if len(vals) == 1:
        return next(iter(vals.values()))
    return "\n".join(f"{k}: {v}" for k, v in vals.items())
