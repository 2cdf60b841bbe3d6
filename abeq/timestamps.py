"""One timestamp format for everything abeq stores or writes: UTC, seconds, ISO 8601 with a Z."""

from __future__ import annotations

import calendar
import time

FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def now() -> str:
    return time.strftime(FORMAT, time.gmtime())


def epoch(ts: str | None) -> float | None:
    """Seconds since 1970 for a stored timestamp (None for none); older '+00:00' stamps are read too."""
    if not ts:
        return None
    ts = ts.replace("+00:00", "Z")
    return float(calendar.timegm(time.strptime(ts, FORMAT)))


def local(ts: str | None) -> str:
    """A stored timestamp as the reader's local time, to the minute ("2026-12-03 18:04 CET");
    text that is not one of ours (a hand-written set file) is shown as it is."""
    try:
        t = epoch(ts)
    except ValueError:
        return ts or ""
    if t is None:
        return ""
    lt = time.localtime(t)
    return time.strftime("%Y-%m-%d %H:%M ", lt) + time.strftime("%Z", lt)


def ago(ts: str | None, now_s: float | None = None) -> str:
    """How long ago, in words a reader takes in at a glance: "just now", "2 min ago", "3 h ago"."""
    try:
        t = epoch(ts)
    except ValueError:
        t = None
    if t is None:
        return ts or "at an unknown time"
    s = max(0.0, (time.time() if now_s is None else now_s) - t)
    if s < 60:
        return "just now"
    if s < 3600:
        return f"{int(s // 60)} min ago"
    if s < 86400:
        return f"{int(s // 3600)} h ago"
    return f"on {local(ts)}"
