"""Issue 41: the third round of real files (tests/fixtures/real, see SOURCES.md). The answer never
reaches the runner: vars only checks read, other tools' reference answers and a skill's evals stay
out of what the runner gets; valid suites are not refused for a false reason; chains, chats, images
and rule files are imported faithfully or refused by name.

Where no public file of a shape was found (a top-level `vars`, a storeOutputAs chain, a CSV trigger
eval, a LangSmith export, Kiro and Windsurf rules), the test builds it from a real file here and
says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from abeq import sets
from abeq.cli import main
from abeq.documents import detect_variant, load_document
from abeq.errors import InputError
from abeq.execution.runners.workspace import placement
from abeq.sets.imported import detect_format

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
PF = REAL / "promptfoo"
DS = REAL / "datasets"
CACHEWIPE = REAL / "skills" / "cachewipe"
TRIGGERS = REAL / "skill-creator" / "longwind48__cachewipe__trigger-eval.json"


def pf(example: str) -> sets.Imported:
    return sets.read_source("promptfoo", next((PF / example).glob("promptfooconfig*.yaml")))


# ---------------------------------------------------------------- 1. vars only checks read
def test_scenario_vars_that_only_checks_read_never_reach_the_input():
    imp = pf("config-multiple-translations")
    french = imp.cases[3]
    assert french["input"] == "language: French\ninput: Hello world"  # what prompts.txt names
    assert french["assertions"][0]["value"] == "Bonjour le monde"  # the check still has the answer
    assert french["metadata"]["promptfoo"]["vars_not_in_prompt"]["expectedHelloWorld"] == "Bonjour le monde"
    assert not any("Bonjour le monde" in c["input"] or "Hola mundo" in c["input"] for c in imp.cases)
    assert any("expectedHelloWorld" in w and "does not name" in w for w in imp.warnings)


def test_with_the_prompt_missing_the_vars_checks_read_still_stay_out(tmp_path):
    cfg = tmp_path / "promptfooconfig.yaml"
    shutil.copy(PF / "config-multiple-translations" / "promptfooconfig-scenarios.yaml", cfg)
    imp = sets.read_source("promptfoo", cfg)  # prompts.txt is not beside it
    assert [c["input"] for c in imp.cases][:2] == [
        "language: Spanish\ninput: Hello world",
        "language: Spanish\ninput: Good morning",
    ]
    assert any("not readable" in w and "expectedGoodMorning" in w for w in imp.warnings)


def test_a_test_whose_vars_only_checks_read_is_refused_when_the_prompt_is_unknown(tmp_path):
    (tmp_path / "tests.yaml").write_text(
        "- vars: {expectedHelloWorld: Hola mundo}\n"
        "  assert: [{type: similar, value: '{{expectedHelloWorld}}'}]\n"
    )
    with pytest.raises(InputError, match="every var .* is read by a check") as e:
        sets.read_source("promptfoo", tmp_path / "tests.yaml")
    assert "prompts:" in e.value.hint


def test_the_echo_example_sends_only_the_var_its_prompt_names():
    cases = pf("eval-customer-support-rubric").cases
    assert cases[0]["input"].startswith("Hola, lamento el doble cobro.")  # prompt.txt is {{reply}}
    assert not any("customer_message:" in c["input"] for c in cases)


# ---------------------------------------------------------------- 2 and 7. other tools' datasets
@pytest.mark.parametrize(
    "name,reference",
    [
        ("inspect_ai/samples.csv", "target"),
        ("inspect_ai/samples-mcq.csv", "target"),
        ("inspect_ai/samples.jsonl", "target"),
        ("inspect_ai/samples-mcq.jsonl", "target"),
        ("inspect_ai/dataset.jsonl", "target"),
        ("openai-evals/test_match__samples.jsonl", "ideal"),
        ("deepeval/goldens.json", "expected_output"),
        ("ragas/prompt_evals__test_dataset.csv", "label"),
        ("ragas/rag_eval__test_dataset.csv", "grading_notes"),
    ],
)
def test_another_tools_dataset_is_recognised_and_its_reference_becomes_a_check(
    name, reference, capsys, tmp_path
):
    path = DS / name
    assert detect_format(str(path), path.read_text(encoding="utf-8")) == "dataset"
    imp = sets.read_source("detect", path)
    assert any(f"'{reference}' a check" in w for w in imp.warnings)
    assert all(c["assertions"][0]["options"]["reference_field"] == reference for c in imp.cases)
    out = tmp_path / "cases.json"
    assert main(["import-set", str(path), "--out", str(out), "--default-type", "happy"]) == 0
    assert len(sets.load(out).cases) == len(imp.cases)
    # given to the promptfoo reader, the file is refused naming the tool and the way in
    with pytest.raises(InputError, match="not promptfoo tests") as e:
        sets.read_source("promptfoo", path)
    assert "--from dataset" in e.value.hint


def test_multiple_choice_shows_the_choices_and_checks_the_lettered_one():
    case = sets.read_source("dataset", DS / "inspect_ai" / "samples-mcq.csv").cases[0]
    assert case["input"].startswith("Which is the smallest number?\n\nA) 1\nB) 2")
    assert case["assertions"][0]["value"] == "The answer chosen is A) 1"


def test_a_chat_input_sends_its_user_message_and_keeps_the_system_one_aside():
    imp = sets.read_source("dataset", DS / "openai-evals" / "test_match__samples.jsonl")
    assert [c["input"] for c in imp.cases] == [
        "Once upon a ",
        "The first US president was ",
        "OpenAI was founded in 20",
    ]
    assert imp.cases[1]["metadata"]["system_messages"] == ["Complete the phrase as concisely as possible."]
    assert imp.cases[1]["assertions"][0] == {
        "type": "factuality",
        "value": "George Washington",
        "metric": "ideal",
        "options": {"reference_field": "ideal"},
    }
    assert any("system message" in w for w in imp.warnings)


def test_recorded_outputs_and_contexts_stay_in_metadata():
    case = sets.read_source("dataset", DS / "deepeval" / "goldens.json").cases[0]
    assert case["input"] == "What is the tallest mountain in the world?"
    assert case["metadata"]["actual_output"] == "Mount Everest" and "Everest" not in case["input"]


def test_a_langsmith_export_sends_its_inputs_and_checks_its_outputs(tmp_path):
    """Built from LangSmith's documented example shape (no public export file was found)."""
    rows = [
        {"inputs": {"question": "What is the largest mammal?"}, "outputs": {"answer": "The blue whale"}},
        {"inputs": {"question": "What are reptiles known for?"}, "outputs": {"answer": "Having scales"}},
    ]
    p = tmp_path / "export.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    imp = sets.read_source("detect", p)
    assert [c["input"] for c in imp.cases] == ["What is the largest mammal?", "What are reptiles known for?"]
    assert imp.cases[0]["assertions"][0]["value"] == "The blue whale"
    assert any("LangSmith" in w for w in imp.warnings)


