"""`abeq mcp` through the MCP SDK's own client, on the bundled example with the scripted model:
the tools and their schemas, each tool's answer, the CLI's messages for bad inputs, the bounds (the
project root, the allowed models, no runner command, no trust for the set's code), and a person's
confirmation as the only way a set runs."""

import asyncio
import shutil

import pytest
from conftest import EXAMPLE

from abeq.agents.server import build
from abeq.cli import main
from abeq.execution.bounds import Bounds

TOOLS = {
    "check_set",
    "run",
    "run_status",
    "report",
    "mutate",
    "mutate_status",
    "history",
    "export",
    "compare",
}
RUN = {"original": "SKILL.md", "candidate": "candidate-lossy.md", "transfer_set": "transfer-set.json"}


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    shutil.copytree(EXAMPLE, folder)
    return folder


def confirm(project, *extra: str) -> None:
    """What the person does (a tool call cannot): `abeq check-set --confirm`."""
    argv = ["check-set", "--original", str(project / "SKILL.md"), "--transfer-set"]
    assert main([*argv, str(project / "transfer-set.json"), "--confirm", *extra]) == 0


def session(project, calls, **bounds):
    """Run `calls(client)` against a server started in `project` (in process, the SDK's Client)."""
    from mcp import Client

    b = Bounds.started_in(project, db=str(project / "abeq.db"), **{"models": ("scripted/*",), **bounds})
    server = build(b)

    async def go():
        async with Client(server) as client:
            return await calls(client)

    return asyncio.run(go())


async def call(client, name, args):
    r = await client.call_tool(name, args)
    return r.is_error, r.content[0].text, r.structured_content


async def finished(client, run_id):
    while True:
        _, _, s = await call(client, "run_status", {"run_id": run_id})
        if s["finished"] or s["error"]:
            return s
        await asyncio.sleep(0.2)


def test_the_sdk_client_lists_every_tool_with_its_schemas(project):
    async def calls(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in session(project, calls)}
    assert set(tools) == TOOLS
    assert all(t.output_schema and t.description for t in tools.values())
    run = tools["run"].input_schema
    # named as the CLI's options, from the one settings table; the set's code is never granted
    assert {"original", "candidate", "transfer_set", "runner_model", "judge_samples", "runner_cmd"} <= set(
        run["properties"]
    )
    assert "trust_code" not in run["properties"] and "check_env" not in run["properties"]
    assert set(run["required"]) == {"original", "candidate", "transfer_set"}
    assert "run_id" in tools["run"].output_schema["properties"]
    assert {"report", "lost", "trust", "calls"} <= set(tools["report"].output_schema["properties"])


def test_an_unconfirmed_set_does_not_run_and_says_how_a_person_confirms_it(project):
    async def calls(client):
        return await call(client, "run", {**RUN, "runner_model": "scripted/rules"})

    error, text, out = session(project, calls)
    assert not error and out["status"] == "needs_confirmation" and out["run_id"] is None
    command = "abeq check-set --original SKILL.md --transfer-set transfer-set.json --confirm"
    assert out["confirm_command"] == command and command in text
    assert out["coverage"]["coverage_pct"] == 100 and out["coverage"]["uncovered"] == []
    assert not (project / "abeq.db").exists()  # nothing stored, no model called
    # the person runs that exact command; then the same call starts a run
    confirm(project)

    async def again(client):
        return await call(client, "run", {**RUN, "runner_model": "scripted/rules"})

    assert session(project, again)[2]["status"] == "started"


def cli_error(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as e:
        main(list(argv))
    assert e.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "given, flag, value",
    [
        ({"judge_samples": 12}, "--judge-samples", "12"),
        ({"concurrency": 0}, "--concurrency", "0"),
        ({"gate": "strictest"}, "--gate", "strictest"),
    ],
)
def test_a_bad_setting_gets_the_cli_message(project, capsys, given, flag, value):
    said = cli_error(capsys, "run", "--original", "a", "--candidate", "b", "--transfer-set", "c", flag, value)

    async def calls(client):
        return await call(client, "run", {**RUN, "runner_model": "scripted/rules", **given})

    error, text, _ = session(project, calls)
    cli = said.strip().splitlines()[-1].split("error: ", 1)[1]  # argparse: "abeq run: error: argument …"
    assert error and cli.replace('"', "'") in text.replace('"', "'")


@pytest.mark.parametrize(
    "given, said",
    [
        ({"judge_sample": 2}, "unknown argument: 'judge_sample' (did you mean 'judge_samples'?)"),
        ({"trust_code": True}, "'trust_code' cannot be set here"),
        ({"check_env": ["HOME"]}, "'check_env' cannot be set here"),
        ({"runner_cmd": "cat"}, "this server runs no command a tool call gives"),
        ({"runner_model": "openai/gpt-4o"}, "model openai/gpt-4o is not allowed by this server"),
        ({"judge_model": "local/smollm2"}, "model local/smollm2 is not allowed"),
        ({"api_base": "http://evil.example/v1"}, "API base http://evil.example/v1 is not allowed"),
    ],
)
def test_what_the_server_was_not_given_is_refused_by_name(project, given, said):
    confirm(project)

    async def calls(client):
        return await call(client, "run", {**RUN, "runner_model": "scripted/rules", **given})

    error, text, _ = session(project, calls)
    assert error and said in text
    assert not (project / "abeq.db").exists()  # nothing stored


