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
