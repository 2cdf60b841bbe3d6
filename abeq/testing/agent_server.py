"""A loopback model server for real agent CLIs: the Anthropic Messages streaming API (Claude Code,
`ANTHROPIC_BASE_URL`) and the OpenAI Responses streaming API (Codex, a custom provider in
`CODEX_HOME/config.toml`), answering every agent run with the same script:

  1. read the document the runner prompt names (Claude's `Read`, Codex's `exec_command` with `cat`);
  2. write `NOTES.md` in the working directory: the document's path, its first heading and the
     case's first line (Claude's `Write`, Codex's `exec_command` with a here-document);
  3. answer with a final message holding `{"self_report": {...}}`.

    with AgentServer() as srv:   # ANTHROPIC_BASE_URL=srv.url; Codex: base_url = srv.url + "/v1"
        ...
        srv.runs   # one dict per agent run: api, cwd, document_path, case_input

A request with no tools (Claude's title request) gets a short text and is not a run. A case whose
input contains `fail_when` is answered 400, so the agent fails. It is a test double: its answers
mean nothing about real models.

`AgentServer(script=fn)` answers Claude's requests from `fn(results)` instead: given the tool
results so far (their text), it returns the next tool call `{"name": …, "input": {…}}`, or a string
for the final answer. An agent driving abeq's MCP tools is scripted this way.
"""

from __future__ import annotations

import json
import re
import shlex
import threading
import uuid
from collections.abc import Callable
from typing import Any

from aiohttp import web

from .serving import BackgroundServer

NOTES = "NOTES.md"


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _block(text: str, name: str) -> str:
    m = re.search(rf'<data name="{name}">\n(.*?)\n</data>', text, re.S)
    return m.group(1) if m else ""


def _texts(content) -> list[str]:
    """The text parts of a message's content (either API's typed parts, or a plain string)."""
    if isinstance(content, str):
        return [content]
    out = []
    for part in content or []:
        if isinstance(part, dict):
            if isinstance(part.get("text"), str):
                out.append(part["text"])
            elif part.get("type") == "tool_result":
                out.extend(_texts(part.get("content")))
    return out


def heading(text: str) -> str:
    """The first Markdown heading in a file as an agent's tool printed it (Claude numbers lines)."""
    for line in text.splitlines():
        line = re.sub(r"^\s*\d+[\t→]", "", line).strip()
        if line.startswith("#"):
            return line
    return "(no heading)"


def notes(document_path: str, document: str, case_input: str) -> str:
    first = (case_input.strip().splitlines() or [""])[0]
    return f"document: {document_path}\nheading: {heading(document)}\nrequest: {first}\n"


def final_answer(results: list[str]) -> str:
    wrote = results[-1] if results else ""
    refused = re.search(r"read-only|denied|not permitted|permission", wrote, re.I)
    report = {
        "output_produced": f"{NOTES} not written: {wrote.strip()[:200]}" if refused else f"wrote {NOTES}",
        "steps_followed_skipped": "read the document; wrote the notes",
        "ambiguities": "none",
        "improvisation": "none",
        "wanted_to_deviate": "none",
        "gates_hit": [],
    }
    return "Done.\n\n" + json.dumps({"self_report": report})