@pytest.mark.parametrize("where", ["/etc/passwd", "../outside.md", "link.md", "~/.ssh/id_rsa"])
def test_a_path_outside_the_root_is_refused(project, where):
    (project.parent / "outside.md").write_text("# secret\n")
    (project / "link.md").symlink_to(project.parent / "outside.md")

    async def calls(client):
        return await call(client, "check_set", {"original": where, "transfer_set": "transfer-set.json"})

    error, text, _ = session(project, calls)
    assert error and f"argument --original: {where} is outside the project" in text


def test_each_tool_on_the_example(project):
    confirm(project)
    (project / "task.txt").write_text("Draft release notes for v2.")
    (project / "a.md").write_text("- Fixed exports (#1)\n")
    (project / "b.md").write_text("- Fixed exports (#1, PAY-12)\n")

    async def calls(client):
        out = {}
        out["check"] = await call(
            client, "check_set", {"original": "SKILL.md", "transfer_set": "transfer-set.json"}
        )
        out["run"] = await call(client, "run", {**RUN, "runner_model": "scripted/rules", "review": "notes"})
        run_id = out["run"][2]["run_id"]
        out["status"] = await finished(client, run_id)
        out["report"] = await call(client, "report", {"run_id": run_id})
        out["export"] = await call(client, "export", {"run_id": run_id, "format": "markdown"})
        out["history"] = await call(client, "history", {"review": "notes"})
        out["mutate"] = await call(
            client, "mutate", {"original": "SKILL.md", "transfer_set": "transfer-set.json",
                               "runner_model": "scripted/rules", "section": ["Writing each entry"]}
        )  # fmt: skip
        started = out["mutate"][2]
        while True:  # it goes on in the background, as a run does
            out["mutated"] = await call(client, "mutate_status", {"mutation_id": started["mutation_id"]})
            if out["mutated"][2]["finished"] or out["mutated"][2]["error"]:
                break
            await asyncio.sleep(0.2)
        out["compare"] = await call(client, "compare", {"task": "task.txt", "a": "a.md", "b": "b.md",
                                                        "model": "scripted/rules", "seed": 1})  # fmt: skip
        out["missing"] = await call(client, "report", {"run_id": 99})
        return out

    out = session(project, calls)
    assert all(not out[k][0] for k in out if k not in ("status", "missing"))
    check = out["check"][2]
    assert check["confirmed"] and check["cases"] == 7 and len(check["sections_identified"]) == 7
    assert out["status"]["status"] == "finished" and out["status"]["done"] == 7
    rep = out["report"][2]
    assert rep["report"]["summary"] == {"pass": False, "regressions": 7, "divergences": 0, "equivalents": 0}
    assert not rep["passed"] and len(rep["lost"]) == 7
    assert all("Never include internal ticket ids" in x["behaviour_delta"] for x in rep["lost"])
    assert rep["calls"]["teacher_made"] == 7
    assert "scripted/rules" in rep["trust"]["model_caveats"][0]
    assert not rep["trust"]["judge_calibration"]["calibrated"]
    assert "7 regressed" in out["report"][1] and "Never include internal ticket ids" in out["report"][1]
    assert out["export"][2]["text"].startswith("#")
    assert out["history"][2]["rounds"][0]["regressed"] == 7
    assert out["mutate"][2]["status"] == "started" and out["mutate"][2]["mutants"] == 1
    assert out["mutated"][2]["result"]["mutants"] == 1 and out["mutated"][2]["result"]["killed"] == 1
    assert out["compare"][2]["winner"] in ("A", "B", "tie")
    assert out["missing"][0] and "no run 99" in out["missing"][1]


def test_the_run_stays_in_the_store_for_the_cli(project, capsys):
    confirm(project)

    async def calls(client):
        started = await call(client, "run", {**RUN, "runner_model": "scripted/rules", "review": "r"})
        await finished(client, started[2]["run_id"])
        return started[2]["run_id"]

    run_id = session(project, calls)
    assert main(["history", "r", "--db", str(project / "abeq.db"), "--json"]) == 0
    assert f'"run": {run_id}' in capsys.readouterr().out


def test_inputs_at_a_git_revision(project, monkeypatch):
    import subprocess

    def git(*a):
        subprocess.run(["git", *a], cwd=project, check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "add", ".")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "example")
    monkeypatch.chdir(project)  # git:REV:PATH reads the repository the server runs in
    (project / "SKILL.md").write_text("# changed since the commit\n")

    async def calls(client):
        at = {"original": "git:HEAD:SKILL.md", "transfer_set": "git:HEAD:transfer-set.json"}
        return (
            await call(client, "check_set", at),
            await call(client, "check_set", {**at, "original": "git:HEAD:../outside.md"}),
        )

    ok, outside = session(project, calls)
    assert not ok[0] and ok[2]["cases"] == 7 and len(ok[2]["sections_identified"]) == 7
    assert outside[0] and "is not git:REV:PATH" in outside[1]
