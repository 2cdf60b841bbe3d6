"""The pull request on GitHub: which one (from the event file), one comment kept up to date, the job summary.

Only what a job's environment gives: `GITHUB_API_URL`, `GITHUB_REPOSITORY`, `GITHUB_EVENT_PATH`,
`GITHUB_TOKEN`, `GITHUB_STEP_SUMMARY`. The comment carries a hidden marker; a later push finds it and
PATCHes it, so a pull request has one abeq comment however often it is pushed. A failure to comment
never changes the gate's result: it is said once and the exit code stays the gate's.

Only a marked comment the token's own identity wrote is updated: anyone can write the marker (the
pull request's author first of all), and a result PATCHed into their comment is one they can edit
back. Who the token is comes from GraphQL's `viewer` (it answers for the job's GITHUB_TOKEN and for
a GitHub App's installation token, which REST's `GET /user` refuses), then `GET /user` (a personal
token on a GitHub Enterprise Server without GraphQL); when neither answers, the job's GITHUB_TOKEN is
assumed: `github-actions[bot]`. A wrong guess costs a second comment, never a hijacked one.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass

from ..errors import InputError
from .comment import MARKER

TIMEOUT = 30.0
ACTIONS_BOT = "github-actions[bot]"  # who a workflow's GITHUB_TOKEN writes as


@dataclass
class PullRequest:
    api: str
    repo: str  # owner/name
    number: int
    fork: bool
    token: str
    graphql: str = ""  # GitHub's GraphQL endpoint ($GITHUB_GRAPHQL_URL; api + /graphql by default)


def pull_request(env: dict[str, str] | None = None) -> PullRequest:
    """The pull request this job runs for, from the event file; an InputError saying what is missing."""
    env = dict(os.environ if env is None else env)
    hint = "Run `abeq gate --github` in a workflow triggered by pull_request (docs/guides/gate.md)."
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        raise InputError("--github needs GITHUB_EVENT_PATH (set by GitHub Actions)", hint=hint)
    from ..files import read_limited

    data = read_limited(path, 25_000_000, what="the event file", hint=hint)  # GitHub's are far smaller
    try:
        event = json.loads(data.decode("utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read the event file: {e}", path=path, hint=hint) from None
    pr = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pr, dict) or not isinstance(pr.get("number") or event.get("number"), int):
        raise InputError("the event is not a pull request's (no pull_request.number)", path=path, hint=hint)
    head_repo = ((pr.get("head") or {}).get("repo") or {}) if isinstance(pr.get("head"), dict) else {}
    base_repo = ((pr.get("base") or {}).get("repo") or {}) if isinstance(pr.get("base"), dict) else {}
    # a fork's pull request: its head lives in another repository (or one since deleted)
    fork = bool(base_repo.get("full_name")) and head_repo.get("full_name") != base_repo.get("full_name")
    repo = env.get("GITHUB_REPOSITORY") or base_repo.get("full_name") or ""
    if "/" not in repo:
        raise InputError("--github needs GITHUB_REPOSITORY (owner/name)", hint=hint)
    return PullRequest(
        api=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
        repo=repo,
        number=int(pr.get("number") or event["number"]),
        fork=fork,
        token=env.get("GITHUB_TOKEN", ""),
        graphql=env.get("GITHUB_GRAPHQL_URL", ""),
    )


def _call(pr: PullRequest, method: str, path: str, body: dict | None = None, url: str = ""):
    req = urllib.request.Request(
        url or pr.api + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "abeq-gate",
            **({"Authorization": f"Bearer {pr.token}"} if pr.token else {}),
            **({"Content-Type": "application/json"} if body is not None else {}),
        },
    )
    with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:  # noqa: S310 — the job's own API URL
        return json.loads(resp.read() or b"null")


def identity(pr: PullRequest) -> str:
    """The login the token writes comments as (see the module's docstring for how it is found)."""
    try:
        got = _call(pr, "POST", "/graphql", {"query": "query { viewer { login } }"}, pr.graphql)
        login = ((got or {}).get("data") or {}).get("viewer", {}).get("login")
        if isinstance(login, str) and login:
            return login
    except (urllib.error.URLError, OSError, ValueError, AttributeError):
        pass
    try:
        login = (_call(pr, "GET", "/user") or {}).get("login")
        if isinstance(login, str) and login:
            return login
    except (urllib.error.URLError, OSError, ValueError, AttributeError):
        pass
    return ACTIONS_BOT


def _same(author: str, login: str) -> bool:
    """Whether a comment's author is the token's identity (GraphQL may name an app `slug` where
    REST's `user.login` says `slug[bot]`)."""
    return author == login or author == login + "[bot]" or author + "[bot]" == login


def find_comment(pr: PullRequest, login: str | None = None) -> int | None:
    """The id of this pull request's abeq comment: the first whose body starts with the marker and
    whose author (`user.login`) is `login` (the token's identity); None when there is none."""
    login = login or identity(pr)
    for page in range(1, 51):
        got = _call(pr, "GET", f"/repos/{pr.repo}/issues/{pr.number}/comments?per_page=100&page={page}")
        if not isinstance(got, list):
            return None
        for c in got:
            if not isinstance(c, dict) or not str(c.get("body") or "").startswith(MARKER):
                continue
            author = (c.get("user") or {}).get("login") if isinstance(c.get("user"), dict) else None
            if isinstance(author, str) and _same(author, login):
                return int(c["id"])
        if len(got) < 100:
            return None
    return None


def upsert_comment(pr: PullRequest, body: str, *, create: bool = True) -> str:
    """Write the comment (PATCH the marked one, else POST a new one when `create`); returns "" or why it
    could not be written, in one line."""
    try:
        existing = find_comment(pr)
        if existing is not None:
            _call(pr, "PATCH", f"/repos/{pr.repo}/issues/comments/{existing}", {"body": body})
        elif create:
            _call(pr, "POST", f"/repos/{pr.repo}/issues/{pr.number}/comments", {"body": body})
        return ""
    except urllib.error.HTTPError as e:
        why = {403: " (the token lacks pull-requests: write, or this is a fork's pull request)"}.get(
            e.code, ""
        )
        return f"the pull-request comment was not written: GitHub answered {e.code} {e.reason}{why}"
    except (urllib.error.URLError, OSError, ValueError) as e:
        return f"the pull-request comment was not written: {getattr(e, 'reason', e)}"


def write_summary(body: str, env: dict[str, str] | None = None) -> str:
    """Append to the job summary ($GITHUB_STEP_SUMMARY); "" or why it could not."""
    path = (os.environ if env is None else env).get("GITHUB_STEP_SUMMARY")
    if not path:
        return ""
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(body + "\n")
        return ""
    except OSError as e:
        return f"the job summary was not written: {e}"
