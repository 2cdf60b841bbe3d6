"""Issue 33 item 1: a transfer set's code (promptfoo python/javascript asserts and transforms) runs
only when the person running abeq trusted it, and then with a reduced environment and limits."""

import json
import os
import sqlite3

import pytest
from conftest import EXAMPLE

from abeq.cli import main
from abeq.execution.checks import scripts
from abeq.execution.checks.code_trust import code_hash, code_items
from abeq.schemas import Assertion
from abeq.sets import load

SECRET = "sk-proj-" + "Q" * 40  # shaped like an OpenAI key
# reads a key and writes a file beside it: what a stranger's set could do on your machine
ASSERT = (
    "import os, pathlib\n"
    "pathlib.Path(os.environ.get('HOME', '.'), 'pwned').write_text('x')\n"
    "try:\n"
    "    pathlib.Path({marker!r}).write_text('x')\n"
    "except OSError:\n"
    "    pass\n"
    "return {{'pass': True, 'score': 1, 'reason': 'key=' + os.environ.get('OPENAI_API_KEY', 'none')}}"
)


@pytest.fixture
def code_set(tmp_path):
    """The example's set with a python assert on its first case."""
    data = json.loads((EXAMPLE / "transfer-set.json").read_text())
    marker = tmp_path / "outside-marker"
    data["cases"][0]["assertions"].append({"type": "python", "value": ASSERT.format(marker=str(marker))})
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data, indent=2))
    return path, marker


def run(tmp_path, code_set, *extra):
    return main(
        ["run", "--original", str(EXAMPLE / "SKILL.md")]
        + ["--candidate", str(EXAMPLE / "candidate-faithful.md")]
        + ["--transfer-set", str(code_set[0]), "--db", str(tmp_path / "abeq.db"), "--confirm", "--quiet"]
        + ["--runner-model", "scripted/rules", "--record", str(tmp_path / "record.json"), *extra]
    )


