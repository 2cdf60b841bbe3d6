"""What abeq writes and shows cannot be turned against its user (issue 27, items 7-10)."""

from __future__ import annotations

import json
import os
import stat

import pytest
from conftest import DESK_APP, EXAMPLE
from streamlit.testing.v1 import AppTest

from abeq.cli import main
from abeq.desk import links
from abeq.results.store.store import Store
from abeq.testing.synthetic import synthetic_run
from abeq.untrusted import term_safe


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ------------------------------------------------------------------ 7: secrets never stored
PRINTED = {
    "anthropic": "sk-ant-api03-" + "Ab1_" * 10,
    "openai": "sk-proj-" + "Zx9-" * 10,
    "aws": "AKIA" + "QWERTYUIOP123456",
    "github": "ghp_" + "a1B2" * 9,
    "github_pat": "github_pat_" + "11AB_" * 8,
}


def test_pattern_secrets_and_values_passed_by_name_are_redacted_in_the_database(tmp_path, monkeypatch):
    password = "correct horse battery staple"
    monkeypatch.setenv("MY_DB_PASSWORD", password)  # its name says nothing: passed by name, kept out
    printed = " ".join(PRINTED.values())
    agent = tmp_path / "agent.sh"  # the keys are in what the agent finds and prints, not in the command
    agent.write_text(f"echo {printed}; printenv MY_DB_PASSWORD; echo {printed} > found.txt\n")
    inline = "sk-ant-api03-" + "InCmd" * 6  # a key written into the command itself
    cmd = f"INLINE_KEY={inline} sh {agent}"
    code = main(
        ["run", "--original", str(EXAMPLE / "SKILL.md"), "--candidate", str(EXAMPLE / "candidate-lossy.md"),
         "--transfer-set", str(EXAMPLE / "transfer-set.json"), "--confirm", "--quiet", "--runner-cmd", cmd,
         "--runner-env", "MY_DB_PASSWORD", "--judge-model", "scripted/rules",
         "--db", str(tmp_path / "abeq.db"), "--out", str(tmp_path / "report.json")]
    )  # fmt: skip
    assert code in (0, 1)
    stored = (
        b"".join(p.read_bytes() for p in tmp_path.glob("abeq.db*")) + (tmp_path / "report.json").read_bytes()
    )
    leaked = [
        k for k, v in {**PRINTED, "password": password, "inline": inline}.items() if v.encode() in stored
    ]
    assert leaked == [] and b"[redacted]" in stored


def test_a_chat_runner_that_repeats_a_secret_has_it_redacted_everywhere(
    tmp_path, monkeypatch, scripted_model, run_args
):
    known = "plain-looking-but-secret-4711"  # no key's shape: redacted because the environment names it
    monkeypatch.setenv("ABEQ_TEST_SERVICE_TOKEN", known)
    key = PRINTED["openai"]
    said = f"I used {key} and {known}"
    report = {f: said for f in ("output_produced", "steps_followed_skipped", "ambiguities", "improvisation")}
    gate = {"gate_type": "ask", "prompt_text": said, "response_used": said}
    report |= {"wanted_to_deviate": "none", "gates_hit": [gate]}
    scripted_model.runner.always(json.dumps({"transcript": said, "self_report": report}))
    exports = {flag: tmp_path / f"export.{flag}" for flag in ("out", "record", "markdown", "csv", "junit")}
    code = main(run_args(judge_model="scripted/rules", **{k: str(v) for k, v in exports.items()}))
    assert code in (0, 1) and all(p.stat().st_size for p in exports.values())
    again = tmp_path / "again.record.json"  # re-exported from the store alone
    assert main(["export", "1", "--db", str(tmp_path / "abeq.db"), "--record", str(again)]) == 0
    files = [*tmp_path.glob("abeq.db*"), *exports.values(), again]
    stored = b"".join(p.read_bytes() for p in files)
    assert key.encode() not in stored and known.encode() not in stored
    assert b"I used [redacted] and [redacted]" in (tmp_path / "abeq.db").read_bytes() + again.read_bytes()


# ------------------------------------------------------------------ 8: the database is private
def test_a_new_database_and_its_wal_and_shm_are_0600(tmp_path):
    store = Store(str(tmp_path / "abeq.db"))
    synthetic_run(store, 3, review="r")  # writes: the -wal and -shm files exist now
    files = [tmp_path / n for n in ("abeq.db", "abeq.db-wal", "abeq.db-shm")]
    assert all(f.exists() for f in files)
    assert {f.name: _mode(f) for f in files} == {f.name: 0o600 for f in files}
    store.close()


# ------------------------------------------------------------------ 10: odd run ids, terminal escapes
@pytest.mark.parametrize("text", ["²", "9" * 5000, "-1", "1e3", " 1", ""])
def test_a_run_id_from_a_url_is_ascii_digits_that_fit(text):
    assert links.run_id(text) is None


@pytest.mark.parametrize("page", ["desk_pages/4_review.py", "desk_pages/6_compare.py"])
@pytest.mark.parametrize("run", ["²", "9" * 5000])
def test_an_odd_run_id_in_the_url_shows_a_message_not_a_traceback(db, page, run):
    synthetic_run(Store(db), 3, review="r")
    at = AppTest.from_file(str(DESK_APP), default_timeout=60)
    at.query_params["run"] = run
    at.run()
    assert not at.exception
    at.switch_page(page).run()
    assert not at.exception, at.exception
    if page.endswith("review.py"):
        assert any("is not a run of this review" in w.value for w in at.warning)


