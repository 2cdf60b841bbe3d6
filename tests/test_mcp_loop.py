"""The loop the abeq-gate skill describes, driven by a scripted agent through the MCP SDK's client on
the bundled example: start from the lossy candidate, read each regression's lost behaviour, add the
rule back into the candidate, run again. It passes by round 3, and after round 1 the original is
never run again (its runs come from the cache)."""

import re
import shutil

from conftest import EXAMPLE
from test_mcp import call, confirm, finished, session

LOST = "The candidate run no longer: "


def add_back(candidate: str, original: str, deltas: list[str]) -> str:
    """What the agent does with a report: find each lost rule in the original and put it back under
    the same heading of the candidate (after the bullet that precedes it there, when the candidate
    still has one like it)."""
    lines = candidate.splitlines()
    for delta in dict.fromkeys(deltas):
        if not delta.startswith(LOST):
            continue
        rule = delta[len(LOST) :].strip()
        if rule in candidate:
            continue
        heading = None
        for line in original.splitlines():
            if line.startswith("#"):
                heading = line
            if line.lstrip("- ").strip() == rule:
                break
        at = lines.index(heading) + 1
        while at < len(lines) and not lines[at].startswith("#"):
            at += 1
        while lines[at - 1].strip() == "":
            at -= 1
        lines.insert(at, f"- {rule}")
    return "\n".join(lines) + "\n"


def test_a_scripted_agent_adds_back_what_was_lost_and_passes_by_round_3(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project)
    shutil.copy(project / "candidate-lossy.md", project / "candidate.md")
    confirm(project)
    original = (project / "SKILL.md").read_text()
    args = {"original": "SKILL.md", "candidate": "candidate.md", "transfer_set": "transfer-set.json",
            "runner_model": "scripted/rules", "review": "compress"}  # fmt: skip

    async def agent(client):
        rounds = []
        for _ in range(3):
            started = await call(client, "run", args)
            assert started[2]["status"] == "started", started[1]
            await finished(client, started[2]["run_id"])
            rep = (await call(client, "report", {"run_id": started[2]["run_id"]}))[2]
            rounds.append(rep)
            if rep["passed"]:
                break
            text = (project / "candidate.md").read_text()
            lost = [x["behaviour_delta"] for x in rep["lost"]]
            (project / "candidate.md").write_text(add_back(text, original, lost))
        history = (await call(client, "history", {"review": "compress"}))[2]
        return rounds, history

    rounds, history = session(project, agent)
    assert not rounds[0]["passed"] and rounds[0]["calls"]["teacher_made"] == 7
    assert rounds[-1]["passed"] and len(rounds) <= 3
    assert all(r["calls"]["teacher_made"] == 0 for r in rounds[1:])  # only the candidate re-ran
    assert [r["round"] for r in history["rounds"]] == list(range(1, len(rounds) + 1))
    assert re.search(r"^- Never include internal ticket ids", (project / "candidate.md").read_text(), re.M)
    assert len((project / "candidate.md").read_text()) < len(original)  # still the shorter document
