"""The pull request on GitHub: which one (from the event file), one comment kept up to date, the job summary.

Only what a job's environment gives: `GITHUB_API_URL`, `GITHUB_REPOSITORY`, `GITHUB_EVENT_PATH`,
`GITHUB_TOKEN`, `GITHUB_STEP_SUMMARY`. The comment carries a hidden marker; a later push finds it and
PATCHes it, so a pull request has one abeq comment however often it is pushed. A failure to comment
never changes the gate's result: it is said once and the exit code stays the gate's.
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


@dataclass
class PullRequest:
    api: str
    repo: str  # owner/name
    number: int
    fork: bool
    token: str


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
    )


def _call(pr: PullRequest, method: str, path: str, body: dict | None = None):
    req = urllib.request.Request(
        pr.api + path,
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


def find_comment(pr: PullRequest) -> int | None:
    """The id of this pull request's abeq comment (the marker), if one exists."""
    for page in range(1, 51):
        got = _call(pr, "GET", f"/repos/{pr.repo}/issues/{pr.number}/comments?per_page=100&page={page}")
        if not isinstance(got, list):
            return None
        for c in got:
            if isinstance(c, dict) and MARKER in str(c.get("body") or ""):
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
