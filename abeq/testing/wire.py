"""OpenAI chat-completions JSON as the loopback server reads and writes it: error bodies, messages
(text, tool calls and tool results kept), and the completion it answers with."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from aiohttp import web


def error(
    status: int, message: str, etype: str, code: str | None = None, headers: dict | None = None
) -> web.Response:
    body = {"error": {"message": message, "type": etype, "param": None, "code": code}}
    return web.Response(
        status=status, text=json.dumps(body), content_type="application/json", headers=headers
    )


def text_of(content: Any) -> str:
    """Message content as plain text (OpenAI and Anthropic also allow a list of typed parts, or null)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def messages(raw: list[dict]) -> list[dict]:
    """The request's messages as the scripted model reads them: role and text, plus an assistant's
    tool calls and a tool result's call id (a tools-mode runner's conversation)."""
    out = []
    for m in raw:
        msg = {"role": str(m.get("role", "user")), "content": text_of(m.get("content"))}
        if m.get("tool_calls"):
            msg["tool_calls"] = m["tool_calls"]
        if m.get("tool_call_id"):
            msg["tool_call_id"] = m["tool_call_id"]
        out.append(msg)
    return out


def completion(model: str, message: dict, prompt_tokens: int, cached_tokens: int | None = None) -> dict:
    """A chat.completion body for the scripted model's assistant message; `cached_tokens` (of the
    prompt tokens) are reported as OpenAI reports prompt-cache hits."""
    text = message.get("content")
    calls = message.get("tool_calls") or []
    ct = max(1, len(text or json.dumps(calls)) // 4)
    reply: dict = {"role": "assistant", "content": text}
    if calls:
        reply["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": reply,
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": ct,
            "total_tokens": prompt_tokens + ct,
            **(
                {"prompt_tokens_details": {"cached_tokens": min(prompt_tokens, cached_tokens)}}
                if cached_tokens is not None
                else {}
            ),
        },
    }
