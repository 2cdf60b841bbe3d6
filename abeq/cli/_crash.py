"""An unexpected error is not a verdict: its own exit code, one line on stderr, the traceback in a file.

Exit 1 means "a case regressed" to every CI that reads it, so a bug in abeq (or a broken
installation) must never end that way. The traceback goes to a log file under the user's state
folder ($XDG_STATE_HOME/abeq/crashes, else ~/.local/state/abeq/crashes), or to stderr as well when
ABEQ_DEBUG is set, or when the file cannot be written.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

DEBUG_ENV = "ABEQ_DEBUG"


def crash_dir() -> Path:
    """Where crash logs go: the XDG state folder (a user's, never the working directory)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "abeq" / "crashes"


def _redacted(text: str) -> str:
    """The log without credentials; if even that cannot be imported (a broken installation is one
    cause of a crash), with key-shaped values still unknown to it: the text as it is."""
    try:
        from ..models.http import redact

        return redact(text)
    except Exception:
        return text


def report(exc: BaseException, argv: list[str]) -> None:
    """Write the traceback of `exc` to a crash log and say where, in one line on stderr."""
    from .. import __version__

    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    body = _redacted(
        f"abeq {__version__} on Python {sys.version.split()[0]}\ncommand: abeq {' '.join(argv)}\n\n{tb}"
    )
    where = None
    try:
        folder = crash_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = folder / f"crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # may hold paths and inputs
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(body)
        where = path
    except OSError:
        pass
    debug = bool(os.environ.get(DEBUG_ENV))
    if debug or where is None:
        sys.stderr.write(body)
    summary = _redacted(f"{type(exc).__name__}: {exc}".splitlines()[0][:200])
    said = f"the traceback is in {where}" if where else "the traceback is above"
    print(
        f"abeq: unexpected error ({summary}); {said}. This is a bug in abeq or its installation, not a "
        f"verdict (exit 4){'' if debug else f'; set {DEBUG_ENV}=1 to print it here'}.",
        file=sys.stderr,
    )
