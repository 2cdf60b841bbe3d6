"""What an agent CLI did, read from its event stream on standard output.

- Claude Code `--output-format stream-json --verbose`: one JSON event a line — assistant messages
  (text, tool_use), user messages carrying tool_result, and a closing `result` (the final answer,
  `total_cost_usd`, `usage`, an error `subtype` such as `error_max_turns`);
- Codex `exec --json`: `item.completed` events (command_execution with its output, file_change,
  mcp_tool_call, web_search, agent_message…), `turn.completed` with usage, `turn.failed` / `error`;
- Claude Code `--output-format json`: the single `result` object;
- anything else is plain text, kept as it is.

The transcript the judge reads is what the agent did — each tool call with its arguments and its
result, in order — then its final message, without the stream's volatile fields (session ids,
uuids, timings), which would make two identical runs look different.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

MAX_RESULT_CHARS = 4_000  # of one tool result in the transcript (the workspace changes carry the files)
CLAUDE_EVENTS = {"system", "assistant", "user", "result", "stream_event"}


@dataclass
class AgentStream:
    """An agent's standard output, read: its format, the transcript of its actions, the final
    message (where the self-report is looked for), usage facts and what it says went wrong."""

    kind: str  # "claude-stream", "claude-json", "codex-json" or "text"
    transcript: str
    final: str
    facts: dict = field(default_factory=dict)  # {"usage": {...}, "total_cost_usd": ...} when known
    failure: str = ""


def _events(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:  # not JSON, or a number past Python's 4,300 digits
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


def _cut(text: str) -> str:
    text = text.rstrip()
    if len(text) > MAX_RESULT_CHARS:
        return text[:MAX_RESULT_CHARS] + f"\n[… cut: {len(text) - MAX_RESULT_CHARS:,} more characters]"
    return text


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(p.get("text", p.get("content", ""))) for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _args(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def read_stream(stdout: str) -> AgentStream:
    """The agent's output read in whichever format it is in."""
    events = _events(stdout)
    types = {e.get("type") for e in events}
    if types & {"thread.started", "turn.started", "turn.completed", "turn.failed", "item.completed"}:
        return _codex(events)
    if len(events) > 1 and types <= CLAUDE_EVENTS and types & {"result", "assistant"}:
        return _claude(events)
    whole = stdout.strip()
    if whole.startswith("{") and len(events) == 1 and events[0].get("type") == "result":
        return _claude(events, kind="claude-json")
    return AgentStream("text", stdout, stdout)


def _claude(events: list[dict], kind: str = "claude-stream") -> AgentStream:
    lines, final, facts, failure = [], "", {}, ""
    for e in events:
        if e.get("type") in ("assistant", "user") and isinstance(e.get("message"), dict):
            content = e["message"].get("content")
            for part in content if isinstance(content, list) else [{"type": "text", "text": content}]:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "text" and str(part.get("text") or "").strip():
                    if e["type"] == "assistant":
                        lines.append(f"[assistant]\n{part['text'].strip()}")
                elif part.get("type") == "tool_use":
                    lines.append(f"[tool call] {part.get('name')} {_args(part.get('input'))}")
                elif part.get("type") == "tool_result":
                    tag = "[tool result, error]" if part.get("is_error") else "[tool result]"
                    lines.append(f"{tag}\n{_cut(_text(part.get('content')))}")
        elif e.get("type") == "result":
            final = str(e.get("result") or "")
            facts = {k: e[k] for k in ("usage", "total_cost_usd") if k in e}
            if e.get("is_error") or (e.get("subtype") or "success") != "success":
                said = final or "; ".join(str(x) for x in e.get("errors") or [])
                failure = f"{e.get('subtype') or 'error'}: {said}".strip()
    if kind == "claude-json":
        lines = []
    if lines and final and lines[-1] == f"[assistant]\n{final.strip()}":
        lines.pop()  # the last message is the final one: said once
    lines.append(f"[final]\n{final.strip()}" if final else "[final]\n(no final message)")
    return AgentStream(kind, "\n\n".join(lines), final, facts, failure)


def _codex(events: list[dict]) -> AgentStream:
    lines, final, failure = [], "", ""
    usage = {"input_tokens": 0, "output_tokens": 0}
    seen_usage = False
    for e in events:
        kind = e.get("type")
        if kind == "item.completed" and isinstance(e.get("item"), dict):
            item = e["item"]
            itype = item.get("type")
            if itype == "agent_message":
                final = str(item.get("text") or "")
                lines.append(f"[assistant]\n{final.strip()}")
            elif itype == "command_execution":
                status = item.get("status")
                note = f"exit {item.get('exit_code')}" + (
                    f", {status}" if status not in ("completed", None) else ""
                )
                output = _cut(str(item.get("aggregated_output") or ""))
                lines.append(f"[command] {item.get('command')} ({note})\n{output}")
            elif itype == "file_change":
                for ch in item.get("changes") or []:
                    lines.append(f"[file change] {ch.get('kind')} {ch.get('path')}")
            elif itype == "mcp_tool_call":
                call = f"{item.get('server')}.{item.get('tool')} {_args(item.get('arguments'))}"
                lines.append(f"[tool call] {call}\n[tool result]\n{_cut(_text(item.get('result')))}")
            elif itype == "web_search":
                lines.append(f"[web search] {item.get('query')}")
            elif itype == "error":
                lines.append(f"[notice] {item.get('message')}")
        elif kind == "turn.completed" and isinstance(e.get("usage"), dict):
            seen_usage = True
            for k in usage:
                usage[k] += int(e["usage"].get(k) or 0)
        elif kind == "turn.failed":
            failure = str((e.get("error") or {}).get("message") or "the turn failed")
        elif kind == "error" and not failure:
            failure = str(e.get("message") or "error")
    if lines and final and lines[-1] == f"[assistant]\n{final.strip()}":
        lines[-1] = f"[final]\n{final.strip()}"
    else:
        lines.append("[final]\n" + (final.strip() or "(no final message)"))
    return AgentStream(
        "codex-json", "\n\n".join(lines), final, {"usage": usage} if seen_usage else {}, failure
    )