def test_abeqs_own_reader_names_the_dataset_and_the_way_in(capsys, tmp_path):
    path = DS / "openai-evals" / "test_match__samples.jsonl"
    assert main(["import-set", "--from", "jsonl", str(path), "--out", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert "OpenAI evals samples" in err and "--from dataset" in err and not (tmp_path / "o.json").exists()


# ---------------------------------------------------------------- 3. a skill's evals/ stays behind
def test_a_skills_evals_folder_does_not_travel_with_it(tmp_path):
    doc = load_document(CACHEWIPE)
    assert set(doc.folder) == {"references/fallback.md", "references/targets.md"}
    assert any("evals/" in n and "skill-creator" in n for n in doc.notes)
    copy = tmp_path / "cachewipe"
    shutil.copytree(CACHEWIPE, copy)
    (copy / "evals" / "trigger-eval.json").write_text("[]")  # the expectations change: the skill does not
    assert load_document(copy).hash == doc.hash
    (copy / "references" / "targets.md").write_text("changed")
    assert load_document(copy).hash != doc.hash


def test_the_cli_says_what_it_left_out(capsys, tmp_path):
    evals, cases = REAL / "skill-creator" / "longwind48__cachewipe__evals.json", tmp_path / "cases.json"
    assert main(["import-set", str(evals), "--out", str(cases), "--default-type", "happy"]) == 0
    argv = ["check-set", "--original", str(CACHEWIPE), "--transfer-set", str(cases), "--allow-thin"]
    main(argv)
    assert "left out the skill's evals/ folder (1 file)" in capsys.readouterr().out


# ---------------------------------------------------------------- 4. valid suites not refused
def test_a_top_level_vars_or_assert_is_ignored_as_promptfoo_ignores_it(tmp_path):
    """simple-test with a top-level vars and assert added (no public config with them was found)."""
    cfg = tmp_path / "promptfooconfig.yaml"
    shutil.copy(PF / "simple-test" / "prompts.txt", tmp_path / "prompts.txt")
    text = (PF / "simple-test" / "promptfooconfig.yaml").read_text(encoding="utf-8")
    cfg.write_text("vars:\n  body: unused\nassert:\n  - type: contains\n    value: x\n" + text)
    imp = sets.read_source("promptfoo", cfg)
    assert [c["input"] for c in imp.cases] == [c["input"] for c in pf("simple-test").cases]
    assert any("top-level 'vars' and 'assert'" in w and "ignores" in w for w in imp.warnings)
    assert detect_format(str(cfg), cfg.read_text()) == "promptfoo"


def test_a_csv_trigger_eval_is_read_as_one(tmp_path, capsys):
    """cachewipe's trigger eval as the CSV Codex's skill guide describes (id,should_trigger,prompt)."""
    entries = json.loads(TRIGGERS.read_text(encoding="utf-8"))
    p = tmp_path / "cachewipe.prompts.csv"
    lines = ["id,should_trigger,prompt"] + [
        f'q{i},{str(e["should_trigger"]).lower()},"{e["query"].replace(chr(34), chr(34) * 2)}"'
        for i, e in enumerate(entries, 1)
    ]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert detect_format(str(p), p.read_text()) == "skill-creator"
    with pytest.raises(InputError, match="trigger eval"):
        sets.read_source("skill-creator", p)
    imp = sets.read_source("skill-creator", p, trigger_queries=True)
    assert [c["input"] for c in imp.cases] == [e["query"] for e in entries if e["should_trigger"]]
    with pytest.raises(InputError, match="trigger eval") as e:
        sets.read_source("promptfoo", p)  # its negative rows would become cases
    assert "--trigger-queries" in e.value.hint


# ---------------------------------------------------------------- 5. chains, chats, images
def test_a_storeoutputas_chain_is_one_conversation(tmp_path):
    """The chain promptfoo's configuration guide shows, on simple-test's prompt (no public config found)."""
    shutil.copy(PF / "simple-test" / "prompts.txt", tmp_path / "prompts.txt")
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: [file://prompts.txt]\ntests:\n"
        "  - vars: {body: 'Who founded Facebook?'}\n    options: {storeOutputAs: founderName}\n"
        "  - vars: {body: 'Tell me more about {{founderName}}'}\n"
        "    assert: [{type: icontains, value: Harvard}]\n"
        "  - vars: {body: Hello world}\n"
    )
    imp = sets.read_source("promptfoo", tmp_path / "promptfooconfig.yaml")
    assert len(imp.cases) == 2
    chain = imp.cases[0]
    assert chain["input"] == (
        "[turn 1 of 2]\nWho founded Facebook?\n\n[turn 2 of 2]\nTell me more about [your reply to turn 1]"
    )
    assert chain["assertions"][0]["options"]["turn"] == 2
    assert "{{" not in chain["input"] and any("storeOutputAs" in w for w in imp.warnings)


def test_image_vars_are_refused_naming_the_feature(capsys, tmp_path):
    path = PF / "azure-openai-vision" / "promptfooconfig.yaml"
    with pytest.raises(InputError, match="'image_url' is an image or video") as e:
        sets.read_source("promptfoo", path)
    assert "text only" in str(e.value) and "Leave the tests with pictures out" in e.value.hint


def test_a_chat_prompt_is_its_user_message_or_refused_with_turns(tmp_path):
    chat = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Name a {{colour}} fruit."},
    ]
    (tmp_path / "prompt.json").write_text(json.dumps(chat))
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text("prompts: [file://prompt.json]\ntests:\n  - assert: [{type: icontains, value: banana}]\n")
    imp = sets.read_source("promptfoo", cfg)
    assert imp.cases[0]["input"] == "Name a  fruit." and any("chat" in w for w in imp.warnings)
    chat.insert(1, {"role": "assistant", "content": "Hello."})
    chat.insert(2, {"role": "user", "content": "Hi."})
    (tmp_path / "prompt.json").write_text(json.dumps(chat))
    with pytest.raises(InputError, match="chat of 4 messages"):
        sets.read_source("promptfoo", cfg)


# ---------------------------------------------------------------- 6. rule files are instruction files
def test_copilot_path_instructions_are_an_instruction_file_scoped_by_apply_to():
    path = (
        REAL
        / "instructions"
        / "microsoft__vscode"
        / ".github"
        / "instructions"
        / "typescript.instructions.md"
    )
    doc = load_document(path)
    assert doc.name == ".github/instructions/typescript.instructions.md"
    assert detect_variant(doc.name) == "instruction-file"
    assert placement(doc, "instruction-file") == ".github/instructions/typescript.instructions.md"
    assert any("**/*.ts" in n and "applyTo" in n for n in doc.notes)


def test_a_cursor_rule_folder_and_claude_rules_are_instruction_files():
    rule = load_document(REAL / "instructions" / "filipstrand__mflux" / ".cursor" / "rules")
    assert rule.name == ".cursor/rules/RULE.md" and detect_variant(rule.name) == "instruction-file"
    # no front matter: Cursor's Manual type (loaded when @-mentioned), noted, never silently "always"
    assert len(rule.notes) == 1 and "manual rule" in rule.notes[0]
    claude = (
        REAL / "instructions" / "manuelturpin__ArtChiTech-framework" / ".claude" / "rules" / "0-behavior.md"
    )
    assert detect_variant(load_document(claude).name) == "instruction-file"


@pytest.mark.parametrize(
    "where,front,note",
    [
        (".kiro/steering/behavior.md", "inclusion: fileMatch\nfileMatchPattern: '*.py'", "*.py"),
        (".kiro/steering/behavior.md", "", None),
        (".windsurfrules", "", None),
        (".windsurf/rules/behavior.md", "trigger: model_decision", "model decides"),
    ],
)
def test_kiro_and_windsurf_rules_are_read_as_their_tools_read_them(tmp_path, where, front, note):
    """A real rule's text (manuelturpin's 0-behavior.md) put where Kiro and Windsurf look for it."""
    body = (
        REAL / "instructions" / "manuelturpin__ArtChiTech-framework" / ".claude" / "rules" / "0-behavior.md"
    )
    text = body.read_text(encoding="utf-8")
    p = tmp_path / where
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"---\n{front}\n---\n{text}" if front else text, encoding="utf-8")
    doc = load_document(p)
    assert detect_variant(doc.name) == "instruction-file"
    assert (note is None and not doc.notes) or any(note in n for n in doc.notes)


