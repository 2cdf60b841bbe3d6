"""Transfer sets from the files people already have (promptfoo, skill-creator, abeq's own formats), and back out.

Case types. promptfoo tests and skill-creator evals have no field for abeq's case type, and a
type is what makes a set runnable (one of each is required), so guessing one would quietly
make the set look stronger than it is. Reading a file therefore gives an `Imported`, whose
`untyped` lists every case that has no type. `resolve()` turns it into a TransferSet once a
person has supplied them, per case (the desk asks) or all at once (`--default-type`); until
then it raises MissingTypesError naming the cases. A case whose type was supplied at import is
marked `user-modified` (a person changed what the source said) and is named in the warnings;
cases typed in the source keep their status (`user-added` when the file gives none). A type
the source does declare is read: promptfoo `metadata.case_type` (or `metadata.type` when its
value is one of abeq's types), and a `case_type` key on a skill-creator eval.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .documents import normalize_newlines, read_text_file
from .errors import InputError, MissingTypesError
from .schemas import CASE_TYPES, TransferSet
from .transferset import MAX_SET_BYTES, dump, format_of, from_obj, parse_located, parse_text

FORMATS: tuple[str, ...] = ("promptfoo", "skill-creator", "csv", "yaml", "jsonl", "json")
MAX_CASES = 5000  # a var matrix can multiply; past this the file is not a transfer set
_TEXT_SUFFIXES = {"", ".txt", ".md", ".markdown", ".json", ".yaml", ".yml", ".csv", ".html", ".xml", ".log"}
_CODE_SUFFIXES = {".js", ".mjs", ".cjs", ".ts", ".py"}


@dataclass
class Imported:
    """Cases read from a file, before a person has supplied the types the source lacked."""

    path: str
    source: str
    cases: list[dict]
    labels: list[str]
    warnings: list[str] = field(default_factory=list)
    rest: dict = field(default_factory=dict)  # set-level fields, for abeq's own formats

    @property
    def untyped(self) -> list[str]:
        """Ids of the cases that have no type."""
        return [str(c.get("id", "")) for c in self.cases if isinstance(c, dict) and not c.get("type")]

    def resolve(self, types: Optional[dict[str, str]] = None,
                default_type: Optional[str] = None) -> tuple[TransferSet, list[str]]:
        """The transfer set, with each missing type taken from `types` (by id) or `default_type`."""
        types = dict(types or {})
        for t in [*types.values(), *([default_type] if default_type else [])]:
            if t not in CASE_TYPES:
                raise InputError(f"'{t}' is not a case type", path=self.path, hint=f"Use one of {', '.join(CASE_TYPES)}.")
        cases, missing, defaulted, chosen = [], [], [], []
        for c in self.cases:
            if isinstance(c, dict) and not c.get("type"):
                cid = str(c.get("id", ""))
                t = types.get(cid) or default_type
                if t is None:
                    missing.append(cid)
                    continue
                (chosen if cid in types else defaulted).append(cid)
                c = {**c, "type": t, "status": "user-modified"}
            cases.append(c)
        if missing:
            raise MissingTypesError(
                f"{len(missing)} case(s) have no type and {_no_type_reason(self.source)}: {_names(missing)}",
                case_ids=missing, path=self.path,
                hint=f"Give each a type ({', '.join(CASE_TYPES)}){_where_types_go(self.source)}, or pass "
                     "--default-type TYPE to give them all one (marked user-modified; review before confirming).")
        notes = list(self.warnings)
        if defaulted:
            notes.append(f"gave {len(defaulted)} case(s) the default type '{default_type}' (marked user-modified; "
                         f"check each before confirming): {_names(defaulted)}")
        rest = dict(self.rest)
        if (defaulted or chosen) and rest.get("user_confirmed"):
            # supplying a type is an edit; a confirmed set that was edited is no longer confirmed
            rest.update(user_confirmed=False, confirmation_timestamp=None, confirmed_hash=None)
            notes.append("the file was a confirmed set; with types added it is unconfirmed again")
        return from_obj({**rest, "cases": cases}, self.path, self.labels), notes


def import_set(fmt: str, path: str | Path, default_type: Optional[str] = None,
               types: Optional[dict[str, str]] = None) -> tuple[TransferSet, list[str]]:
    """Read a transfer set in `fmt`; raises MissingTypesError when cases lack a type nobody supplied."""
    return read_source(fmt, path).resolve(types, default_type)


def read_source(fmt: str, path: str | Path, text: Optional[str] = None) -> Imported:
    """Read cases from a file (or from `text`, named `path`, e.g. an upload) without resolving types."""
    p = str(path)
    if fmt not in FORMATS:
        raise InputError(f"unknown import format '{fmt}'", path=p, hint=f"Use one of {', '.join(FORMATS)}.")
    if text is None:
        text = read_text_file(p, what=f"{fmt} file", max_bytes=MAX_SET_BYTES)
    text = normalize_newlines(text)  # an upload reads like the same file on disk
    if fmt == "promptfoo":
        return _PromptfooReader(p).read(text)
    if fmt == "skill-creator":
        return _read_skill_creator(p, text)
    return _read_abeq(fmt, p, text)


# ---------------------------------------------------------------- abeq's own formats
def _read_abeq(fmt: str, path: str, text: str) -> Imported:
    data, labels = parse_located(text, fmt, path)
    if isinstance(data, list):
        data = {"cases": data}
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise InputError("a transfer set must be an object with a 'cases' list (or a list of cases)", path=path,
                         hint="See SPEC §7 for the shape; for promptfoo or skill-creator files use --from promptfoo|skill-creator.")
    cases = []
    for c in data["cases"]:
        if isinstance(c, dict) and c.get("type") in (None, ""):
            c = {k: v for k, v in c.items() if k != "type"}  # a blank cell is a missing type, not a bad one
        cases.append(c)
    rest = {k: v for k, v in data.items() if k != "cases"}
    return Imported(path, fmt, cases, labels or [f"case {i + 1}" for i in range(len(cases))], rest=rest)


# ---------------------------------------------------------------- skill-creator evals.json
# skill-creator's evals.json fields (references/schemas.md), plus the type keys abeq reads
_EVAL_FIELDS = ("id", "prompt", "expected_output", "files", "expectations", "case_type", "abeq_type", "type")


def _read_skill_creator(path: str, text: str) -> Imported:
    data = parse_text(text, "json", path)
    evals = data.get("evals") if isinstance(data, dict) else data
    if not isinstance(evals, list):
        raise InputError("a skill-creator file has an 'evals' list", path=path,
                         hint='Expected {"skill_name": ..., "evals": [{"id": 1, "prompt": ..., "expectations": [...]}]}.')
    if not evals:
        raise InputError("the 'evals' list is empty: nothing to import", path=path)
    cases, labels, warnings = [], [], []
    for i, ev in enumerate(evals):
        label = f"evals[{i}]" + (f" (id {ev.get('id')})" if isinstance(ev, dict) and "id" in ev else "")
        if not isinstance(ev, dict):
            raise InputError(f"{label} is not an object", path=path)
        unknown = [k for k in ev if k not in _EVAL_FIELDS]
        if unknown:  # a misspelt 'expectations' would otherwise drop every check without a word
            raise InputError(f"{label} has unknown field(s): {', '.join(map(str, unknown))}", path=path,
                             hint=f"An eval's fields are {', '.join(_EVAL_FIELDS)}; rename or remove the others.")
        prompt = ev.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise InputError(f"{label}: 'prompt' is missing or empty; it is the case input", path=path)
        _check_eval_types(ev, label, path)
        if "id" in ev and ev["id"] not in (None, ""):
            cid = f"eval-{ev['id']}"
        else:
            cid = f"eval-{i + 1}"
            warnings.append(f"{label} has no id; named it '{cid}' by position")
        expectations = ev.get("expectations", [])
        if isinstance(expectations, str):
            expectations = [expectations]
        if not isinstance(expectations, list) or not all(isinstance(x, str) for x in expectations):
            raise InputError(f"{label}: 'expectations' must be a list of statements", path=path)
        expected = ev.get("expected_output")
        if isinstance(expected, str) and expected.strip():
            expectations = [f"Expected output: {expected.strip()}", *expectations]
        inp = prompt
        files = ev.get("files") or []
        if files:
            # The runner gets text only; naming the files keeps the task as the skill saw it.
            inp += "\n\nInput files: " + ", ".join(map(str, files))
            warnings.append(f"{label} comes with files ({', '.join(map(str, files))}); abeq names them in the input "
                            "but does not attach their contents")
        case: dict = {"id": cid, "input": inp, "expectations": expectations, "status": "user-added"}
        t = _declared_type(ev, path, label)
        if t:
            case["type"] = t
        cases.append(case)
        labels.append(label)
    return Imported(path, "skill-creator", cases, labels, warnings)


def _check_eval_types(ev: dict, label: str, path: str) -> None:
    """A field of the wrong type is refused, not read as something else (a string of files as letters)."""
    eid = ev.get("id")
    if isinstance(eid, bool) or not isinstance(eid, (int, str, type(None))):
        raise InputError(f"{label}: 'id' must be a number or text, not a {_kind(eid)}", path=path,
                         hint='Number the evals: "id": 1, "id": 2, ...')
    expected = ev.get("expected_output")
    if expected is not None and not isinstance(expected, str):
        raise InputError(f"{label}: 'expected_output' must be text, not a {_kind(expected)}", path=path,
                         hint='Write "expected_output": "what a good answer does".')
    files = ev.get("files")
    if isinstance(files, str):
        raise InputError(f"{label}: 'files' must be a list of file names, not text", path=path,
                         hint=f"Write \"files\": [{json.dumps(files[:60], ensure_ascii=False)}] (one name per item).")
    if files is not None and (not isinstance(files, list) or not all(isinstance(f, str) for f in files)):
        raise InputError(f"{label}: 'files' must be a list of file names (text), not a {_kind(files)}"
                         + ("" if not isinstance(files, list) else " holding other values"), path=path,
                         hint='Write "files": ["input.csv", "notes.md"].')


# ---------------------------------------------------------------- promptfoo
class _PromptfooReader:
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
            raise InputError("no tests to import", path=self.path,
                             hint="A promptfoo config lists its cases under 'tests:' (inline or as file:// references).")
        return self._cases()

    # ------------------------------------------------ gathering tests
    def _config(self, data: dict, base: Path) -> None:
        if "tests" not in data:
            raise InputError("this promptfoo config has no 'tests'", path=self.path,
                             hint="Import the file that holds the tests, or add them under 'tests:'.")
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
                self.warnings.append(f"skipped generated tests from {item['path']}: promptfoo has to run that code; "
                                     "export the tests it makes to a file and import that")
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
            self.warnings.append(f"skipped {what} from {ref}: promptfoo makes those by running code; "
                                 "export the tests it makes to a file and import that")
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
            raise InputError(f"tests in {p.name}: promptfoo test files are YAML, JSON, JSONL or CSV", path=self.path)
        return self._load_text(read_text_file(p, what="promptfoo test file", max_bytes=MAX_SET_BYTES), fmt, str(p))

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
                raise InputError(f"{label}: 'description' must be text, not a {_kind(test['description'])}",
                                 path=self.path, hint="Write the test's description as one line of text.")
            merged = {**dvars, **tvars}
            if not merged:
                raise InputError(f"{label}: has no vars, so there is no input to give the runner", path=self.path,
                                 hint="Each test needs vars; with one var its value is the input, with several "
                                      "the input lists them as 'name: value' lines.")
            expectations = [x for a in [*dasserts, *_as_list(test.get("assert"))] for x in _assertion_text(a)]
            meta = {**dmeta, **(test.get("metadata") or {})}
            ctype = _declared_type(meta, self.path, label)
            combos = self._combinations(merged, label)
            for k, combo in enumerate(combos):
                inp = _input_text(combo)
                if not inp.strip():
                    raise InputError(f"{label}: its vars are empty, so there is no input to give the runner",
                                     path=self.path)
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
                self.warnings.append(f"{label}: var '{key}' refers to {p.name}, which {why}; kept the reference as text")
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


# ---------------------------------------------------------------- helpers
def _kind(v: Any) -> str:
    return {dict: "mapping", list: "list", str: "text"}.get(type(v), type(v).__name__)


def _need_mapping(val: Any, label: str, key: str, path: str) -> None:
    if not isinstance(val, dict):
        raise InputError(f"{label}: '{key}' must be a mapping of names to values, not a {_kind(val)}", path=path,
                         hint=f"Write it as 'name: value' lines under '{key}:' "
                              + ("(e.g. metadata: {case_type: edge})." if key == "metadata" else "(e.g. vars: {question: ...})."))


def _json_text(v: Any) -> str:
    """JSON for a non-text value; YAML also gives dates, sets and bytes, which are written as text."""
    if not isinstance(v, (dict, list, int, float, type(None))):
        return str(v)  # a YAML date 2024-05-01 is the input "2024-05-01", not '"2024-05-01"'
    return json.dumps(v, ensure_ascii=False, default=str)


def _declared_type(obj: dict, path: str, label: str) -> Optional[str]:
    """A case type the source itself declares, or None. A misspelt explicit one is an error."""
    for key in ("case_type", "abeq_type"):
        if key in obj and obj[key] not in (None, ""):
            if obj[key] not in CASE_TYPES:
                raise InputError(f"{label}: {key} '{obj[key]}' is not a case type", path=path,
                                 hint=f"Use one of {', '.join(CASE_TYPES)}.")
            return obj[key]
    t = obj.get("type")
    return t if t in CASE_TYPES else None  # 'type' may mean something else to the other tool


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


def _as_list(x: Any) -> list:
    if x is None:
        return []
    return x if isinstance(x, list) else [x]


def slugify(text: str) -> str:
    """A lowercase ASCII id from free text ("Handles >20 changes!" -> "handles-20-changes")."""
    ascii_ = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_.lower()).strip("-")[:60].rstrip("-")


def unique_id(want: str, taken: set) -> str:
    """`want`, or `want-2`, `want-3`... whichever is free; records it as taken."""
    cid, n = want, 2
    while cid in taken:
        cid, n = f"{want}-{n}", n + 1
    taken.add(cid)
    return cid


def _names(ids: list[str], limit: int = 15) -> str:
    shown = ", ".join(i or "(no id)" for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _no_type_reason(source: str) -> str:
    if source in ("promptfoo", "skill-creator"):
        return f"{source} files have no field for one"
    return "the file gives none"


def _where_types_go(source: str) -> str:
    return {"promptfoo": " in each test's metadata.case_type",
            "skill-creator": " as a case_type key on each eval"}.get(source, " in the 'type' field")


# ---------------------------------------------------------------- writing
def export_text(ts: TransferSet, fmt: str) -> str:
    """The set as json or yaml (everything), or jsonl or csv (the cases only)."""
    if fmt == "json":
        return dump(ts) + "\n"
    if fmt == "yaml":
        import yaml

        return yaml.dump(ts.model_dump(), Dumper=_block_dumper(), sort_keys=False, allow_unicode=True, width=100)
    if fmt == "jsonl":
        return "".join(c.model_dump_json() + "\n" for c in ts.cases)
    if fmt == "csv":
        buf = io.StringIO()
        cols = ["id", "type", "input", "exercises_sections", "status", "gate_responses", "expectations", "rationale"]
        w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for c in ts.cases:
            secs = c.exercises_sections
            plain = not any(ch in s for s in secs for ch in ";|") and not any(s.startswith("[") for s in secs)
            exp = c.expectations
            w.writerow({"id": c.id, "type": c.type, "input": c.input, "status": c.status, "rationale": c.rationale,
                        "exercises_sections": "; ".join(secs) if plain else json.dumps(secs, ensure_ascii=False),
                        "gate_responses": json.dumps([g.model_dump() for g in c.gate_responses], ensure_ascii=False)
                        if c.gate_responses else "",
                        "expectations": "\n".join(exp) if not any("\n" in e or e.startswith("[") for e in exp)
                        else json.dumps(exp, ensure_ascii=False)})
        return buf.getvalue()
    raise InputError(f"cannot write a transfer set as '{fmt}'", hint="Use .json, .yaml, .jsonl or .csv.")


def _block_dumper():
    import yaml

    class BlockDumper(yaml.SafeDumper):
        pass

    def text(dumper, value):  # multi-line inputs read as written, not as one escaped line
        # ...unless the text holds a character YAML reads as a line break (U+0085, U+2028, U+2029)
        # or a control character: PyYAML writes U+0085 raw (allow_unicode) and reads it back as a
        # break, so only the double-quoted style, which escapes them, gives back the same text.
        if any(ch in "\x85\u2028\u2029\ufeff" or (ch < " " and ch not in "\n\t") or "\x7f" <= ch < "\xa0"
               for ch in value):
            style = '"'
        else:
            style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    BlockDumper.add_representer(str, text)
    return BlockDumper