def test_terminal_escapes_in_a_case_id_reach_the_cli_neutralised(tmp_path, capsys):
    ts = json.loads((EXAMPLE / "transfer-set.json").read_text())
    hostile = "\x1b]0;pwned\x07\x1b[2J\x9b31m\rPASS"
    for c in ts["cases"]:
        c["id"] = hostile + c["id"]
    (tmp_path / "ts.json").write_text(json.dumps(ts))
    code = main(
        [
            "run",
            "--original", str(EXAMPLE / "SKILL.md"),
            "--candidate", str(EXAMPLE / "candidate-lossy.md"),
            "--transfer-set", str(tmp_path / "ts.json"),
            "--runner-model", "scripted/rules",
            "--db", str(tmp_path / "abeq.db"),
            "--confirm",
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and term_safe(hostile) in err  # the id is printed (checks lost), visibly escaped
    assert not any(ch in err for ch in "\x1b\x07\x9b") and "\rPASS" not in err


# ------------------------------------------------------------------ 9: exports and planted symlinks
def _planted(tmp_path, name: str):
    """A link at `name` to a file this user owns, made by another user (as an attacker's in /tmp)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    link = tmp_path / name
    link.symlink_to(victim)
    os.lchown(link, 65534, 65534)
    return victim, link


@pytest.mark.skipif(os.geteuid() != 0, reason="making a link owned by another user needs root")
@pytest.mark.parametrize("flag", ["--out", "--record", "--csv", "--markdown", "--junit"])
def test_an_export_refuses_a_symlink_another_user_planted(tmp_path, capsys, flag):
    victim, link = _planted(tmp_path, "report.out")
    code = main(
        ["run", "--original", str(EXAMPLE / "SKILL.md"), "--candidate", str(EXAMPLE / "candidate-lossy.md"),
         "--transfer-set", str(EXAMPLE / "transfer-set.json"), "--runner-model", "scripted/rules",
         "--confirm", "--quiet", "--db", str(tmp_path / "abeq.db"), flag, str(link)]
    )  # fmt: skip
    assert code == 2 and "owned by another user" in capsys.readouterr().err
    assert victim.read_text() == "precious\n" and not (tmp_path / "abeq.db").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a link owned by another user needs root")
def test_a_planted_folder_link_is_refused_and_ones_own_link_is_followed(tmp_path):
    from abeq.cli import write_output
    from abeq.errors import InputError

    (tmp_path / "real").mkdir()
    (tmp_path / "dir").symlink_to(tmp_path / "real")
    os.lchown(tmp_path / "dir", 65534, 65534)
    with pytest.raises(InputError, match="owned by another user"):
        write_output(str(tmp_path / "dir" / "r.json"), "{}")
    (tmp_path / "mine").symlink_to(tmp_path / "real" / "mine.json")
    write_output(str(tmp_path / "mine"), "{}")
    assert (tmp_path / "real" / "mine.json").read_text() == "{}"


# ------------------------------------------------------------------ 3: the YAML alias bomb
def _bomb(case_key: str) -> str:
    """~100 KB of YAML: a 100 KB string aliased 1,000 x 1,000 times (100 GB once expanded)."""
    return (
        f"s: &s {'x' * 100_000}\n"
        f"a: &a [{', '.join(['*s'] * 1000)}]\n"
        f"b: &b [{', '.join(['*a'] * 1000)}]\n"
        f"{case_key}\n"
    )


BOUNDED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GB: the bomb wanted 6.5 GB and more
from abeq.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    "name, tail, command, says",
    [
        ("set.yaml", "cases:\n  - {id: x, type: happy, input: *b}", "run", "alias"),
        ("promptfooconfig.yaml", "tests:\n  - vars: {q: *b}", "import-set", "expands to more than"),
    ],
)
def test_a_yaml_alias_bomb_is_refused_in_seconds_within_bounded_memory(tmp_path, name, tail, command, says):
    import subprocess
    import sys
    import time

    p = tmp_path / name
    p.write_text(_bomb(tail))
    assert p.stat().st_size < 200_000
    args = {
        "run": ["run", "--original", str(EXAMPLE / "SKILL.md"),
                "--candidate", str(EXAMPLE / "candidate-lossy.md"), "--transfer-set", str(p),
                "--runner-model", "scripted/rules", "--confirm", "--db", str(tmp_path / "abeq.db")],
        "import-set": ["import-set", str(p), "--out", str(tmp_path / "out.json"), "--default-type", "happy"],
    }[command]  # fmt: skip
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-c", BOUNDED, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert says in done.stderr and "Traceback" not in done.stderr
    assert time.monotonic() - t0 < 60 and not (tmp_path / "abeq.db").exists()


def test_every_kind_of_key_is_found_by_its_shape_and_text_without_one_passes_unchanged():
    """redact() runs SECRET_PATTERNS only on a text holding one of their stems (the cheap test
    first): one key of each kind the patterns know is still redacted, in a long text too."""
    from abeq.models.http import REDACTED, redact

    keys = {
        **PRINTED,
        "gitlab": "glpat-" + "x1Y2" * 6,
        "slack": "xoxb-" + "1234-abcd-" * 2,
        "google": "AIza" + "B" * 35,
        "huggingface": "hf_" + "Q1w2" * 9,
        "aws_session": "ASIA" + "Z" * 16,
        "private": "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
        **{f"github_{c}": f"gh{c}_" + "k9" * 16 for c in "ousr"},
    }
    filler = "A transcript with nothing secret in it, though it might go on for a while. " * 40
    for kind, key in keys.items():
        assert redact(f"{filler} {key} {filler}") == f"{filler} {REDACTED} {filler}", kind
    assert redact(filler) == filler