# ---------------------------------------------------------------- 8. a block scalar's newline
def test_a_block_scalar_var_loses_the_one_newline_promptfoo_strips(tmp_path):
    """claude-vs-gpt's riddles written as `>` (folded, keeping one newline) instead of `>-`."""
    src = PF / "claude-vs-gpt" / "promptfooconfig.yaml"
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text(src.read_text(encoding="utf-8").replace("riddle: >-", "riddle: >"), encoding="utf-8")
    got = [c["input"] for c in sets.read_source("promptfoo", cfg).cases]
    assert got == [c["input"] for c in sets.read_source("promptfoo", src).cases]
    assert not any(i.endswith("\n") for i in got)


def test_a_yaml_chat_prompt_is_read_as_its_messages(tmp_path):
    chat = "- role: system\n  content: Be brief.\n- role: user\n  content: Hi there\n"
    (tmp_path / "prompt.yaml").write_text(chat)
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text("prompts: [file://prompt.yaml]\ntests:\n  - assert: [{type: icontains, value: hello}]\n")
    assert sets.read_source("promptfoo", cfg).cases[0]["input"] == "Hi there"


def test_with_no_prompt_a_var_named_as_a_reference_answer_stays_out(tmp_path):
    """Inspect's samples.csv rows written as promptfoo tests (vars), with no prompt to name them."""
    (tmp_path / "tests.yaml").write_text(
        "- vars: {input: \"Say 'Hello, World'\", target: 'Hello, World', extra: data}\n"
    )
    imp = sets.read_source("promptfoo", tmp_path / "tests.yaml")
    assert imp.cases[0]["input"] == "input: Say 'Hello, World'\nextra: data"
    assert any("reference answers (target)" in w for w in imp.warnings)


@pytest.mark.parametrize(
    "name", ["diegomarino__tui-design__trigger-evals.json", "longwind48__cachewipe__trigger-eval.json"]
)
def test_a_json_trigger_eval_given_to_the_promptfoo_reader_is_refused_by_name(name):
    with pytest.raises(InputError, match="skill trigger eval") as e:
        sets.read_source("promptfoo", REAL / "skill-creator" / name)
    assert "--trigger-queries" in e.value.hint
