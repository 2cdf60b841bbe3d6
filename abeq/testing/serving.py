"""A test double's HTTP server on loopback: an aiohttp app served from a background thread with its
own event loop (or in the foreground, for a command line). The fake providers subclass it."""

from __future__ import annotations

import asyncio
import json
import signal
import threading

from aiohttp import web


class BackgroundServer:
    """Subclasses give `app()`, `url` and `stats`; this serves them on host:port (0: a free port)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.host = host
        self.port = port
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        raise NotImplementedError

    @property
    def url(self) -> str:
        raise NotImplementedError

    @property
    def stats(self) -> dict:
        raise NotImplementedError

    def banner(self) -> str:
        return f"serving {self.url}"

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

    def start(self) -> BackgroundServer:
        """Serve in a background thread with its own event loop; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
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

        self._thread = threading.Thread(target=run, name=f"abeq-{type(self).__name__}", daemon=True)
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

    def __enter__(self) -> BackgroundServer:
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
            print(f"abeq {type(self).__name__}: {self.banner()}", flush=True)
            try:
                await stop.wait()
            finally:
                if self._runner is not None:  # set by _start
                    await self._runner.cleanup()
                print(f"abeq {type(self).__name__}: stopped; stats {json.dumps(self.stats)}", flush=True)

        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            pass
