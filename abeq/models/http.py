"""The lean transport for OpenAI-compatible servers: one pooled aiohttp session per event loop.

litellm costs ~13 ms CPU per call here (its SDK stack, cost lookups and logging), which at high
concurrency stretches a run to ~1.9x its critical path. For a provider marked `fast_http` with an
api base the request and reply are plain OpenAI JSON, so abeq posts it itself, behind the same
retry, validation and accounting. ABEQ_TRANSPORT=litellm turns this off.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable

from .spec import ModelSpec
from .usage import Usage, from_openai_json

REDACTED = "[redacted]"
# credentials by their shape, wherever they come from (an agent may print one it found in a file)
SECRET_PATTERNS = re.compile(
    "|".join(
        (
            r"sk-ant-[A-Za-z0-9_\-]{16,}",  # Anthropic
            r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",  # OpenAI
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key id
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
            r"\bgithub_pat_[A-Za-z0-9_]{20,}",
            r"\bglpat-[A-Za-z0-9_\-]{20,}",  # GitLab
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
            r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API key
            r"\bhf_[A-Za-z0-9]{30,}",  # Hugging Face
            # PEM ("RSA PRIVATE KEY") and PGP ("PGP PRIVATE KEY BLOCK") private keys, to their end
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        )
    )
)
# Secrets known by what precedes them, which stays: an AWS secret access key after its name (its 40
# characters alone look like any base64), the password of a URL's user:password@, and the value of
# any *password* option in a URL's query (libpq's password=, sslpassword=)
_USERINFO = r"(\b[a-z][a-z0-9+.-]*://[^\s/?#@:]*:)[^\s/?#@]+(?=@)"
_KEYED = re.compile(
    r"(?i)(?P<url>\b[a-z][a-z0-9+.-]*://[^\s?#]*\?)(?P<query>[^\s#'\"]*password[^\s#'\"]*)"
    r"|(?P<aws>\b(?:aws_?)?secret_?access_?key\b[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"
    r"|" + _USERINFO.replace("(", "(?P<user>", 1)
)
_QUERY_SECRET = re.compile(r"(?i)((?:^|&)[^&=]*password[^&=]*=)[^&]*")
_SURROGATE = re.compile("[\ud800-\udfff]")
_KEYED_STEM = re.compile(r"(?i)secret_?access|://")
# A literal every match of SECRET_PATTERNS contains (a GitHub token's "gh?_" is _GH): a text holding
# none of them holds no such credential. Looking for them is ~20x cheaper than the patterns'
# alternation over a long transcript (~1 ms for 3 KB), and every text a runner replies is redacted.
_STEMS = ("sk-", "AKIA", "ASIA", "github_pat_", "glpat-", "xox", "AIza", "hf_", "-----BEGIN ")
_GH = re.compile(r"gh[pousr]_")
# values passed to a runner by name (--runner-env): whatever their name, they are never stored
_PASSED: set[str] = set()


def keep_secret(value: str) -> None:
    """Redact this value from everything stored or printed from now on (a value passed by name)."""
    if value and len(value) >= 4:
        _PASSED.add(value)


def redact(text: str) -> str:
    """Keep credentials out of anything we store or print: environment values whose names say they
    are secret, values passed to a runner by name, and anything shaped like a known kind of key."""
    return redactor()(text)


def redactor() -> Callable[[str], str]:
    """redact() with the secret values read once (from the environment as it is now): for the many
    texts of one reply."""
    ordered = sorted(_secret_env() | _PASSED, key=len, reverse=True)  # longest first: one may hold another

    def go(text: str) -> str:
        if not text.isascii():  # half a character (a lone surrogate from a JSON "\\ud800") cannot be stored
            text = _SURROGATE.sub("\ufffd", text)
        for v in ordered:
            if v in text:
                text = text.replace(v, REDACTED)
        if _KEYED_STEM.search(text):
            text = _KEYED.sub(_keyed, text)
        return SECRET_PATTERNS.sub(REDACTED, text) if may_hold_secret(text) else text

    return go


def _keyed(m: re.Match) -> str:
    if m["url"]:  # a URL whose query names a password: its user's and each *password* option's value
        url = re.sub("(?i)" + _USERINFO, lambda u: u.group(1) + REDACTED, m["url"])
        return url + _QUERY_SECRET.sub(lambda q: q.group(1) + REDACTED, m["query"])
    return (m["aws"] or m["user"]) + REDACTED


_env_read: tuple[dict, set[str]] | None = None  # the environment as last read, and its secret values


def _secret_env() -> set[str]:
    """The environment's values whose names say they are secret. Decoding the whole environment
    costs more than redacting a reply, so it is read again only when it changed (os.environ's raw
    mapping compared with a copy of it as last read)."""
    global _env_read
    raw = getattr(os.environ, "_data", None)
    if raw is not None and _env_read is not None and _env_read[0] == raw:
        return _env_read[1]
    values = {
        v for k, v in os.environ.items() if len(v) >= 8 and ("KEY" in k or "TOKEN" in k or "SECRET" in k)
    }
    if raw is not None:
        _env_read = (dict(raw), values)
    return values


def may_hold_secret(text: str) -> bool:
    """False when no pattern of SECRET_PATTERNS can match `text` (it holds none of their stems)."""
    return any(s in text for s in _STEMS) or _GH.search(text) is not None


def strip_credentials(url: str | None) -> tuple[str | None, bool]:
    """A server address fit to store: without user:password and query string (where gateways put
    keys); and whether anything was taken out."""
    if not url:
        return url, False
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc and not (parts.query or parts.fragment):
        return url, False
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", "")), True


def uses_fast_path(spec: ModelSpec) -> bool:
    """Whether this call goes over abeq's own HTTP client rather than litellm."""
    return (
        bool(spec.api_base)
        and spec.provider.fast_http
        and os.environ.get("ABEQ_TRANSPORT", "fast").lower() != "litellm"
    )


