"""The scripted model as a tools-mode runner: deterministic tool calls, read from the conversation.

It knows the document only by reading it through a tool, like a real agent. Turn by turn it:
lists the files and reads the placed document; reads the files the case input names; writes each
file that a step it follows tells it to write (reading the file first when it exists); asks to run
each command a step names in backticks; then replies with the six-field self-report that the
scripted runner gives for the document it read (see rules.run_rules). Stateless: everything it
has done is in the messages. A test double: it means nothing about real models.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

# a step that tells the agent to write a file: a verb, then a file name in backticks
_WRITE = re.compile(
    r"\b(prepend|append|write|save|add|create|update|describe|record)\b[^`]*?\b(to|in|into|of)\s+"
    r"`([^`\s]+\.[A-Za-z]{1,6})`",
    re.I,
)
_COMMAND_WORDS = {
    "make",
    "npm",
    "pnpm",
    "yarn",
    "pytest",
    "python",
    "uv",
    "ruff",
    "cargo",
    "go",
    "git",
    "tox",
}
MAX_NAMED_READS = 5


def _calls_and_results(messages: list[dict]) -> tuple[list[tuple[str, str, dict]], dict[str, str]]:
    calls, results = [], {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {}
            calls.append((c.get("id", ""), fn.get("name", ""), args))
        if m.get("role") == "tool":
            results[m.get("tool_call_id", "")] = str(m.get("content") or "")
    return calls, results


def _call(n: int, name: str, args: dict) -> dict:
    return {
        "id": f"call_{n}_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, sort_keys=True)},
    }


def agent_turn(messages: list[dict], blocks: dict, tool_choice, run_rules) -> dict:
    """The next assistant message: tool calls, or the final self-report (JSON text). `run_rules` is
    the scripted runner's (rules.run_rules), applied to the document as read."""
    calls, results = _calls_and_results(messages)
    done = {
        (name, args.get("path") or args.get("command")): results.get(cid, "") for cid, name, args in calls
    }
    doc_path = blocks["document_path"].strip()
    case = blocks.get("case_input", "")
    doc = done.get(("read_file", doc_path), "")
    report = run_rules(
        {"document": doc, "case_input": case, "gate_responses": blocks.get("gate_responses", "[]")}
    )
    followed = [
        s.split(":", 1)[1].strip()
        for s in report["self_report"]["steps_followed_skipped"].splitlines()
        if s.startswith("followed:")
    ]
    if tool_choice != "none":
        nxt = _next_calls(done, doc_path, case, followed)
        if nxt:
            return {
                "content": None,
                "tool_calls": [_call(len(calls) + i, n, a) for i, (n, a) in enumerate(nxt)],
            }
    written = [
        f"{p} ({'refused' if r.startswith('refused') else 'written'})"
        for (n, p), r in done.items()
        if n == "write_file"
    ]
    sr = dict(report["self_report"])
    if written:
        sr["output_produced"] += " Files: " + ", ".join(written) + "."
    return {"content": json.dumps(sr)}


def _next_calls(done: dict, doc_path: str, case: str, followed: list[str]) -> list[tuple[str, dict]]:
    first = [("list_files", {"path": "."}), ("read_file", {"path": doc_path})]
    todo = [(n, a) for n, a in first if (n, a["path"]) not in done]
    if todo:
        return todo
    listing = [
        ln for ln in done.get(("list_files", "."), "").splitlines() if ln and not ln.startswith(("(", "["))
    ]
    named = [
        f
        for f in listing
        if f != doc_path and re.search(rf"(?<![\w/.-]){re.escape(PurePosixPath(f).name)}(?![\w-])", case)
    ][:MAX_NAMED_READS]
    todo = [("read_file", {"path": f}) for f in named if ("read_file", f) not in done]
    if todo:
        return todo
    # `followed` ends at an unanswered gate (run_rules stops there), so nothing past it is done
    for step in followed:
        m = _WRITE.search(step)
        if not m:
            continue
        target = m.group(3)
        if target in listing and ("read_file", target) not in done:
            return [("read_file", {"path": target})]
        if ("write_file", target) not in done:
            old = done.get(("read_file", target), "")
            # the entry is written from the task, not from the document's wording: two versions of
            # a document that do the same thing write the same file
            lines = [re.sub(r"^([-*]|\d+[.)])\s+", "", ln.strip()) for ln in case.strip().splitlines()]
            lines = [ln for ln in lines if ln] or ["update"]
            entry = f"## {lines[0][:80]}\n" + "".join(f"- {ln}\n" for ln in lines[1:])
            return [("write_file", {"path": target, "content": entry + ("\n" + old if old else "")})]
    for step in followed:
        for cmd in re.findall(r"`([^`]+)`", step):
            if cmd.split()[0] in _COMMAND_WORDS and ("run_command", cmd) not in done:
                return [("run_command", {"command": cmd})]
    return []
