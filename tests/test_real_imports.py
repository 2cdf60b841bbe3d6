"""What the importers keep from real files (tests/fixtures/real): assertions in promptfoo's terms,
skill-creator assertions and metadata, YAML 1.2 text, relative paths, conversations, scenarios."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from abeq import sets
from abeq.cli import main
from abeq.errors import InputError

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
PF = REAL / "promptfoo"
SC = REAL / "skill-creator"


def pf(example: str) -> list[dict]:
    return sets.read_source("promptfoo", next((PF / example).glob("promptfooconfig*.yaml"))).cases


def checks(case: dict) -> list[tuple]:
    return [(a["type"], a["value"]) for a in case.get("assertions", [])]


# ---------------------------------------------------------------- promptfoo asserts
def test_promptfoo_asserts_keep_their_types_values_and_options():
    cases = pf("simple-test")
    assert checks(cases[3]) == [
        ("javascript", "output.startsWith('Ahoy')"),
        ("python", "max(0, len(output) - 300)"),
        ("similar", "Ahoy, world"),
    ]
    # a $ref to the config's assertionTemplates is resolved
    assert checks(cases[4]) == [("llm-rubric", "Is spoken like a pirate"), ("icontains", "arrr")]
    assert not any("expectations" in c for c in cases)  # nothing invented as an expectation
    gemma = pf("gemma-vs-llama")
    similar = gemma[4]["assertions"][0]
    assert similar["type"] == "similar" and similar["options"]["threshold"] == 0.5
    # defaultTest.options.transform changes what every assert reads: it travels with each of them
    assert similar["options"]["test_transform"] == "output.trim()"
    assert [len(c.get("assertions", [])) for c in gemma] == [0, 0, 1, 1, 1, 1, 1, 1, 0, 1]


def test_non_text_assert_values_stay_as_written():
    structured = pf("structured-outputs-config")
    values = {a["type"]: a["value"] for c in structured for a in c["assertions"]}
    assert values["contains-any"] == [-3.625, "-29/8"] and values["contains"] == 24.01
    schema = pf("json-output")[1]["assertions"][0]
    assert schema["type"] == "is-json" and schema["value"]["required"] == ["color", "countries"]
    any_of = pf("json-output")[1]["assertions"][2]
    assert any_of["options"] == {"transform": "output.countries", "test_transform": "JSON.parse(output)"}


def test_default_test_asserts_come_first_on_every_test():
    claude = pf("claude-vs-gpt")
    assert [a["type"] for a in claude[0]["assertions"]] == [
        "cost",
        "latency",
        "javascript",
        "icontains",
        "llm-rubric",
    ]
    assert [a["type"] for a in claude[12]["assertions"]] == ["cost", "latency", "javascript"]  # no own assert
    assert claude[0]["assertions"][0]["options"] == {"threshold": 0.01}


def test_csv_expected_cells_are_read_as_promptfoo_reads_them():
    meta = pf("csv-metadata")
    assert checks(meta[0]) == [
        ("contains", "algorithm"),  # promptfoo trims the value after the colon
        ("llm-rubric", "Does this describe machine learning accurately?"),  # {{topic}} filled in
    ]
    assert meta[0]["assertions"][1]["options"]["template"] == "Does this describe {{topic}} accurately?"
    # __metadata:tags[] is a list split at commas, "\," being a comma inside an item
    assert meta[1]["metadata"] == {"category": "science", "tags": ["physics", "advanced,theory", "quantum"]}
    assert checks(pf("simple-csv")[0]) == [("icontains", "bonjour")]
    assert checks(pf("eval-custom-grader-csv")[0]) == [("javascript", "file://customAssertion.ts")]


def test_a_rubric_suite_keeps_metric_threshold_and_description():
    cases = pf("eval-customer-support-rubric")
    first = cases[0]
    assert first["id"] == "es-refund-ticket-answered-in-spanish"
    assert [a["metric"] for a in first["assertions"]] == [
        "correct",
        "resolved",
        "honest",
        "handoff",
        "language_fit",
    ]
    assert all(a["options"]["threshold"] == 0.8 for a in first["assertions"])
    assert "Me cobraron dos veces" in first["assertions"][0]["value"]  # {{customer_message}} filled in
    assert first["metadata"]["severity"] == "high"
    assert "threshold" not in first["metadata"].get("promptfoo", {})  # __threshold "" or "0" sets none


# ---------------------------------------------------------------- YAML 1.2, paths, conversations, scenarios
def test_yes_in_a_promptfoo_config_is_the_text_yes():
    assert pf("simple-test")[0]["input"] == "Yes"


def test_yaml_1_1_scalars_stay_text_and_numbers_keep_their_spelling(tmp_path):
    p = tmp_path / "promptfooconfig.yaml"
    p.write_text(
        "tests:\n"
        "  - vars: {a: No, b: off, c: on, d: 1:30, e: 012, f: 1.10, g: 0x1F}\n"
        "    assert: [{type: equals, value: Yes}, {type: contains, value: 1.10}]\n"
    )
    [case] = sets.read_source("promptfoo", p).cases
    assert case["input"] == "a: No\nb: off\nc: on\nd: 1:30\ne: 012\nf: 1.10\ng: 0x1F"
    assert checks(case) == [("equals", "Yes"), ("contains", 1.1)]  # promptfoo's own value: the number


def test_a_file_var_never_puts_a_machine_path_in_the_case(tmp_path):
    (tmp_path / "load_context.py").write_text("def get_var(*a): return {'output': 'x'}\n")
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    p = tmp_path / "promptfooconfig.yaml"
    p.write_text("tests:\n  - vars: {context: file://./load_context.py, notes: file://notes.txt}\n")
    imp = sets.read_source("promptfoo", p)
    [case] = imp.cases
    assert case["input"] == "context: file://./load_context.py\nnotes: remember the milk"
    assert str(tmp_path) not in json.dumps(imp.cases)
    assert any("load_context.py" in w and "keeps the reference" in w for w in imp.warnings)
    moved = tmp_path / "elsewhere"
    shutil.copytree(tmp_path, moved, ignore=shutil.ignore_patterns("elsewhere"))
    again = sets.import_set("promptfoo", moved / "promptfooconfig.yaml", default_type="happy")[0]
    first = sets.import_set("promptfoo", p, default_type="happy")[0]
    assert sets.set_hash(again) == sets.set_hash(first)  # the hash does not depend on where it sits


def test_a_promptfoo_conversation_is_one_case_with_its_turns_in_order():
    imp = sets.read_source("promptfoo", PF / "multiple-turn-conversation" / "promptfooconfig.yaml")
    facebook = imp.cases[0]
    assert facebook["id"] == "facebook-thread" and facebook["metadata"]["turns"] == 3
    assert facebook["input"].split("\n\n")[1:] == [
        "[turn 1 of 3]\nWho founded Facebook?",
        "[turn 2 of 3]\nWhere does he live?",
        "[turn 3 of 3]\nWhich state is that in?",
    ]
    assert any("share conversationId 'facebook_thread'" in w for w in imp.warnings)


def test_tests_of_one_conversation_without_an_id_are_warned_not_split_silently(tmp_path):
    (tmp_path / "prompt.json").write_text("[{% for c in _conversation %}{}{% endfor %}]")
    p = tmp_path / "promptfooconfig.yaml"
    p.write_text("prompts: [file://prompt.json]\ntests:\n  - vars: {q: hi}\n  - vars: {q: 'and then'}\n")
    imp = sets.read_source("promptfoo", p)
    assert len(imp.cases) == 2 and any("_conversation" in w and "conversationId" in w for w in imp.warnings)


def test_scenarios_expand_as_promptfoo_runs_them():
    cases = pf("config-multiple-translations")
    french = cases[3]
    assert french["id"] == "translated-hello-world-2"
    assert checks(french) == [("similar", "Bonjour le monde")]  # {{expectedHelloWorld}} of that var set
    assert cases[8]["assertions"][0]["value"] == "Wie geht es dir?"


def test_list_vars_fill_their_asserts_per_combination():
    cases = pf("multiple-translations")
    assert [c["input"].split("\n")[0] for c in cases[:4]] == [
        "language: French",
        "language: French",
        "language: French",
        "language: German",
    ]
    assert all(checks(c) == [("similar", "Hello world")] for c in cases)


def test_an_assert_set_is_flattened_and_numbered(tmp_path):
    p = tmp_path / "tests.yaml"
    p.write_text(
        "- vars: {q: hi}\n  assert:\n    - type: assert-set\n      threshold: 0.5\n"
        "      assert: [{type: contains, value: a}, {type: contains, value: b}]\n"
    )
    imp = sets.read_source("promptfoo", p)
    assert [a["options"] for a in imp.cases[0]["assertions"]] == [
        {"assert_set": 1, "assert_set_threshold": 0.5}
    ] * 2
    assert any("threshold 0.5" in w for w in imp.warnings)


@pytest.mark.parametrize(
    "body,message",
    [
        ("- vars: {q: hi}\n  assert: [{value: x}]\n", "has no 'type'"),
        ("- vars: {q: hi}\n  assert: [{$ref: '#/nowhere/x'}]\n", "refers to #/nowhere/x, which this config"),
        ("- vars: {q: hi}\n  assert: [{$ref: 'other.yaml#/x'}]\n", "only references inside the same config"),
    ],
)
def test_bad_asserts_are_refused_naming_the_file_and_test(tmp_path, body, message, capsys):
    p = tmp_path / "tests.yaml"
    p.write_text(body)
    with pytest.raises(InputError, match=message) as e:
        sets.read_source("promptfoo", p)
    assert "test 1" in str(e.value)
    assert main(["import-set", "--from", "promptfoo", str(p), "--out", str(tmp_path / "o.json")]) == 2
    assert str(p) in capsys.readouterr().err and not (tmp_path / "o.json").exists()


# ---------------------------------------------------------------- skill-creator
def test_skill_creator_assertions_become_natural_language_checks():
    sysml = sets.read_source("skill-creator", SC / "3shn__skill-sysml__evals.json")
    first = sysml.cases[0]
    assert [a["type"] for a in first["assertions"]] == ["llm-rubric"] * 4  # objects with a text
    assert (
        first["assertions"][2]["value"]
        == "Contains at least three part defs covering motor, battery, and propeller"
    )
    cache = sets.read_source("skill-creator", SC / "longwind48__cachewipe__evals.json")
    assert len(cache.cases[0]["assertions"]) == 6  # plain statements
    assert cache.cases[0]["assertions"][4] == {
        "type": "llm-rubric",
        "value": "Deletes nothing: every file in the fixture still exists afterwards",
    }


def test_skill_creator_ids_and_names_of_assertions_are_kept(tmp_path):
    p = tmp_path / "evals.json"
    p.write_text(
        json.dumps(
            {
                "evals": [
                    {
                        "id": 1,
                        "prompt": "go",
                        "assertions": [{"id": "a1", "name": "short", "text": "is short", "kind": "script"}],
                    }
                ]
            }
        )
    )
    [a] = sets.read_source("skill-creator", p).cases[0]["assertions"]
    assert a == {
        "type": "llm-rubric",
        "value": "is short",
        "metric": "a1",
        "description": "short",
        "options": {"kind": "script"},
    }


def test_skill_creator_fields_it_does_not_define_go_to_metadata_and_are_named():
    rss = sets.read_source("skill-creator", SC / "AboutRSS__rsshub-route-authoring-skill__evals.json")
    first = rss.cases[0]
    assert (
        first["metadata"]["name"] == "city-parameterised-ssr-route" and len(first["metadata"]["checks"]) == 7
    )
    assert "expectations" not in first and "assertions" not in first  # checks are not invented from 'checks'
    assert any("checks (8 evals)" in w and "not run as checks" in w for w in rss.warnings)
    tslsp = sets.read_source("skill-creator", SC / "0xdeafcafe__tslsp-cli__evals.json")
    assert tslsp.cases[0]["id"] == "eval-0" and tslsp.cases[0]["metadata"]["scorers"][0]["type"] == "regex"


def test_skill_creator_expectations_stay_expectations(tmp_path):
    p = tmp_path / "evals.json"
    p.write_text(
        json.dumps(
            {"evals": [{"id": 3, "prompt": "go", "expectations": ["says hi"], "assertions": ["is polite"]}]}
        )
    )
    ts, _ = sets.import_set("skill-creator", p, default_type="happy")
    assert ts.cases[0].expectations == ["says hi"] and ts.cases[0].assertions[0].value == "is polite"


@pytest.mark.parametrize(
    "doc,message",
    [
        ({"test_cases": [{"id": "a", "input": "x"}]}, "under 'test_cases', not 'evals'"),
        (
            {"evals": [{"id": 1, "prompt": "go", "assertions": [{"passed": None}]}]},
            r"assertions\[0\]: an assertion must be",
        ),
        (
            {"evals": [{"id": 1, "prompt": "go", "expectations": [{"text": "x"}]}]},
            "'expectations' must be a list",
        ),
    ],
)
def test_what_would_change_meaning_is_refused_with_the_way_out(tmp_path, doc, message, capsys):
    p = tmp_path / "evals.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=message) as e:
        sets.read_source("skill-creator", p)
    assert e.value.path == str(p) and e.value.hint
    assert main(["import-set", "--from", "skill-creator", str(p), "--out", str(tmp_path / "o.json")]) == 2
    assert str(p) in capsys.readouterr().err


# ---------------------------------------------------------------- what the written set keeps
def test_every_format_keeps_imported_assertions_and_metadata(tmp_path, capsys):
    src = PF / "eval-customer-support-rubric" / "promptfooconfig.yaml"
    want, _ = sets.import_set("promptfoo", src, default_type="happy")
    for fmt in ("json", "yaml", "jsonl", "csv"):
        out = tmp_path / f"set.{fmt}"
        assert (
            main(
                ["import-set", "--from", "promptfoo", str(src), "--out", str(out), "--default-type", "happy"]
            )
            == 0
        )
        back, _ = sets.import_set(fmt, out)
        assert [c.model_dump() for c in back.cases] == [c.model_dump() for c in want.cases], fmt
    err = capsys.readouterr().err
    assert "40 assertion(s)" in err and "coverage will read 0%" in err


def test_abeq_yaml_sets_are_read_with_yaml_1_2(tmp_path):
    p = tmp_path / "set.yaml"
    p.write_text(
        "document_hash: null\ncases:\n  - id: no-thanks\n    type: edge\n    input: No\n"
        "    gate_responses: [{pattern: 'proceed', response: yes}]\n"
    )
    ts = sets.load(p)
    assert ts.cases[0].input == "No" and ts.cases[0].gate_responses[0].response == "yes"
    assert ts.document_hash == ""  # null written by hand: not bound to an original yet
    p.write_text("user_confirmed: yes\ncases: [{id: a, type: happy, input: x}]\n")
    with pytest.raises(InputError, match="user_confirmed"):
        sets.load(p)  # "yes" is text, and a confirmation must be a real true
