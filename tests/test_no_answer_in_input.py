"""No imported case's input holds a value only a check reads (issue 41), over every suite file of the
fixtures that imports.

What only a check reads is worked out here from the source, not from the importer's choices:
- promptfoo: the vars a check reads (`{{name}}` in an assert, `vars.name` in its code) that no
  prompt template names (every var a check reads, when no template is readable); what the runner
  may be sent is the value of every other var. The tests are gathered by the importer's reader
  (files, globs, scenarios), which is not what is checked; the rule is.
- other tools' datasets: every field but the input field (reference answers, labels, recorded
  outputs); what may be sent is the input field's text (a chat's contents, Inspect's choices).
- skill-creator evals: expectations, assertions and expected_output; what may be sent is the prompt.

A check-only value found in an input is allowed only when the source sends the same text itself
(Inspect's `Say 'Hello, World'` holds its target `Hello, World`). Values under four characters are
too short to tell apart from ordinary words.

A suite that is refused must be one REFUSED lists, refused in one line naming the file and what it
is, with a next step — never a generic refusal (issue 50). Detection (no --from) reads each suite as
its own reader does.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from abeq import sets
from abeq.errors import InputError
from abeq.sets.promptfoo import PromptfooReader

FIXTURES = Path(__file__).resolve().parent / "fixtures"
_BLOCK = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}", re.S)
_WORD = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")


def _texts(v) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list):
        return [t for x in v for t in _texts(x)]
    if isinstance(v, dict):
        return [t for x in v.values() for t in _texts(x)]
    return [] if v is None else [str(v)]


def _leaks(cases: list[dict], check_only: list[list[str]], sent: list[str]) -> list[str]:
    """check_only[i] and sent[i] belong to cases[i]; with one entry for all, to every case."""
    out = []
    for i, case in enumerate(cases):
        only = check_only[i if len(check_only) > 1 else 0]
        may = sent[i if len(sent) > 1 else 0]
        for v in only:
            v = v.strip()
            if len(v) >= 4 and v in case["input"] and v not in may:
                out.append(f"{case['id']}: {v[:60]!r}")
    return out


# ---------------------------------------------------------------- promptfoo
def _promptfoo(path: Path) -> tuple[list[dict], list[list[str]], list[str]]:
    reader = PromptfooReader(str(path))
    cases = reader.read(path.read_text(encoding="utf-8")).cases
    names: set[str] = set()
    for p in reader.prompts.texts:
        for m in _BLOCK.finditer(p):
            names |= set(_WORD.findall(m.group(1) or m.group(2) or ""))
    templated = bool(names) and not reader.prompts.unknown
    dflt = reader.default
    checked: set[str] = set()
    for t in reader.tests:
        text = json.dumps([dflt.get("assert") or [], t.test.get("assert") or []], default=str)
        checked |= set(re.findall(r"\{\{\s*(\w+)", text)) | set(re.findall(r"vars\.(\w+)", text))
    only, may = [], []
    for t in reader.tests:
        for k, v in {**(dflt.get("vars") or {}), **(t.test.get("vars") or {})}.items():
            sent = k in names if templated else k not in checked
            (may if sent else only).extend(_texts(v) if (sent or k in checked) else [])
    return cases, [only], ["\n".join(may)]


# ---------------------------------------------------------------- other tools' rows
_INPUT_FIELDS = ("input", "inputs", "user_input", "question", "query", "prompt", "text")


def _rows(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".csv":
        return list(csv.DictReader(io.StringIO(text)))
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    data = json.loads(text)
    return (
        data
        if isinstance(data, list)
        else data.get("evals") or next(v for v in data.values() if isinstance(v, list))
    )


def _dataset(path: Path) -> tuple[list[dict], list[list[str]], list[str]]:
    cases = sets.read_source("dataset", path).cases
    only, may = [], []
    for row in _rows(path):
        field = next(f for f in _INPUT_FIELDS if f in row)
        may.append("\n".join(_texts(row[field]) + _texts(row.get("choices"))))
        only.append([t for k, v in row.items() if k not in (field, "choices", "id") for t in _texts(v)])
    return cases, only, may


def _skill_creator(path: Path) -> tuple[list[dict], list[list[str]], list[str]]:
    imp = sets.read_source("skill-creator", path, trigger_queries=True)
    rows = _rows(path)
    if "should_trigger" in json.dumps(rows[:1]) or "expected_trigger" in json.dumps(rows[:1]):
        return imp.cases, [[]], [""]  # queries only: nothing is a check
    only = [
        _texts(r.get("expectations")) + _texts(r.get("assertions")) + _texts(r.get("expected_output"))
        for r in rows
    ]
    return imp.cases, only, [str(r.get("prompt", "")) for r in rows]


def _suites() -> list[tuple[str, Path]]:
    out = [("promptfoo", p) for p in sorted(FIXTURES.rglob("promptfooconfig*.yaml"))]
    out += [("dataset", p) for p in sorted((FIXTURES / "real" / "datasets").rglob("*.*"))]
    out += [("skill-creator", p) for p in sorted((FIXTURES / "real" / "skill-creator").glob("*.json"))]
    out += [("skill-creator", p) for p in sorted(FIXTURES.glob("skill-creator/**/evals.json"))]
    return out


READERS = {"promptfoo": _promptfoo, "dataset": _dataset, "skill-creator": _skill_creator}

# every suite of the corpus that is refused, and what its one line says it is (issue 50): a refusal
# not listed here, or one that reads like a field list, fails the walk
REFUSED = {
    "real/promptfoo/azure-openai-vision/promptfooconfig.yaml": "is an image or video",
    "real/promptfoo/config-separate-test-configs/promptfooconfig.yaml": "tests2.yaml does not exist",
    "real/promptfoo/google-sheets/promptfooconfig.yaml": "the tests come from a Google Sheet",
    "real/promptfoo/huggingface-dataset/promptfooconfig.yaml": "the tests come from a Hugging Face dataset",
    "real/promptfoo/websockets-conversation/promptfooconfig.yaml": "this is a promptfoo red-team config",
    "real/datasets/azure-ai-evaluation/questions.jsonl": "hold prompts only (query), not a dataset",
    "real/datasets/azure-ai-evaluation/questions_answers_basic.jsonl": "are judge rows (query, response)",
}
GENERIC = (
    "not a dataset abeq recognises",
    "Field required",
    "Extra inputs are not permitted",
    "'cases' list",
    "unknown column",
)


def _rel(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


def _refused_by_name(e: InputError, path: Path) -> None:
    """A refusal names the file, says in one line what it is (as REFUSED lists), and gives a next step."""
    rel = _rel(path)
    assert rel in REFUSED, f"{rel} refused unexpectedly: {e}"
    assert e.path == str(path) and REFUSED[rel] in e.message and "\n" not in e.message
    assert e.hint and not any(g in str(e) for g in GENERIC)


@pytest.mark.parametrize("kind,path", _suites(), ids=lambda x: str(x).split("fixtures/")[-1])
def test_no_case_input_holds_a_value_only_a_check_reads(kind, path):
    try:
        cases, only, may = READERS[kind](path)
    except InputError as e:  # a refused suite gives the runner nothing: it is refused by name
        _refused_by_name(e, path)
        return
    assert _rel(path) not in REFUSED, "imported, though the walk lists it as refused"
    assert cases
    assert _leaks(cases, only, may) == []


@pytest.mark.parametrize("kind,path", _suites(), ids=lambda x: str(x).split("fixtures/")[-1])
def test_detection_reads_each_suite_as_its_own_reader_does(kind, path):
    # what `abeq import-set FILE` does with no --from: the same inputs, or the same refusal
    trigger = kind == "skill-creator"
    try:
        want = [c["input"] for c in sets.read_source(kind, path, trigger_queries=trigger).cases]
    except InputError as e:
        with pytest.raises(InputError) as got:
            sets.read_source("detect", path, trigger_queries=trigger)
        assert got.value.message == e.message
        _refused_by_name(got.value, path)
        return
    assert [c["input"] for c in sets.read_source("detect", path, trigger_queries=trigger).cases] == want


def test_the_walk_covers_the_corpus():
    kinds = [k for k, _ in _suites()]
    assert (
        kinds.count("promptfoo") >= 27 and kinds.count("dataset") >= 13 and kinds.count("skill-creator") >= 8
    )
    assert set(REFUSED) <= {_rel(p) for _, p in _suites()}
