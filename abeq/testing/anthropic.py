"""A fake Anthropic Messages API on loopback (`POST /v1/messages`) that answers like the scripted
model and reports prompt caching as Anthropic does, for tests that go through litellm's real
Anthropic route:

    with AnthropicServer(prompt_cache=PromptCache(min_tokens=256)) as srv:
        spec = ModelSpec(name="anthropic/claude-haiku-4-5", api_base=srv.url)   # ANTHROPIC_API_KEY set

Caching follows the request's `cache_control` marks (see prompt_cache.py): `usage` carries
`input_tokens` (after the last mark), `cache_creation_input_tokens` and `cache_read_input_tokens`.
Structured replies come back the way litellm asks for them: text for `output_format`, a
`json_tool_call` tool use for the tool form. Fault injection, latency, Retry-After and the request
timeline are the loopback server's. It is a test double: its answers mean nothing.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid

from aiohttp import web

from ..models.scripted import respond_message
from .loopback import LoopbackServer
from .prompt_cache import PromptCache
from .wire import text_of

JSON_TOOL = "json_tool_call"  # the tool litellm forces when it asks for JSON through tool use


def _error(status: int, etype: str, message: str, headers: dict | None = None) -> web.Response:
    body = {"type": "error", "error": {"type": etype, "message": message}}
    return web.Response(
        status=status, text=json.dumps(body), content_type="application/json", headers=headers
    )


def _blocks(content) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


class AnthropicServer(LoopbackServer):
    """The loopback server with Anthropic's Messages API; `url` is the api_base to give litellm."""

    def __init__(self, *a, prompt_cache: PromptCache | None = None, **kw):
        super().__init__(*a, **kw)
        self.prompt_cache: PromptCache = prompt_cache or PromptCache()
        self.requests: list[dict] = []  # the bodies received, for tests that check what was sent

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def app(self) -> web.Application:
        app = super().app()
        app.router.add_post("/v1/messages", self._messages)
        return app

    async def _messages(self, request: web.Request) -> web.Response:
        arrived, arrived_at = time.perf_counter(), time.time()
        fault, _ = self._decide()
        if not request.headers.get("x-api-key"):
            self._count("bad_request")
            return _error(401, "authentication_error", "x-api-key header is required")
        try:
            body = await request.json()
            msgs = body["messages"]
            assert isinstance(msgs, list) and msgs and isinstance(body.get("max_tokens"), int)
        except (ValueError, KeyError, AssertionError):
            self._count("bad_request")
            return _error(400, "invalid_request_error", "messages and max_tokens are required")
        self.requests.append(body)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
        if fault in ("fail_429", "fail_500", "hang"):
            await self._wait(arrived)
            status = 429 if fault == "fail_429" else self.error_status
            headers = {"retry-after": self.retry_after_value()} if self.retry_after else None
            self._count(fault if fault != "hang" else "fail_500", digest, status, arrived=arrived_at)
            etype = "rate_limit_error" if status == 429 else "overloaded_error"
            return _error(status, etype, "loopback: injected failure", headers)
        system = _blocks(body.get("system"))
        parts = [(b.get("text", ""), bool(b.get("cache_control"))) for b in system]
        flat = [{"role": "system", "content": text_of(system)}] if system else []
        for m in msgs:
            blocks = _blocks(m.get("content"))
            parts += [(b.get("text", ""), bool(b.get("cache_control"))) for b in blocks]
            flat.append({"role": m.get("role", "user"), "content": text_of(blocks)})
        tools = body.get("tools") or []
        tool = next((t for t in tools if t.get("name") == JSON_TOOL), None)
        schema = (body.get("output_format") or {}).get("schema") or (tool or {}).get("input_schema")
        text = respond_message(str(body.get("model")), flat, schema).get("content") or ""
        read, written, uncached = self.prompt_cache.marked(parts)
        if tool is not None:
            content = [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:12]}", "name": JSON_TOOL}]
            content[0]["input"] = json.loads(text)
        else:
            content = [{"type": "text", "text": text}]
        out = {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": "tool_use" if tool is not None else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": max(1, uncached),
                "output_tokens": max(1, len(text) // 4),
                "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read,
            },
        }
        await self._wait(arrived)
        self._count("ok", digest, 200, arrived=arrived_at)
        return web.json_response(out)
