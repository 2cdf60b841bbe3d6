"""Every config and evals file of the public corpus (tests/fixtures/real, see its SOURCES.md) imports
with the right number of cases, and every input is its source text.

The expected inputs are computed here from the source files with other readers (PyYAML's BaseLoader,
which keeps every scalar as the text written; json; csv), following the import rules the README
states — never by calling the importer.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from pathlib import Path

import pytest
import yaml

from abeq import sets
from abeq.cli import main
from abeq.errors import InputError

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
PF = REAL / "promptfoo"
SC = REAL / "skill-creator"

# cases per promptfoo config: tests (var lists expanded, scenarios expanded, a conversation one case)
PROMPTFOO_CASES = {
    "simple-test": 5,
    "simple-csv": 4,
    "jsonl-test-cases": 2,
    "multiple-turn-conversation": 3,  # 7 tests in 3 conversations
    "csv-metadata": 3,
    "json-output": 2,
    "multiple-translations": 9,  # one test, 3 languages x 3 inputs
    "eval-self-grading": 2,
    "eval-customer-support-rubric": 8,
    "assistant-cli": 10,
    "eval-custom-grader-csv": 4,
    "config-multiple-translations": 9,  # one scenario, 3 var sets x 3 tests
    "python-assert-external": 4,
    "claude-vs-gpt": 15,
    "prompts-per-model": 16,
    "mistral-llama-comparison": 8,
    "javascript-assert-external": 4,
    "structured-outputs-config": 2,
    "gemma-vs-llama": 10,
    "config-csv-metadata": 3,  # __config: columns set thresholds, never vars
    "openai-codex-sdk-basic": 1,  # a test with no vars: the prompt is the input
    "redteam-dalle": 21,  # an attacker provider drives each test: the seeds are the inputs
}
PROMPTFOO_REFUSED = {
    "google-sheets": "a Google Sheet",
    "huggingface-dataset": "a Hugging Face dataset",
    "websockets-conversation": "red-team config",
    "azure-openai-vision": "an image or video",  # image vars: the runner takes text only
    "config-separate-test-configs": "tests2.yaml does not exist",  # a plain path promptfoo refuses too
}
SKILL_CREATOR_CASES = {
    "0xdeafcafe__tslsp-cli__evals.json": 4,
    "1xmint__orchestrate__evals.json": 27,
    "3shn__skill-sysml__evals.json": 3,
    "AboutRSS__rsshub-route-authoring-skill__evals.json": 8,
    "longwind48__cachewipe__evals.json": 3,
}
TRIGGER_EVALS = {
    "longwind48__cachewipe__trigger-eval.json": 10,
    "junit__pre-commit-review__trigger-eval.json": 4,
    "diegomarino__tui-design__trigger-evals.json": 17,  # {"skill_name", "queries": [...]}
}


def config_of(example: str) -> Path:
    return next((PF / example).glob("promptfooconfig*.yaml"))


def test_the_tables_cover_every_file_of_the_corpus():
    assert {p.parent.name for p in PF.glob("*/promptfooconfig*.yaml")} == set(PROMPTFOO_CASES) | set(
        PROMPTFOO_REFUSED
    )
    assert {p.name for p in SC.glob("*.json")} == set(SKILL_CREATOR_CASES) | set(TRIGGER_EVALS)


# ---------------------------------------------------------------- the independent reading
def _source_tests(config: Path) -> tuple[dict, list[dict]]:
    """defaultTest and the tests of a config, every scalar as its source text."""
    data = yaml.load(config.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    tests = []
    raw = data.get("tests") or []
    for item in [raw] if isinstance(raw, str) else raw:
        if isinstance(item, str):  # a file reference
            f = config.parent / item.removeprefix("file://")
            if f.suffix == ".csv":
                rows = csv.DictReader(io.StringIO(f.read_text(encoding="utf-8")))
                tests += [{"vars": {k: v for k, v in r.items() if not k.startswith("__")}} for r in rows]
            else:
                tests += [json.loads(line) for line in f.read_text(encoding="utf-8").split("\n") if line]
        else:
            tests.append(item)
    for sc in data.get("scenarios") or []:
        for var_set in sc["config"]:
            for t in sc["tests"]:
                tests.append({**t, "vars": {**var_set["vars"], **t["vars"]}})
    return data.get("defaultTest") or {}, tests


_BLOCK = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}", re.S)


def _prompt_names(config: Path, prompts: list) -> set[str] | None:
    """The names the config's prompt templates use; None when a prompt cannot be read here or none
    is a template (then the vars a check reads are what stays out of the input)."""
    texts = []
    for p in prompts if isinstance(prompts, list) else list(prompts):
        p = p.get("raw") or p.get("id") if isinstance(p, dict) else p
        f = config.parent / p.removeprefix("file://")
        if p.startswith("file://") or (f.suffix in (".txt", ".json") and "{{" not in p):
            if not f.is_file() or f.suffix in (".py", ".js"):
                return None
            texts.append(f.read_text(encoding="utf-8"))
        else:
            texts.append(p)
    blocks = [m.group(1) or m.group(2) for t in texts for m in _BLOCK.finditer(t)]
    if not blocks:
        return None
    return {n for b in blocks for n in re.findall(r"(?<![\w.])([A-Za-z_]\w*)", b)}


def _checked(default: dict, test: dict) -> set[str]:
    text = json.dumps([default.get("assert") or [], test.get("assert") or []])
    return set(re.findall(r"\{\{\s*(\w+)", text)) | set(re.findall(r"vars\.(\w+)", text))


def _sent(vars_: dict, names: set[str] | None, checked: set[str]) -> dict:
    """What promptfoo sends: the vars the prompt names (or, with no readable template, all but the
    ones checks read), each without one trailing newline."""
    keep = {k: v for k, v in vars_.items() if (k in names if names is not None else k not in checked)}
    return {k: v.removesuffix("\n") if isinstance(v, str) else v for k, v in keep.items()}


def _lines(vars_: dict) -> str:
    return "\n".join(f"{k}: {v}" for k, v in vars_.items())


def _text(vars_: dict) -> str:
    return next(iter(vars_.values())) if len(vars_) == 1 else _lines(vars_)


def expected_inputs(config: Path) -> list[str]:
    default, tests = _source_tests(config)
    prompts = yaml.load(config.read_text(encoding="utf-8"), Loader=yaml.BaseLoader).get("prompts") or []
    names = _prompt_names(config, prompts)
    out: list[str] = []
    conversations: dict[str, list[dict]] = {}
    for t in tests:
        v = {**default.get("vars", {}), **t.get("vars", {})}
        if v:
            v = _sent(v, names, _checked(default, t))
        conv = (t.get("metadata") or {}).get("conversationId")
        if conv:
            if conv not in conversations:
                conversations[conv] = []
                out.append(conv)  # its place: where its first turn is
            conversations[conv].append(v)
            continue
        if not v:  # no vars: promptfoo sends the prompt itself
            out += prompts
            continue
        keys = list(v)
        lists = [v[k] if isinstance(v[k], list) else [v[k]] for k in keys]
        out += [_text(dict(zip(keys, combo))) for combo in itertools.product(*lists)]
    for conv, turns in conversations.items():
        shared = {k: x for k, x in turns[0].items() if all(t.get(k) == x for t in turns)}
        parts = [_lines(shared)] + [
            f"[turn {i} of {len(turns)}]\n" + _text({k: x for k, x in t.items() if k not in shared})
            for i, t in enumerate(turns, 1)
        ]
        out[out.index(conv)] = "\n\n".join(parts)
    return out


# ---------------------------------------------------------------- promptfoo
@pytest.mark.parametrize("example", sorted(PROMPTFOO_CASES))
def test_every_promptfoo_config_imports_with_its_cases_and_their_source_text(example):
    imp = sets.read_source("promptfoo", config_of(example))
    assert len(imp.cases) == PROMPTFOO_CASES[example]
    assert [c["input"] for c in imp.cases] == expected_inputs(config_of(example))


@pytest.mark.parametrize("example", sorted(PROMPTFOO_REFUSED))
def test_configs_with_nothing_local_are_refused_saying_why(example, capsys, tmp_path):
    path = config_of(example)
    with pytest.raises(InputError, match=PROMPTFOO_REFUSED[example]):
        sets.read_source("promptfoo", path)
    out = tmp_path / "o.json"
    assert main(["import-set", "--from", "promptfoo", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and PROMPTFOO_REFUSED[example] in err and not out.exists()


def test_remote_sources_say_they_are_remote_and_what_to_do():
    with pytest.raises(InputError) as e:
        sets.read_source("promptfoo", config_of("google-sheets"))
    assert "docs.google.com" in str(e.value) and "does not fetch" in str(e.value) and "CSV" in e.value.hint
    with pytest.raises(InputError) as e:
        sets.read_source("promptfoo", config_of("huggingface-dataset"))
    assert "hf://datasets/PKU-Alignment/BeaverTails-Evaluation" in str(e.value)
    with pytest.raises(InputError) as e:
        sets.read_source("promptfoo", config_of("websockets-conversation"))
    assert "promptfoo redteam generate" in e.value.hint


# ---------------------------------------------------------------- skill-creator
@pytest.mark.parametrize("name", sorted(SKILL_CREATOR_CASES))
def test_every_skill_creator_file_imports_with_its_cases_and_their_prompts(name):
    evals = json.loads((SC / name).read_text(encoding="utf-8"))["evals"]
    imp = sets.read_source("skill-creator", SC / name)
    assert len(imp.cases) == SKILL_CREATOR_CASES[name] == len(evals)
    want = [
        e["prompt"] + ("\n\nInput files: " + ", ".join(e["files"]) if e.get("files") else "") for e in evals
    ]
    assert [c["input"] for c in imp.cases] == want


@pytest.mark.parametrize("name", sorted(TRIGGER_EVALS))
def test_a_trigger_eval_is_named_in_its_refusal_and_can_give_its_queries(name, capsys, tmp_path):
    path = SC / name
    with pytest.raises(InputError) as e:
        sets.read_source("skill-creator", path)
    assert (
        "trigger eval" in str(e.value) and str(path) in str(e.value) and "--trigger-queries" in e.value.hint
    )
    data = json.loads(path.read_text(encoding="utf-8"))
    entries = data if isinstance(data, list) else data.get("cases") or data["queries"]
    should = [
        x.get("query", x.get("prompt")) for x in entries if x.get("should_trigger", x.get("expected_trigger"))
    ]
    imp = sets.read_source("skill-creator", path, trigger_queries=True)
    assert len(imp.cases) == TRIGGER_EVALS[name] and [c["input"] for c in imp.cases] == should
    out = tmp_path / "q.json"
    argv = ["import-set", "--from", "skill-creator", str(path), "--out", str(out), "--default-type", "happy"]
    assert main(argv) == 2 and "trigger eval" in capsys.readouterr().err and not out.exists()
    assert main([*argv, "--trigger-queries"]) == 0 and len(sets.load(out).cases) == TRIGGER_EVALS[name]


def test_every_file_of_the_corpus_has_its_source_and_licence_recorded():
    rows = [ln.split("|") for ln in (REAL / "SOURCES.md").read_text(encoding="utf-8").splitlines()]
    listed = {
        r[1].strip(): r[5].strip() for r in rows if len(r) > 6 and r[1].strip() not in ("local path", "---")
    }
    files = {p.relative_to(REAL).as_posix() for p in REAL.rglob("*") if p.is_file()}
    assert files - set(listed) == {
        "SOURCES.md",
        ".gitattributes",
        "LICENSES/MIT.txt",
        "LICENSES/Apache-2.0.txt",
    }
    assert all(lic.startswith(("MIT", "Apache-2.0")) for lic in listed.values())