class AgentServer(BackgroundServer):
    """Both streaming APIs on one port: `url` for ANTHROPIC_BASE_URL, `url + "/v1"` for Codex."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        fail_when: str = "",
        script: Callable[[list[str]], dict | str] | None = None,
    ):
        super().__init__(host, port)
        self.fail_when = fail_when
        self.script = script
        self._lock = threading.Lock()
        self.runs: list[dict] = []  # one per agent run (its first request): api, cwd, document_path, …
        self.requests: list[dict] = []  # every request body, in order of arrival
        self.side_requests = 0  # requests with no tools (a title), not part of a run's script

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def stats(self) -> dict:
        with self._lock:
            return {"runs": len(self.runs), "requests": len(self.requests), "side": self.side_requests}

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 << 20)
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_route("HEAD", "/", self._head)
        return app

    async def _head(self, request: web.Request) -> web.Response:
        return web.Response()  # Claude Code checks that the base URL answers

    def _step(self, api: str, prompt: str, cwd: str, results: list[str]) -> int:
        """Which step of the script this request is at (the tool results so far); records a run."""
        with self._lock:
            if not results:
                self.runs.append(
                    {
                        "api": api,
                        "cwd": cwd,
                        "document_path": _block(prompt, "document_path"),
                        "case_input": _block(prompt, "case_input"),
                        "prompt": prompt,
                    }
                )
        return len(results)

    def _failing(self, prompt: str) -> bool:
        return bool(self.fail_when) and self.fail_when in _block(prompt, "case_input")

    # ------------------------------------------------------------ Anthropic Messages
    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
        system = "\n".join(_texts(body.get("system")))
        msgs = body.get("messages") or []
        prompt = "\n".join(t for m in msgs if m.get("role") == "user" for t in _texts(m.get("content")))
        results = [
            "\n".join(_texts(p.get("content")))
            for m in msgs
            if isinstance(m.get("content"), list)
            for p in m["content"]
            if isinstance(p, dict) and p.get("type") == "tool_result"
        ]
        if not body.get("tools"):
            with self._lock:
                self.side_requests += 1
            return await self._anthropic_stream(request, body, {"type": "text", "text": "Agent run"})
        if self._failing(prompt):
            err = {"type": "error", "error": {"type": "invalid_request_error", "message": "loopback: fails"}}
            return web.json_response(err, status=400)
        if self.script is not None:
            scripted = self.script(results)
            if isinstance(scripted, str):
                return await self._anthropic_stream(request, body, {"type": "text", "text": scripted})
            return await self._anthropic_stream(request, body, {"type": "tool_use", **scripted})
        m = re.search(r"Primary working directory: (\S+)", system)
        cwd = m.group(1) if m else "."
        step = self._step("anthropic", prompt, cwd, results)
        doc = _block(prompt, "document_path")
        if step == 0:
            block = {"type": "tool_use", "name": "Read", "input": {"file_path": f"{cwd}/{doc}"}}
        elif step == 1:
            text = notes(doc, results[0], _block(prompt, "case_input"))
            block = {
                "type": "tool_use",
                "name": "Write",
                "input": {"file_path": f"{cwd}/{NOTES}", "content": text},
            }
        else:
            block = {"type": "text", "text": final_answer(results)}
        return await self._anthropic_stream(request, body, block)

    async def _anthropic_stream(self, request: web.Request, body: dict, block: dict) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        usage = {"input_tokens": max(1, len(json.dumps(body.get("messages"))) // 4), "output_tokens": 1}
        message: dict[str, Any] = {
            "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
            "model": body.get("model"), "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": usage,
        }  # fmt: skip
        await resp.write(_sse("message_start", {"type": "message_start", "message": message}))
        if block["type"] == "tool_use":
            start = {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:20]}",
                "name": block["name"],
                "input": {},
            }
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            out = json.dumps(block["input"])
        else:
            start, delta, out = (
                {"type": "text", "text": ""},
                {"type": "text_delta", "text": block["text"]},
                block["text"],
            )
        await resp.write(
            _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start})
        )
        await resp.write(
            _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
        await resp.write(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        stop = "tool_use" if block["type"] == "tool_use" else "end_turn"
        end = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}}
        await resp.write(_sse("message_delta", {**end, "usage": {"output_tokens": max(1, len(out) // 4)}}))
        await resp.write(_sse("message_stop", {"type": "message_stop"}))
        return resp

    # ------------------------------------------------------------ OpenAI Responses
    async def _responses(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        user = [t for i in items if i.get("role") == "user" for t in _texts(i.get("content"))]
        prompt = "\n".join(user)
        results = [str(i.get("output")) for i in items if i.get("type") == "function_call_output"]
        if self._failing(prompt):
            err = {"error": {"message": "loopback: fails", "type": "invalid_request_error", "code": None}}
            return web.json_response(err, status=400)
        m = re.search(r"<cwd>(.*?)</cwd>", prompt)
        step = self._step("openai", prompt, m.group(1) if m else ".", results)
        doc = _block(prompt, "document_path")
        if step == 0:
            item = self._call(f"cat {shlex.quote(doc)}")
        elif step == 1:
            text = notes(doc, results[0], _block(prompt, "case_input"))
            item = self._call(f"cat > {NOTES} <<'ABEQ_EOF'\n{text}ABEQ_EOF")
        else:
            text = final_answer(results)
            item = {
                "type": "message", "id": f"msg_{uuid.uuid4().hex[:20]}", "role": "assistant",
                "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}],
            }  # fmt: skip
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        response = {"id": f"resp_{uuid.uuid4().hex[:20]}", "object": "response", "model": body.get("model")}
        await resp.write(
            _sse(
                "response.created",
                {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}},
            )
        )
        await resp.write(
            _sse(
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            )
        )
        usage: dict[str, Any] = {
            "input_tokens": max(1, len(json.dumps(items)) // 4), "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
        }  # fmt: skip
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        done = {**response, "status": "completed", "output": [item], "usage": usage}
        await resp.write(_sse("response.completed", {"type": "response.completed", "response": done}))
        return resp

    @staticmethod
    def _call(cmd: str) -> dict:
        ids = {"id": f"fc_{uuid.uuid4().hex[:20]}", "call_id": f"call_{uuid.uuid4().hex[:20]}"}
        args = json.dumps({"cmd": cmd})
        return {
            "type": "function_call",
            **ids,
            "name": "exec_command",
            "arguments": args,
            "status": "completed",
        }
