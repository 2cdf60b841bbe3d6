"""A real OpenAI-compatible HTTP server on loopback that answers like the `scripted` test model.

Tests and benchmarks point abeq at it as `openai/<anything>` with `api_base=srv.url`, so calls
travel litellm's real OpenAI route over real HTTP. Replies come from the scripted model of the
request's model name (`abeq.models.scripted.model`); faults (429/500, malformed JSON, hangs) are
injected per request from seeded RNGs, so a given seed and request order always gives the same outcomes.

    with LoopbackServer(latency=0.0, fail_rate=0.2, seed=1) as srv:
        spec = ModelSpec(name="openai/scripted", api_base=srv.url)
        ...
        srv.stats  # {"requests": ..., "ok": ..., "fail_429": ..., ...}

    python -m abeq.testing.loopback --port 8765 --latency 0.25 --fail-rate 0.1

It imports neither litellm nor any model; it is a test double and its answers mean nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import threading
import time
from collections.abc import Callable

from aiohttp import web

from ..models import scripted
from ..models.handlers import schema_from_optional_params
from ..models.scripted import respond_message
from . import wire
from .prompt_cache import PromptCache
from .serving import BackgroundServer

_error = wire.error  # kept under its old name: fault tests build their own error replies with it

OUTCOMES = ("ok", "malformed", "fail_429", "fail_500", "hang", "bad_request", "error")
_MALFORMED_FIXED = ('{"verdict": "maybe"', '{"verdict": "maybe"}')


class LoopbackServer(BackgroundServer):
    """The server: the aiohttp app, its fault injection and counters (served by BackgroundServer).

    latency: seconds from a request's arrival to its answer (not for a hang). The reply is
        computed inside that time, so the double's own work does not stretch a benchmark's
        critical path (as long as it takes less than `latency`).
    fail_rate: share of requests answered 429 / 500 (alternating, 429 first).
    malformed_rate: share of requests *with a response_format* whose content is not valid
        JSON or not schema-valid (cycling: truncated real reply, `{"verdict": "maybe"`,
        `{"verdict": "maybe"}`).
    hang_rate: share of requests never answered (the handler sleeps `hang_seconds`).
    seed: seeds the three decision streams. Each chat request draws once from each stream, in
        the order requests reach the handler, before anything is awaited; precedence is
        hang > fail > malformed.
    retry_after: the Retry-After header sent with every injected failure (seconds or an HTTP date;
        a callable gives each failure its own, e.g. a date a moment from now).
    error_status: the status of the injected server errors (500; 503 for "unavailable").
    prompt_cache: report cached prompt tokens as OpenAI does (`usage.prompt_tokens_details.
        cached_tokens`), from a simulated automatic prefix cache (True, or a PromptCache).
    `timeline` lists (arrived, answered, body digest, status) per answered request (time.time()):
    retries of one call send the same body, so it shows how long after a 429 each retry came.
    """

    def __init__(
        self,
        latency: float = 0.0,
        fail_rate: float = 0.0,
        malformed_rate: float = 0.0,
        hang_rate: float = 0.0,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        hang_seconds: float = 3600.0,
        retry_after: str | Callable[[], str] | None = None,
        error_status: int = 500,
        prompt_cache: bool | PromptCache = False,
    ):
        for name, v in (
            ("fail_rate", fail_rate),
            ("malformed_rate", malformed_rate),
            ("hang_rate", hang_rate),
        ):
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {v}")
        if latency < 0:
            raise ValueError("latency must be >= 0")
        self.latency = float(latency)
        self.fail_rate = float(fail_rate)
        self.malformed_rate = float(malformed_rate)
        self.hang_rate = float(hang_rate)
        self.seed = seed
        super().__init__(host, port)
        self.hang_seconds = hang_seconds
        self.retry_after, self.error_status = retry_after, error_status
        self.prompt_cache = PromptCache() if prompt_cache is True else (prompt_cache or None)
        self._stats_lock = threading.Lock()
        self.reset()

    # ------------------------------------------------------------ state
    def reset(self) -> None:
        """Zero the counters and restart the decision streams from the seed."""
        with self._stats_lock:
            self._counts = {"requests": 0, **{k: 0 for k in OUTCOMES}}
            self._clients: dict[str, int] = {}  # User-Agent product token -> requests (which client called)
            self._rng_hang = random.Random(f"{self.seed}:hang")
            self._rng_fail = random.Random(f"{self.seed}:fail")
            self._rng_malformed = random.Random(f"{self.seed}:malformed")
            self._n_fail = 0
            self._n_malformed = 0
            # Wall-clock seconds (time.time) of the first chat request received and the last chat
            # reply sent since the last reset: the span a benchmark measures, seen from the server.
            self._first_request_at: float | None = None
            self._last_request_at: float | None = None
            self._last_response_at: float | None = None
            self.timeline: list[tuple[float, float, str, int]] = []

    @property
    def stats(self) -> dict:
        """A snapshot of the counters: `requests` (chat requests received) and one per outcome,
        plus `first_request_at` / `last_request_at` / `last_response_at` (time.time(), None before
        any request)."""
        with self._stats_lock:
            return {
                **self._counts,
                "clients": dict(self._clients),
                "first_request_at": self._first_request_at,
                "last_request_at": self._last_request_at,
                "last_response_at": self._last_response_at,
            }

    @property
    def url(self) -> str:
        """The OpenAI base URL, e.g. http://127.0.0.1:PORT/v1 (use as api_base)."""
        return f"http://{self.host}:{self.port}/v1"

    def _decide(self) -> tuple[str, int]:
        """(fault, ordinal) for the next request; fault is hang / fail_429 / fail_500 / malformed / ''."""
        with self._stats_lock:
            self._counts["requests"] += 1
            self._last_request_at = time.time()
            if self._first_request_at is None:
                self._first_request_at = self._last_request_at
            h, f, m = self._rng_hang.random(), self._rng_fail.random(), self._rng_malformed.random()
            if h < self.hang_rate:
                return "hang", 0
            if f < self.fail_rate:
                self._n_fail += 1
                return ("fail_429" if self._n_fail % 2 else "fail_500"), self._n_fail
            if m < self.malformed_rate:
                self._n_malformed += 1
                return "malformed", self._n_malformed
            return "", 0

    def retry_after_value(self) -> str:
        return self.retry_after() if callable(self.retry_after) else str(self.retry_after)

    def _count(
        self, outcome: str, digest: str = "", status: int = 0, answered: bool = True, arrived: float = 0.0
    ) -> None:
        with self._stats_lock:
            self._counts[outcome] += 1
            if answered:  # every answered outcome is counted as its reply goes out
                self._last_response_at = time.time()
                if digest:
                    self.timeline.append((arrived, self._last_response_at, digest, status))

    # ------------------------------------------------------------ handlers
    async def _chat(self, request: web.Request) -> web.Response:
        arrived, arrived_at = time.perf_counter(), time.time()
        fault, n = self._decide()  # before any await: decisions follow arrival order
        agent = (request.headers.get("User-Agent") or "?").split("/", 1)[0].split()[0]
        with self._stats_lock:
            self._clients[agent] = self._clients.get(agent, 0) + 1
        if fault == "hang":
            self._count("hang", answered=False)
            await asyncio.sleep(self.hang_seconds)
            return wire.error(504, "loopback: hung request woke up", "server_error")
        try:
            body = await request.json()
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except (ValueError, UnicodeDecodeError) as e:
            self._count("bad_request")
            return wire.error(400, f"invalid JSON body: {e}", "invalid_request_error")
        if body.get("stream"):
            self._count("bad_request")
            return wire.error(
                400,
                "loopback server does not support stream=true",
                "invalid_request_error",
                "unsupported_parameter",
            )
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs or not all(isinstance(m, dict) for m in msgs):
            self._count("bad_request")
            return wire.error(400, "'messages' must be a non-empty list of objects", "invalid_request_error")
        model = str(body.get("model") or "scripted")
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
        if fault in ("fail_429", "fail_500"):
            await self._wait(arrived)
            headers = {"Retry-After": self.retry_after_value()} if self.retry_after else None
            status = 429 if fault == "fail_429" else self.error_status
            self._count(fault, digest, status, arrived=arrived_at)
            if fault == "fail_429":
                return wire.error(
                    429, "loopback: injected rate limit", "rate_limit_error", "rate_limit_exceeded", headers
                )
            return wire.error(status, "loopback: injected server error", "server_error", None, headers)
        messages = wire.messages(msgs)
        rf = body.get("response_format")
        schema = schema_from_optional_params({"response_format": rf})
        try:
            message = respond_message(model, messages, schema, body.get("tools"), body.get("tool_choice"))
        except Exception as e:  # noqa: BLE001 — a bug in the double must show, not hang the client
            await self._wait(arrived)
            self._count("error")
            return wire.error(500, f"loopback: scripted model raised {type(e).__name__}: {e}", "server_error")
        outcome = "ok"
        if fault == "malformed" and rf and message.get("content"):
            text = message["content"]
            variant = (n - 1) % 3
            message = {"content": text[: len(text) // 2] if variant == 0 else _MALFORMED_FIXED[variant - 1]}
            outcome = "malformed"
        pt = max(1, sum(len(m["content"]) for m in messages) // 4)
        cached = None
        if self.prompt_cache is not None:
            cached = self.prompt_cache.automatic("".join(m["content"] for m in messages))
        out = wire.completion(model, message, pt, cached)
        reply = web.Response(text=json.dumps(out), content_type="application/json")
        await self._wait(arrived)
        self._count(outcome, digest, 200, arrived=arrived_at)
        return reply

    async def _wait(self, arrived: float) -> None:
        """Sleep out the rest of `latency` since the request arrived (the reply is computed inside it)."""
        if self.latency:
            await asyncio.sleep(max(0.0, self.latency - (time.perf_counter() - arrived)))

    async def _models(self, request: web.Request) -> web.Response:
        data = [{"id": "scripted", "object": "model", "created": 0, "owned_by": "abeq-loopback"}]
        return web.json_response({"object": "list", "data": data})

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats)

    async def _reset(self, request: web.Request) -> web.Response:
        """POST /reset: zero the counters (a benchmark's warm-up must not count) and drop the
        scripted model's request history, which otherwise grows with every request."""
        self.reset()
        scripted.forget()
        return web.json_response(self.stats)

    def banner(self) -> str:
        return (
            f"serving {self.url}  (latency={self.latency} fail_rate={self.fail_rate} "
            f"malformed_rate={self.malformed_rate} hang_rate={self.hang_rate} seed={self.seed})"
        )

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/models", self._models)
        app.router.add_get("/health", self._health)
        app.router.add_get("/stats", self._stats)
        app.router.add_post("/reset", self._reset)
        return app


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m abeq.testing.loopback",
        description="OpenAI-compatible loopback server answering like abeq's scripted model",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    p.add_argument("--latency", type=float, default=0.0, help="seconds from each request to its answer")
    p.add_argument("--fail-rate", type=float, default=0.0, help="share of requests answered 429/500")
    p.add_argument(
        "--malformed-rate",
        type=float,
        default=0.0,
        help="share of response_format requests given invalid JSON",
    )
    p.add_argument("--hang-rate", type=float, default=0.0, help="share of requests never answered")
    p.add_argument("--hang-seconds", type=float, default=3600.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--retry-after", default=None, help="Retry-After header on injected failures")
    a = p.parse_args(argv)
    LoopbackServer(
        latency=a.latency,
        fail_rate=a.fail_rate,
        malformed_rate=a.malformed_rate,
        hang_rate=a.hang_rate,
        seed=a.seed,
        host=a.host,
        port=a.port,
        hang_seconds=a.hang_seconds,
        retry_after=a.retry_after,
    ).serve_forever()


if __name__ == "__main__":
    main()


def line_diff_judge(model, messages, schema):
    """A scripted judge's handler that answers with the line-diff rule (abeq.models.baseline.line_diff):
    the cheap rule that reads no behaviour, served as an OpenAI-compatible judge through this server
    (bench_calibration and the calibration test measure it like any judge). None for other calls."""
    from ..models.baseline import line_diff
    from ..prompts import read_data_blocks

    blocks = read_data_blocks(messages[-1]["content"])
    if "original_run" not in blocks:
        return None
    runs = [json.loads(blocks[n]) for n in ("original_run", "candidate_run")]
    verdict, why = line_diff(runs[0]["transcript"], runs[1]["transcript"])
    return json.dumps(
        {
            "verdict": verdict,
            "behaviour_delta": why,
            "original_directness": 4,
            "candidate_directness": 4,
            "interpretation_notes": "line diff",
        }
    )
