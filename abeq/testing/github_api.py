"""A loopback double of the part of GitHub's API `abeq gate --github` uses: a pull request's
comments (list, create, update) and who the token is (GraphQL's `viewer`, REST's `GET /user`). It
keeps the comments in memory, each with its author (`user.login`, from the token that wrote it, as
GitHub does), and records every request, so a test can count the POSTs and PATCHes; `fail` makes a
method answer an error status; `plant` writes a comment as someone else (a pull request's author).

An installation token (`ghs_…`: the job's GITHUB_TOKEN, a GitHub App's) is refused by `GET /user`
("Resource not accessible by integration") and answered by GraphQL's `viewer`, as on GitHub.

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
    def __init__(
        self, port: int = 0, fail: dict[str, int] | None = None, logins: dict[str, str] | None = None
    ):
        self.comments: dict[int, dict[str, Any]] = {}  # id -> {"id", "body", "issue", "user"}
        # token -> whose it is (the job's GITHUB_TOKEN writes as github-actions[bot])
        self.logins = {"ghs_test": "github-actions[bot]", **(logins or {})}
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

    def user(self, login: str) -> dict[str, Any]:
        return {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"}

    def plant(self, issue: int, body: str, login: str) -> int:
        """A comment written by `login` (not through the API: the test's setup); its id."""
        with self._lock:
            self._next += 1
            self.comments[self._next] = {
                "id": self._next,
                "body": body,
                "issue": issue,
                "user": self.user(login),
            }
            return self._next

    def handle(self, method: str, path: str, body: Any, auth: str) -> tuple[int, Any]:
        with self._lock:
            self.requests.append((method, path, body))
            self.tokens.append(auth)
            if method in self.fail:
                return self.fail[method], {"message": "refused by the test double"}
            token = auth.removeprefix("Bearer ").strip()
            login = self.logins.get(token)
            if path == "/graphql" and method == "POST":
                if login is None:
                    return 401, {"message": "Bad credentials"}
                return 200, {"data": {"viewer": {"login": login}}}
            if path == "/user" and method == "GET":
                if token.startswith("ghs_"):
                    return 403, {"message": "Resource not accessible by integration"}
                return (200, self.user(login)) if login else (401, {"message": "Bad credentials"})
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
                        "user": self.user(login or "someone"),
                    }
                    return 201, self.comments[self._next]
            if (m := re.fullmatch(r"/repos/[^/]+/[^/]+/issues/comments/(\d+)", path)) and method == "PATCH":
                c = self.comments.get(int(m.group(1)))
                if c is None or not isinstance(body, dict):
                    return 404, {"message": "Not Found"}
                c["body"] = body.get("body", "")
                c["edited_by"] = login or "someone"
                return 200, c
            return 404, {"message": "Not Found"}

    def count(self, method: str) -> int:
        """Requests on comments by method (a POST to /graphql asks who the token is: not counted)."""
        return sum(1 for m, p, _ in self.requests if m == method and "/comments" in p)

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