class HTTPStatusError(Exception):
    def __init__(self, status_code: int, body: str, headers=None):
        self.status_code = status_code
        self.headers = headers  # Retry-After and the rate-limit headers are read from here
        super().__init__(
            f"HTTP {status_code}: {redact(body)[:300]}"
        )  # redact first: a cut key would not match


_sessions: dict = {}


async def open_session() -> None:
    """Keep one pooled HTTP session for this event loop until close_sessions (the engine does both)."""
    import asyncio  # here: loaded by the loop that runs this, never by a command that calls no model

    import aiohttp

    loop = asyncio.get_running_loop()
    if loop not in _sessions or _sessions[loop].closed:
        _sessions[loop] = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300))


async def close_sessions() -> None:
    """Close this event loop's HTTP session (the engine calls it when a run ends)."""
    import asyncio

    sess = _sessions.pop(asyncio.get_running_loop(), None)
    if sess is not None:
        await sess.close()


async def send_fast(spec: ModelSpec, kwargs: dict) -> tuple[str, Usage, object, list[dict]]:
    """POST one chat completion; (text, what it used and cost, the reply's headers, tool calls)."""
    assert spec.api_base, "only a spec with an API base takes this path (uses_fast_path)"
    model = spec.name.split("/", 1)[1]
    body = {
        "model": model,
        "messages": kwargs["messages"],
        "temperature": kwargs["temperature"],
        "max_tokens": kwargs["max_tokens"],
    }
    for k in ("seed", "response_format", "tools", "tool_choice"):
        if k in kwargs:
            body[k] = kwargs[k]
    headers = {"Content-Type": "application/json"}
    key = os.environ.get(spec.provider.key_env) if spec.provider.key_env else None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    import asyncio

    import aiohttp

    pooled = _sessions.get(asyncio.get_running_loop())
    sess = pooled if pooled is not None and not pooled.closed else aiohttp.ClientSession()
    try:
        async with sess.post(
            spec.api_base.rstrip("/") + "/chat/completions",
            json=body,
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=spec.timeout),
        ) as r:
            text = await r.text()
            reply_headers = r.headers
            if r.status >= 400:
                raise HTTPStatusError(r.status, text, reply_headers)
    finally:
        if sess is not pooled:  # a one-off call outside a run
            await sess.close()
    data = json.loads(text)
    message = (data.get("choices") or [{}])[0].get("message") or {}
    calls = [
        {"id": c.get("id", ""), "type": "function", "function": c.get("function") or {}}
        for c in message.get("tool_calls") or []
    ]
    # a self-hosted model is not in the price list: unpriced
    usage = Usage.priced(spec.name, *from_openai_json(data.get("usage")))
    return message.get("content") or "", usage, reply_headers, calls  # the reply's: its rate-limit budget
