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


def append_at_end(candidate: str, deltas: list[str]) -> str:
    """A hasty agent: each lost rule appended at the end of the document."""
    rules = [d[len(LOST) :].strip() for d in dict.fromkeys(deltas) if d.startswith(LOST)]
    return candidate.rstrip("\n") + "\n" + "".join(f"- {r}\n" for r in rules if r not in candidate)


def before_the_gate(candidate: str, rules: list[str], gated_sections: list[str]) -> str:
    """What the report tells an agent to do for a case stopped at a gate: a rule placed after the gate
    is never reached there, so the rules it appended move above the first gated section."""
    lines = [ln for ln in candidate.splitlines() if ln not in {f"- {r}" for r in rules}]
    heads = [i for i, ln in enumerate(lines) if ln.lstrip("#").strip() in gated_sections]
    if not heads:
        return candidate
    at = heads[0]
    while at > 0 and not lines[at - 1].strip():
        at -= 1
    lines[at:at] = [f"- {r}" for r in rules]
    return "\n".join(lines) + "\n"


def test_an_agent_that_reads_gate_truncated_fixes_a_gated_case_in_one_round(tmp_path):
    """Issue 49: appended at the end, the lost rule never reaches edge-2 (it stops at the gate in
    'Review and handoff') and the loop goes round; the report names that gate, and an agent that
    moves the rule above it passes the next round."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project)
    shutil.copy(project / "candidate-lossy.md", project / "candidate.md")
    confirm(project)
    args = {"original": "SKILL.md", "candidate": "candidate.md", "transfer_set": "transfer-set.json",
            "runner_model": "scripted/rules", "review": "gated"}  # fmt: skip

    async def round_(client):
        started = await call(client, "run", args)
        await finished(client, started[2]["run_id"])
        return await call(client, "report", {"run_id": started[2]["run_id"]})

    async def agent(client):
        _, _, first = await round_(client)
        text = (project / "candidate.md").read_text()
        deltas = [x["behaviour_delta"] for x in first["lost"]]
        rules = [d[len(LOST) :].strip() for d in dict.fromkeys(deltas) if d.startswith(LOST)]
        (project / "candidate.md").write_text(append_at_end(text, deltas))
        _, said, hasty = await round_(client)
        gated = [t["section"] for t in hasty["report"]["gate_truncated"]]
        text = (project / "candidate.md").read_text()
        (project / "candidate.md").write_text(before_the_gate(text, rules, gated))
        _, _, informed = await round_(client)
        return first, hasty, said, informed

    first, hasty, said, informed = session(project, agent)
    assert not first["passed"] and len(first["lost"]) == 7
    # the hasty round: every case but the gated one passes, and the report says why that one cannot
    assert [x["case_id"] for x in hasty["lost"]] == ["edge-2"]
    assert "edge-2 stops at the gate in 'Review and handoff'" in said and "never reached" in said
    assert informed["passed"] and not informed["lost"]
