"""A real OpenAI-compatible HTTP server on loopback that answers like the `scripted` test model.

Tests and benchmarks point abeq at it as `openai/<anything>` with `api_base=srv.url`, so calls
travel litellm's real OpenAI route over real HTTP. Replies come from
`abeq.testing.scripted.respond`; faults (429/500, malformed JSON, hangs) are injected per
request from seeded RNGs, so a given seed and request order always gives the same outcomes.

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
import json
import random
import signal
import threading
import time

from aiohttp import web

from ..models.handlers import schema_from_optional_params
from . import scripted, wire
from .scripted import respond_message

_error = wire.error  # kept under its old name: fault tests build their own error replies with it

OUTCOMES = ("ok", "malformed", "fail_429", "fail_500", "hang", "bad_request", "error")
_MALFORMED_FIXED = ('{"verdict": "maybe"', '{"verdict": "maybe"}')


class LoopbackServer:
    """The server: the aiohttp app, its fault injection and counters, and a background runner.

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
        self.host = host
        self.port = port
        self.hang_seconds = hang_seconds
        self._stats_lock = threading.Lock()
        self.reset()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None

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

    def _count(self, outcome: str, answered: bool = True) -> None:
        with self._stats_lock:
            self._counts[outcome] += 1
            if answered:  # every answered outcome is counted as its reply goes out
                self._last_response_at = time.time()

    # ------------------------------------------------------------ handlers
    async def _chat(self, request: web.Request) -> web.Response:
        arrived = time.perf_counter()
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
        if fault in ("fail_429", "fail_500"):
            await self._wait(arrived)
            self._count(fault)
            if fault == "fail_429":
                return wire.error(
                    429, "loopback: injected rate limit", "rate_limit_error", "rate_limit_exceeded"
                )
            return wire.error(500, "loopback: injected server error", "server_error")
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
        out = wire.completion(model, message, pt)
        reply = web.Response(text=json.dumps(out), content_type="application/json")
        await self._wait(arrived)
        self._count(outcome)
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
        scripted.HISTORY.clear()
        return web.json_response(self.stats)

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

    # ------------------------------------------------------------ running
    def _make_runner(self) -> web.AppRunner:
        # No access log; cancel a handler when its client goes away (frees hung requests);
        # on shutdown give in-flight handlers a moment, then cancel them.
        return web.AppRunner(self.app(), access_log=None, handler_cancellation=True, shutdown_timeout=0.5)

    async def _start(self) -> None:
        self._runner = self._make_runner()
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def start(self) -> LoopbackServer:
        """Serve in a background thread with its own event loop; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError("loopback server already started")
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start())
            except BaseException as e:  # noqa: BLE001 — re-raised in the starting thread
                failure.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="abeq-loopback", daemon=True)
        self._thread.start()
        ready.wait(30)
        if failure:
            self._thread.join()
            self._thread = None
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        loop = self._loop
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=30)
        self._thread = self._loop = self._runner = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Run in the foreground until interrupted (the CLI)."""

        async def main() -> None:
            await self._start()
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.add_signal_handler(sig, stop.set)
                except (NotImplementedError, RuntimeError):  # e.g. Windows
                    pass
            print(
                f"abeq loopback: serving {self.url}  (latency={self.latency} fail_rate={self.fail_rate} "
                f"malformed_rate={self.malformed_rate} hang_rate={self.hang_rate} seed={self.seed})",
                flush=True,
            )
            try:
                await stop.wait()
            finally:
                await self._runner.cleanup()
                print(f"abeq loopback: stopped; stats {json.dumps(self.stats)}", flush=True)

        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            pass


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
    ).serve_forever()


if __name__ == "__main__":
    main()
