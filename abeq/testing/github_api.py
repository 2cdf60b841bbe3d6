"""A loopback double of the part of GitHub's REST API `abeq gate --github` uses: a pull request's
comments (list, create, update). It keeps the comments in memory and records every request, so a
test can count the POSTs and PATCHes; `fail` makes a method answer an error status.

    with GitHubDouble() as gh:
        env = {"GITHUB_API_URL": gh.url, "GITHUB_REPOSITORY": "o/r", ...}
        ...
        gh.requests  # [("POST", "/repos/o/r/issues/7/comments", {"body": ...}), ...]

    python -m abeq.testing.github_api --port 8766
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


class GitHubDouble:
    def __init__(self, port: int = 0, fail: dict[str, int] | None = None):
        self.comments: dict[int, dict[str, Any]] = {}  # id -> {"id", "body", "issue"}
        self.requests: list[tuple[str, str, Any]] = []
        self.fail = dict(fail or {})  # method -> status it answers instead
        self.tokens: list[str] = []
        self._next = 1000
        self._lock = threading.Lock()
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _answer(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                path = urlsplit(self.path).path
                status, answer = double.handle(method, path, body, self.headers.get("Authorization", ""))
                self._answer(status, answer)

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

            def do_PATCH(self):
                self._handle("PATCH")

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def handle(self, method: str, path: str, body: Any, auth: str) -> tuple[int, Any]:
        with self._lock:
            self.requests.append((method, path, body))
            self.tokens.append(auth)
            if method in self.fail:
                return self.fail[method], {"message": "refused by the test double"}
            if m := re.fullmatch(r"/repos/[^/]+/[^/]+/issues/(\d+)/comments", path):
                issue = int(m.group(1))
                if method == "GET":
                    return 200, [c for c in self.comments.values() if c["issue"] == issue]
                if method == "POST" and isinstance(body, dict):
                    self._next += 1
                    self.comments[self._next] = {
                        "id": self._next,
                        "body": body.get("body", ""),
                        "issue": issue,
                    }
                    return 201, self.comments[self._next]
            if (m := re.fullmatch(r"/repos/[^/]+/[^/]+/issues/comments/(\d+)", path)) and method == "PATCH":
                c = self.comments.get(int(m.group(1)))
                if c is None or not isinstance(body, dict):
                    return 404, {"message": "Not Found"}
                c["body"] = body.get("body", "")
                return 200, c
            return 404, {"message": "Not Found"}

    def count(self, method: str) -> int:
        return sum(1 for m, _, _ in self.requests if m == method)

    def __enter__(self) -> GitHubDouble:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8766)
    a = ap.parse_args()
    with GitHubDouble(a.port) as gh:
        print(gh.url, flush=True)
        threading.Event().wait()