def test_a_set_with_code_is_refused_before_any_model_call_naming_the_script(
    tmp_path, code_set, scripted_model, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert run(tmp_path, code_set) == 2
    err = capsys.readouterr().err
    line = next(n for n, ln in enumerate(code_set[0].read_text().splitlines(), 1) if "import os" in ln)
    assert f"{code_set[0]}:{line}: case happy-1, check 2: python assert" in err
    assert "--trust-code" in err
    assert not code_set[1].exists()  # the script never ran
    assert scripted_model.runner.calls == [] and scripted_model.judge.calls == []
    assert (
        not (tmp_path / "abeq.db").exists()
        or not sqlite3.connect(tmp_path / "abeq.db").execute("select count(*) from runs").fetchone()[0]
    )


def test_trusted_code_runs_without_the_environments_secrets_and_nothing_stored_holds_them(
    tmp_path, code_set, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert run(tmp_path, code_set, "--trust-code") == 0
    record = (tmp_path / "record.json").read_text()
    assert "key=none" in record  # the script ran, and saw no key
    assert not (tmp_path / "pwned").exists() and not (EXAMPLE / "pwned").exists()
    # in bubblewrap nothing outside the script's own folder is there to write to
    assert code_set[1].exists() == (scripts.sandbox_level() != "bubblewrap")
    db = sqlite3.connect(tmp_path / "abeq.db")
    dump = "\n".join(db.iterdump())
    assert SECRET not in dump and SECRET not in record


def test_a_variable_passed_by_name_reaches_the_code_and_is_redacted_from_what_it_returns(
    tmp_path, code_set, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert run(tmp_path, code_set, "--trust-code", "--check-env", "OPENAI_API_KEY") == 0
    record = (tmp_path / "record.json").read_text()
    assert "key=[redacted]" in record and SECRET not in record
    assert SECRET not in "\n".join(sqlite3.connect(tmp_path / "abeq.db").iterdump())


def test_check_set_lists_the_code_and_confirm_trust_code_remembers_exactly_that_code(
    tmp_path, code_set, capsys
):
    path, marker = code_set
    argv = ["check-set", "--original", str(EXAMPLE / "SKILL.md"), "--transfer-set", str(path)]
    main(argv + ["--json"])
    out = json.loads(capsys.readouterr().out)
    [item] = out["checks"]["scripts"]
    got = (item["case_id"], item["check"], item["language"], item["role"])
    assert got == ("happy-1", 2, "python", "assert")
    assert item["line"] and out["checks"]["code_trusted"] is False
    assert main(argv + ["--confirm", "--trust-code"]) == 0
    assert "trusted:" in capsys.readouterr().err
    assert run(tmp_path, code_set) == 0  # remembered: no --trust-code needed for this code
    assert marker.exists() or scripts.sandbox_level() == "bubblewrap"
    # one changed character in the script: trust is asked for again
    data = json.loads(path.read_text())
    data["cases"][0]["assertions"][-1]["value"] += " "
    path.write_text(json.dumps(data))
    assert main(argv + ["--confirm"]) == 0
    assert run(tmp_path, code_set) == 2


def test_the_trust_file_of_another_user_or_one_others_can_write_grants_nothing(tmp_path, code_set):
    from abeq.execution.checks.code_trust import is_trusted, remember_trust, trust_file

    items = code_items(load(code_set[0]))
    digest = remember_trust(items)
    assert is_trusted(digest)
    os.chmod(trust_file(), 0o666)
    assert not is_trusted(digest)


def test_check_set_with_a_database_does_not_run_untrusted_code(tmp_path, code_set, capsys):
    path, marker = code_set
    assert run(tmp_path, code_set, "--trust-code") == 0  # the original's transcripts are now stored
    marker.unlink(missing_ok=True)
    argv = ["check-set", "--original", str(EXAMPLE / "SKILL.md"), "--transfer-set", str(path)]
    main(argv + ["--db", str(tmp_path / "abeq.db")])
    out = capsys.readouterr().out
    assert "not trusted" in out and "not tried" in out
    assert not marker.exists()


def test_a_resumed_run_is_not_trusted_by_what_its_database_says(tmp_path, code_set, capsys):
    from abeq.api import resume_run
    from abeq.errors import InputError

    assert run(tmp_path, code_set, "--trust-code") == 0
    db = sqlite3.connect(tmp_path / "abeq.db")
    db.execute("update runs set status = 'interrupted', finished_at = null")
    db.commit()
    [(run_id,)] = db.execute("select id from runs").fetchall()
    with pytest.raises(InputError, match="not trusted"):
        resume_run(run_id, str(tmp_path / "abeq.db"))
    resume_run(run_id, str(tmp_path / "abeq.db"), trust_code=True).store.close()


def test_the_code_hash_covers_every_script_and_its_place():
    ts = load(EXAMPLE / "transfer-set.json")
    assert code_items(ts) == []
    a, b = (
        ts.cases[0].model_copy(update={"assertions": [Assertion(type="javascript", value=f"output > {n}")]})
        for n in (1, 2)
    )
    ha = code_hash(code_items(ts.model_copy(update={"cases": [a]})))
    hb = code_hash(code_items(ts.model_copy(update={"cases": [b]})))
    assert ha != hb


# ---------------------------------------------------------------- the sandbox a trusted script runs in
def ctx():
    return {"prompt": "", "vars": {}, "test": {}, "config": {}, "providerResponse": {}}


def test_a_script_sees_only_the_basic_environment_and_a_home_of_its_own(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "a" * 36)
    monkeypatch.setenv("PLAIN_SETTING", "visible?")
    got = scripts.run("python", "dict(__import__('os').environ)", "", ctx())
    assert "GITHUB_TOKEN" not in got and "PLAIN_SETTING" not in got
    # a folder of its own: a tmpfs inside bubblewrap, else a temporary folder
    assert got["HOME"] != os.path.expanduser("~") and (
        "abeq-script-" in got["HOME"] or got["HOME"] == "/abeq/home"
    )
    got = scripts.run(
        "python", "__import__('os').environ.copy()", "", ctx(), sandbox=scripts.Sandbox(("PLAIN_SETTING",))
    )
    assert got["PLAIN_SETTING"] == "visible?"


def test_a_script_is_held_to_its_limits():
    with pytest.raises(scripts.ScriptError):  # memory: 3 GiB of address space is refused
        scripts.run("python", "len(bytearray(3 * 1024 ** 3))", "", ctx())
    code = "open('big', 'wb').write(b'x' * (100 * 1024 * 1024))"  # a file past 64 MiB
    with pytest.raises(scripts.ScriptError):
        scripts.run("python", code, "", ctx())


@pytest.mark.skipif(scripts.sandbox_level() != "bubblewrap", reason="no working bubblewrap on this machine")
def test_in_bubblewrap_a_script_reads_none_of_your_files_and_reaches_no_network(tmp_path):
    secret = tmp_path / "notes.txt"
    secret.write_text("private")
    with pytest.raises(scripts.ScriptError, match="No such file"):
        scripts.run("python", f"open({str(secret)!r}).read()", "", ctx())
    code = "__import__('socket').create_connection(('127.0.0.1', 9), timeout=2)"
    with pytest.raises(scripts.ScriptError, match="(unreachable|refused|Errno)"):
        scripts.run("python", code, "", ctx())


def test_the_desk_refuses_start_until_the_code_is_trusted_and_lists_each_script(code_set):
    from abeq import sets
    from abeq.desk import run_vm
    from abeq.documents import load_document
    from abeq.execution.settings import RunSettings

    original = load_document(EXAMPLE / "SKILL.md")
    ts = sets.confirm(load(code_set[0]), original.hash)
    gate = run_vm.start_gate(original, ts)
    assert gate.refused and any("have not trusted" in e for e in gate.errors())
    [line] = run_vm.code_lines(gate.code)  # escaped for Markdown: a stranger wrote the case id
    assert line.replace("\\", "") == "the set: case happy-1, check 2: python assert"
    assert not run_vm.start_gate(original, ts, RunSettings(trust_code=True)).refused


# issue 44 item 1: a {{var}} pasted into trusted code; the attack changes only the case's vars
TEMPLATED = "{'pass': True, 'reason': 'kw is {{kw}}'}"
INJECTED = "' + 'IN' + 'JECTED"  # as data it reads as written; pasted into the code it concatenates


@pytest.fixture
def var_set(tmp_path):
    data = json.loads((EXAMPLE / "transfer-set.json").read_text())
    data["cases"][0]["assertions"].append({"type": "python", "value": TEMPLATED})
    data["cases"][0]["metadata"] = {"vars": {"kw": "hello"}}
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data, indent=2))
    return path


def _set_var(path, value):
    data = json.loads(path.read_text())
    data["cases"][0]["metadata"]["vars"]["kw"] = value
    path.write_text(json.dumps(data, indent=2))


def test_a_changed_var_is_changed_code_and_needs_trust_again(tmp_path, var_set, capsys):
    argv = ["check-set", "--original", str(EXAMPLE / "SKILL.md"), "--transfer-set", str(var_set)]
    assert main(argv + ["--confirm", "--trust-code"]) == 0
    assert run(tmp_path, (var_set, None)) == 0  # trusted as confirmed: runs without --trust-code
    assert "kw is hello" in (tmp_path / "record.json").read_text()
    capsys.readouterr()
    _set_var(var_set, INJECTED)
    main(argv + ["--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["checks"]["code_trusted"] is False  # the code that would run is not what was trusted
    (tmp_path / "record.json").unlink()
    assert run(tmp_path, (var_set, None)) == 2  # even confirmed for this one run: not trusted
    assert "not trusted" in capsys.readouterr().err
    assert not (tmp_path / "record.json").exists()


def test_a_confirmation_covers_the_vars_a_check_reads(tmp_path, var_set, capsys):
    argv = ["check-set", "--original", str(EXAMPLE / "SKILL.md"), "--transfer-set", str(var_set)]
    assert main(argv + ["--confirm"]) == 0
    _set_var(var_set, "bye")
    capsys.readouterr()
    main(argv + ["--json"])
    assert "changed after it was confirmed" in json.dumps(json.loads(capsys.readouterr().out))


def test_an_agent_cannot_change_a_var_behind_the_mcp_run_tool(tmp_path, var_set):
    import asyncio

    from mcp import Client

    from abeq.agents.server import build
    from abeq.execution.bounds import Bounds

    project = tmp_path / "project"
    project.mkdir()
    for name in ("SKILL.md", "candidate-faithful.md"):
        (project / name).write_bytes((EXAMPLE / name).read_bytes())
    ts = project / "transfer-set.json"
    ts.write_bytes(var_set.read_bytes())
    argv = ["check-set", "--original", str(project / "SKILL.md"), "--transfer-set", str(ts)]
    assert main(argv + ["--confirm", "--trust-code"]) == 0
    _set_var(ts, INJECTED)  # what an agent with file tools can do before it calls `run`
    server = build(Bounds.started_in(project, db=str(project / "abeq.db"), models=("scripted/*",)))
    args = {"original": "SKILL.md", "candidate": "candidate-faithful.md", "transfer_set": ts.name}

    async def go():
        async with Client(server) as client:
            r = await client.call_tool("run", {**args, "runner_model": "scripted/rules"})
            run_id = (r.structured_content or {}).get("run_id")
            if r.is_error or not run_id:
                return r.content[0].text
            while True:
                s = (await client.call_tool("run_status", {"run_id": run_id})).structured_content
                if s["finished"] or s["error"]:
                    break
                await asyncio.sleep(0.2)
            return json.dumps((await client.call_tool("report", {"run_id": run_id})).structured_content)

    said = asyncio.run(go())
    assert "INJECTED" not in said
    assert "confirm" in said.lower()
