"""The reusable prompt prefix of a request, marked once and sent as each provider wants it.

Every runner call for one document starts with the same bytes: the runner prompt (system), then the
document. Providers that cache prefixes by themselves (OpenAI and OpenAI-compatible servers) need
that prefix byte-identical and first, nothing more; Anthropic caches only up to a block marked
`cache_control`, and must be told. The runner marks where its prefix ends (`mark_prefix`); the
call layer keeps the mark for the providers whose registry entry says `cache_marks` and sends
everyone else the same text as one plain string (`for_provider`), so no OpenAI-style endpoint ever
receives a `cache_control` field.
"""

from __future__ import annotations

EPHEMERAL = {"type": "ephemeral"}


def mark_prefix(messages: list[dict], head: str) -> list[dict]:
    """The messages with the last user message split after `head` (which it must start with), the
    head marked as the end of the reusable prefix. Joined again, the text is unchanged."""
    out = list(messages)
    i = max(n for n, m in enumerate(out) if m["role"] == "user")
    text = out[i]["content"]
    if not isinstance(text, str) or not text.startswith(head) or len(text) == len(head):
        return out
    out[i] = {
        **out[i],
        "content": [
            {"type": "text", "text": head, "cache_control": dict(EPHEMERAL)},
            {"type": "text", "text": text[len(head) :]},
        ],
    }
    return out


def _has_parts(messages: list[dict]) -> bool:
    return any(isinstance(m.get("content"), list) for m in messages)


def plain(messages: list[dict]) -> list[dict]:
    """Every message's text parts joined into one string, marks dropped (the bytes are the same)."""
    if not _has_parts(messages):
        return messages
    out = []
    for m in messages:
        c = m.get("content")
        if isinstance(c, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in c):
            m = {k: v for k, v in m.items() if k != "cache_control"}
            m["content"] = "".join(p.get("text", "") for p in c)
        out.append(m)
    return out


def for_provider(spec, messages: list[dict]) -> list[dict]:
    """The messages as this model's provider takes them: marked for those that cache only where
    told, plain text for every other."""
    return messages if spec.provider.cache_marks else plain(messages)


def prefix_of(messages: list[dict]) -> str:
    """The reusable prefix a request declares: its system text and everything up to the last marked
    part; the system text alone when nothing is marked (e.g. every judge call shares its prompt)."""
    head = []
    marked = ""
    for m in messages:
        c = m.get("content")
        parts = c if isinstance(c, list) else [{"type": "text", "text": c or ""}]
        for p in parts:
            head.append(f"{m['role']}:{p.get('text', '')}" if isinstance(p, dict) else "")
            if isinstance(p, dict) and p.get("cache_control"):
                marked = "\x00".join(head)
    if marked:
        return marked
    return "\x00".join(f"system:{m.get('content')}" for m in messages if m["role"] == "system")
