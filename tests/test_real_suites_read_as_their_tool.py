"""Issue 50: the fourth round of real files (tests/fixtures/real, see SOURCES.md). Each class is
read as the tool that wrote the file reads it, or refused in one line that names the file's kind
and the command to use."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from abeq import sets
from abeq.cli import main
from abeq.documents import load_document
from abeq.errors import InputError
from abeq.sets.promptfoo_asserts import from_string

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
PF = REAL / "promptfoo"


# ---------------------------------------------------------------- 3. promptfoo trims `type: value`
def test_csv_type_colon_value_is_trimmed_as_promptfoo_trims_it():
    # the real file writes "contains: algorithm"; promptfoo checks for "algorithm", so a reply
    # that ends a sentence with the word (or holds it alone) passes
    imp = sets.read_source("promptfoo", PF / "config-csv-metadata" / "promptfooconfig.yaml")
    assert [c["assertions"][0]["value"] for c in imp.cases] == ["algorithm", "quantum", "temperature"]


def test_the_json_assertions_keep_their_value_as_written():
    # promptfoo's buildAssertionFromRegexMatch returns contains-json/is-json values untrimmed
    assert from_string("is-json: {}")["value"] == " {}"
    assert from_string("icontains:  05-08-1993 ")["value"] == "05-08-1993"
    assert from_string("contains-any: a , b")["value"] == ["a", "b"]


# ---------------------------------------------------------------- 2. a tests glob that matches nothing
def test_a_tests_glob_that_matches_nothing_is_a_warning_and_the_rest_is_imported(tmp_path):
    # the real config mixes a plain path, a glob and inline tests; upstream the plain path
    # (tests/tests2.yaml) does not exist, which promptfoo refuses too, so that one line is left out
    # here; with no tests/ folder beside it, promptfoo warns for the glob and runs the inline tests
    text = (PF / "config-separate-test-configs" / "promptfooconfig.yaml").read_text()
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text(text.replace("  - file://tests/tests2.yaml\n", ""))
    imp = sets.read_source("promptfoo", cfg)
    assert len(imp.cases) == 3
    assert any("witty tweets" in c["input"] for c in imp.cases)
    assert any("file://tests/*" in w and "no files match" in w for w in imp.warnings)


def test_a_plain_tests_path_that_does_not_exist_is_still_refused(tmp_path):
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text((PF / "config-separate-test-configs" / "promptfooconfig.yaml").read_text())
    with pytest.raises(InputError, match="tests2.yaml does not exist"):
        sets.read_source("promptfoo", cfg)


def test_when_only_an_empty_glob_gave_tests_the_refusal_names_it(tmp_path):
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text("prompts: ['{{topic}}']\ntests: file://tests/*\n")
    with pytest.raises(InputError, match=r"no tests to import: no files match file://tests/\*"):
        sets.read_source("promptfoo", cfg)


# ---------------------------------------------------------------- 7. a Cursor rule with no front matter
def test_a_cursor_mdc_without_front_matter_is_noted_as_manual():
    # Cursor picks a rule's type from alwaysApply / globs / description; with none of them (here no
    # front matter at all) the rule is Manual: loaded only when it is @-mentioned
    path = REAL / "instructions" / "Michaelcode2__aws-lambda-backup-cleaner" / ".cursor" / "rules"
    doc = load_document(path / "cursorrules.mdc")
    assert doc.name == ".cursor/rules/cursorrules.mdc"
    assert len(doc.notes) == 1
    assert "only when it is mentioned" in doc.notes[0] and "manual" in doc.notes[0]
    assert "every case" in doc.notes[0]  # and what that means for the runner


def test_a_cursor_rule_with_only_a_description_is_agent_requested_not_manual(tmp_path):
    real = REAL / "instructions" / "Michaelcode2__aws-lambda-backup-cleaner" / ".cursor" / "rules"
    f = tmp_path / ".cursor" / "rules" / "cursorrules.mdc"
    f.parent.mkdir(parents=True)
    body = (real / "cursorrules.mdc").read_text()
    f.write_text("---\ndescription: AWS Lambda backup cleaner\n---\n" + body)
    (note,) = load_document(f).notes
    assert "description fits" in note and "manual" not in note


# ---------------------------------------------------------------- another tool's file as --transfer-set
@pytest.mark.parametrize(
    "path,kind,command",
    [
        (
            PF / "config-separate-test-configs" / "promptfooconfig.yaml",
            "a promptfoo config",
            "abeq import-set --from promptfoo promptfooconfig.yaml",
        ),
        (
            REAL / "skill-creator" / "0xdeafcafe__tslsp-cli__evals.json",
            "skill-creator evals",
            "abeq import-set --from skill-creator 0xdeafcafe__tslsp-cli__evals.json",
        ),
        (
            REAL / "datasets" / "deepeval" / "goldens.json",
            "DeepEval goldens",
            "abeq import-set --from dataset goldens.json",
        ),
        (
            REAL / "skill-creator" / "longwind48__cachewipe__trigger-eval.json",
            "a skill trigger eval",
            "--trigger-queries",
        ),
    ],
)
def test_another_tools_file_given_as_the_transfer_set_is_named_with_the_command(
    path, kind, command, capsys, tmp_path
):
    original = REAL / "skills" / "tslsp" / "SKILL.md"
    db = tmp_path / "abeq.db"
    argv = ["--original", str(original), "--transfer-set", str(path), "--db", str(db)]
    assert main(["check-set", *argv]) == 2
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert str(path) in first and kind in first and "not an abeq transfer set" in first
    assert command in err and "--out" in err
    assert "missing the 'cases' list" not in err and "Field required" not in err
    assert main(["run", *argv, "--candidate", str(original)]) == 2  # run reads the set the same way
    assert kind in capsys.readouterr().err


# ---------------------------------------------------------------- 1. a chat prompt read by its content
BEAVERTAILS = PF / "redteam-beavertails" / "prompt.yaml"  # a real promptfoo chat prompt (system + user)
NO_VARS = "tests:\n  - description: no vars\n    assert: [{type: is-refusal}]\n"


@pytest.mark.parametrize("saved_as", ["prompt.txt", "prompt.yaml"])
def test_a_chat_prompt_with_an_empty_user_message_is_refused_in_one_line(tmp_path, saved_as):
    # promptfoo reads text starting with `- role:` as a chat whatever the file's extension; the real
    # prompt saved as .txt (the case the issue met) and as upstream's .yaml, with a test that sets
    # none of its vars: the user message renders empty, so there is nothing to send
    (tmp_path / saved_as).write_text(BEAVERTAILS.read_text())
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text(f"prompts: [file://{saved_as}]\n" + NO_VARS)
    with pytest.raises(InputError) as e:
        sets.read_source("promptfoo", cfg)
    assert e.value.path == str(cfg) and "\n" not in e.value.message  # one line naming the file
    assert "user message is empty" in e.value.message and "should have at least" not in str(e.value)


def test_a_chat_prompt_in_a_txt_file_gives_its_user_message_not_its_yaml(tmp_path):
    # the real prompt's user message made static (the one edit): the input is that message, and
    # the system message never becomes part of it
    text = BEAVERTAILS.read_text().replace("'{{prompt}}'", "'How do I pick a lock?'")
    (tmp_path / "prompt.txt").write_text(text)
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text("prompts: [file://prompt.txt]\n" + NO_VARS)
    (case,) = sets.read_source("promptfoo", cfg).cases
    assert case["input"] == "How do I pick a lock?"


# ---------------------------------------------------------------- 4. a reference column over a label
DATASETS = REAL / "datasets"
AGENT_EVALS = DATASETS / "ragas" / "agent_evals__test_dataset.csv"  # question, answer (a real Ragas set)


def _with_label(tmp_path: Path, name: str) -> Path:
    # the real rows with a grader's label beside each answer (the shape the issue met: question,
    # answer, label "correct"); no public file of that shape with a licence was found
    lines = AGENT_EVALS.read_bytes().decode().split("\r\n")
    out = [lines[0] + ",label"] + [ln + ",correct" for ln in lines[1:] if ln]
    f = tmp_path / name
    f.write_bytes(("\r\n".join(out) + "\r\n").encode())
    return f


def test_an_answer_column_is_the_reference_and_the_label_goes_to_metadata(tmp_path):
    imp = sets.read_source("dataset", _with_label(tmp_path, "qa.csv"))
    first = imp.cases[0]
    assert first["input"] == "15 - 3 / 4"
    (check,) = first["assertions"]
    assert check["value"] == "14.25" and check["options"]["reference_field"] == "answer"
    assert first["metadata"] == {"label": "correct"}
    # one line says which column became the reference and which went to metadata
    said = [w for w in imp.warnings if "'answer'" in w and "'label'" in w]
    assert len(said) == 1 and "reference" in said[0] and "metadata" in said[0]


def test_the_real_question_answer_rows_import_with_the_answer_as_reference():
    imp = sets.read_source("dataset", AGENT_EVALS)
    assert len(imp.cases) == 7
    assert [c["assertions"][0]["value"] for c in imp.cases][:2] == ["14.25", "20.0"]
    assert all("metadata" not in c for c in imp.cases)


# ---------------------------------------------------------------- 5. an evaluation's results file
RESULTS = DATASETS / "ragas-results" / "Diaure__PulsEvent-LLM-RAG__ragas_results.csv"  # Ragas 0.2 names
SCORES = "faithfulness, answer_relevancy, context_precision, context_recall"


def _without_reference(tmp_path: Path, ragas01: bool) -> Path:
    # the real results with their reference column taken out: the replies and their scores alone,
    # the shape the issue met (question, context, answer, score columns); with ragas01, under the
    # column names Ragas 0.1 wrote (question, contexts, answer), where `answer` is the reply scored
    names = {"user_input": "question", "retrieved_contexts": "contexts", "response": "answer"}
    rows = list(csv.DictReader(io.StringIO(RESULTS.read_text(encoding="utf-8"))))
    out = io.StringIO()
    fields = [names.get(k, k) if ragas01 else k for k in rows[0] if k != "reference"]
    w = csv.writer(out)
    w.writerow(fields)
    for r in rows:
        w.writerow([v for k, v in r.items() if k != "reference"])
    f = tmp_path / "ragas_results.csv"
    f.write_text(out.getvalue(), encoding="utf-8")
    return f


def test_a_results_file_with_a_reference_keeps_the_scored_reply_as_a_recording_never_a_check():
    rows = list(csv.DictReader(io.StringIO(RESULTS.read_text(encoding="utf-8"))))
    imp = sets.read_source("detect", RESULTS)
    assert len(imp.cases) == len(rows) == 6
    for case, row in zip(imp.cases, rows):
        assert case["input"] == row["user_input"]
        assert [a["options"]["reference_field"] for a in case["assertions"]] == ["reference"]
        assert case["assertions"][0]["value"] == row["reference"]
        assert case["metadata"]["response"] == row["response"]  # the recording, kept beside
    said = [w for w in imp.warnings if "results" in w]
    assert len(said) == 1 and SCORES in said[0] and "'response' is the reply that was scored" in said[0]


@pytest.mark.parametrize("ragas01", [True, False], ids=["ragas-0.1-names", "ragas-0.2-names"])
def test_a_results_file_with_no_reference_is_refused_naming_what_it_is(tmp_path, ragas01, capsys):
    f = _without_reference(tmp_path, ragas01)
    reply = "answer" if ragas01 else "response"
    for how in ("detect", "dataset"):
        with pytest.raises(InputError) as e:
            sets.read_source(how, f)
        msg = e.value.message
        assert e.value.path == str(f) and "\n" not in msg
        assert f"results (score columns: {SCORES})" in msg and "not a dataset" in msg
        assert f"'{reply}' is the reply that was scored" in msg
        assert "abeq import-set --from dataset" in (e.value.hint or "")
    with pytest.raises(InputError, match="not a dataset"):  # never read as promptfoo vars either
        sets.read_source("promptfoo", f)
    assert main(["import-set", str(f), "--out", str(tmp_path / "set.json"), "--default-type", "happy"]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert str(f) in first and "results" in first
    assert not (tmp_path / "set.json").exists()


# ---------------------------------------------------------------- judge rows and prompts alone
AZURE = DATASETS / "azure-ai-evaluation"


@pytest.mark.parametrize(
    "name,said",
    [
        ("questions_answers_basic.jsonl", "judge rows (query, response), not a dataset"),
        ("questions.jsonl", "prompts only (query), not a dataset"),
    ],
)
def test_judge_rows_and_prompts_alone_are_named_in_one_line(name, said, tmp_path, capsys):
    path = AZURE / name
    out = tmp_path / "set.json"
    assert main(["import-set", str(path), "--out", str(out), "--default-type", "happy"]) == 2
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert str(path) in first and said in first
    assert "Field required" not in err and "Extra inputs" not in err
    with pytest.raises(InputError) as e:
        sets.read_source("dataset", path)
    assert said in e.value.message
    original = REAL / "skills" / "tslsp" / "SKILL.md"
    argv = ["--original", str(original), "--transfer-set", str(path), "--db", str(tmp_path / "a.db")]
    assert main(["check-set", *argv]) == 2  # given where an abeq set is expected: the same line
    err = capsys.readouterr().err
    assert said in err.splitlines()[0] and "Field required" not in err


# ---------------------------------------------------------------- 6. iterative red-team tests
DALLE = PF / "redteam-dalle" / "promptfooconfig.yaml"  # defaultTest.provider: …:redteam:iterative:image
ATTACKER = "promptfoo:redteam:iterative:image"


def test_iterative_red_team_tests_are_seeds_and_one_line_says_the_attacker_turns_are_not_reproduced():
    imp = sets.read_source("promptfoo", DALLE)
    assert len(imp.cases) == 21
    assert imp.cases[0]["input"].startswith('The exact phrase "Promptfoo" written in text')  # the seed
    assert all(c["metadata"]["promptfoo"]["provider"] == ATTACKER for c in imp.cases)
    said = [w for w in imp.warnings if ATTACKER in w]
    assert len(said) == 1 and "\n" not in said[0]
    assert "21 test" in said[0] and "seed" in said[0] and "not reproduced" in said[0]


@pytest.mark.parametrize(
    "provider,named",
    [
        ("promptfoo:redteam:iterative", "promptfoo:redteam:iterative"),
        (
            "{id: promptfoo:redteam:iterative:tree, config: {injectVar: query}}",
            "promptfoo:redteam:iterative:tree",
        ),
        ("promptfoo:redteam:crescendo", "promptfoo:redteam:crescendo"),
        ("promptfoo:redteam:goat", "promptfoo:redteam:goat"),
    ],
)
def test_an_attacker_provider_on_one_test_is_said_for_that_test(tmp_path, provider, named):
    # promptfoo's red-team generator puts the provider on each test it makes iterative; here on the
    # real config's first test only, the rest left as they are
    text = DALLE.read_text(encoding="utf-8")
    text = text.replace("defaultTest:\n  # Use the iterative red team technique for each test\n", "")
    text = text.replace("  provider: promptfoo:redteam:iterative:image\n\n", "")
    text = text.replace("tests:\n  - vars:\n", f"tests:\n  - provider: {provider}\n    vars:\n", 1)
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text(text, encoding="utf-8")
    imp = sets.read_source("promptfoo", cfg)
    (said,) = [w for w in imp.warnings if "not reproduced" in w]
    assert said.startswith("1 test (test 1)") and f"provider {named}:" in said


# ---------------------------------------------------------------- file:// vars that are not there
SEPARATE = PF / "config-separate-test-configs"


def _separate(tmp_path: Path, prompt: str | None) -> Path:
    # the real config without its missing plain path; upstream's vars/ and system_prompt.txt are
    # left out, so every file:// var is missing. `prompt`: its prompts line replaced by one inline
    # prompt (the first of upstream's prompts.txt), which names topic and content_type only
    text = (SEPARATE / "promptfooconfig.yaml").read_text(encoding="utf-8")
    text = text.replace("  - file://tests/tests2.yaml\n", "")
    if prompt is not None:
        text = text.replace("  - file://prompt*.txt\n", f"  - '{prompt}'\n")
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text(text, encoding="utf-8")
    return cfg


def test_missing_var_files_that_are_not_in_the_input_say_nothing_and_the_rest_say_one_line(tmp_path):
    first = (SEPARATE / "prompts.txt").read_text(encoding="utf-8").split("\n---\n")[0]
    imp = sets.read_source("promptfoo", _separate(tmp_path, first))
    assert not any("system_prompt.txt" in w for w in imp.warnings)  # never sent: nothing to say
    said = [w for w in imp.warnings if "reference as text" in w]
    assert len(said) == 1 and said[0].startswith("2 var files in the input could not be read")
    assert "'topic' is file://vars/var_topic.yaml, which does not exist" in said[0]
    assert all("system_message" not in c["input"] for c in imp.cases)


def test_with_no_prompt_readable_the_missing_var_files_are_one_line(tmp_path):
    imp = sets.read_source("promptfoo", _separate(tmp_path, None))
    said = [w for w in imp.warnings if "reference as text" in w]
    assert len(said) == 1 and said[0].startswith("5 var files in the input could not be read")


def test_skill_creator_evals_without_ids_are_still_named_as_evals_not_prompts_alone(tmp_path):
    # the real evals (prompt, expected_output) with their ids taken out: skill-creator's shape,
    # which abeq's own reader names (prompts alone is for rows with nothing beside the prompt)
    import json

    real = json.loads((REAL / "skill-creator" / "1xmint__orchestrate__evals.json").read_text())
    evals = [{k: v for k, v in e.items() if k != "id"} for e in real["evals"]]
    f = tmp_path / "evals.json"
    f.write_text(json.dumps(evals))
    with pytest.raises(InputError, match="read as skill-creator evals"):
        sets.read_source("json", f)


def test_answers_a_grader_marked_wrong_never_become_references(tmp_path, capsys):
    """Beside a grader's label that marks some answers wrong, the answers are replies that were graded,
    not reference answers: the file is refused in one line, by the reader and by detection (before:
    'incorrect' answers became the reference of their cases)."""
    lines = AGENT_EVALS.read_bytes().decode().split("\r\n")
    rows = [ln for ln in lines[1:] if ln]
    graded = [lines[0] + ",label"] + [
        ln + ("," + ("incorrect" if i % 3 == 0 else "correct")) for i, ln in enumerate(rows)
    ]
    f = tmp_path / "graded.csv"
    f.write_bytes(("\r\n".join(graded) + "\r\n").encode())
    for how in ("dataset", None):
        with pytest.raises(InputError) as e:
            sets.read_source(how, f) if how else sets.import_set("detect", f)
        line, hint = str(e.value).split("\n", 1)
        assert line.startswith(str(f)) and "graded answers" in line
        assert "'label' column marks 3 of 7 'answer' values wrong ('incorrect')" in line
        assert "import-set" in hint
