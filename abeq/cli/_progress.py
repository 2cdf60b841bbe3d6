"""A run's progress on stderr, drawn to fit where stderr goes.

In a terminal: one line redrawn in place (tqdm: a real carriage return, the line trimmed to the
terminal's width, so it never wraps and scrolls). In a log (stderr not a terminal, `CI` set,
`TERM=dumb`): a plain line when another tenth of the calls is done, or after a while with no such
step, never more often than every LOG_GAP seconds, and the last line; no carriage return at all.
Either way the text is abeq's own words around counts; anything in it from outside (a provider's
throttling message) is passed through `term_safe`, and the line is written to the real stream (the
CLI's TermSafe wrapper would escape the carriage return that redraws it).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from ..untrusted import TermSafe, term_safe

LOG_GAP = 3.0  # seconds: at most one progress line per this, in a log
LOG_STEP = 0.1  # a line for each further tenth of the calls done
LOG_EVERY = 15.0  # seconds: a line anyway after this long, so a slow run still shows it is alive
BAR_WIDTH = 24


def raw_stderr() -> TextIO:
    """stderr itself, not the CLI's TermSafe wrapper around it."""
    err = sys.stderr
    return err.stream if isinstance(err, TermSafe) else err


def is_terminal(stream) -> bool:
    """Redraw in place only on an interactive terminal: not into a pipe or file, not in CI (whose
    log viewers keep every frame), not on a terminal that says it cannot move the cursor."""
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and not ci and os.environ.get("TERM") != "dumb"


def describe(p: dict) -> str:
    """The counts of a progress dict in words (no bar): cases, elapsed and left, runner and judge
    calls, cache hits, failures, and what rate limits or an agent's spending are doing."""
    # the most telling first: a narrow terminal cuts the line's end
    eta = f", ~{p['eta']:.0f}s left" if p.get("eta") else ""
    text = (
        f"{p['done']}/{p['total']} cases · {p['elapsed']:.0f}s{eta} · runner {p['runner_done']}/"
        f"{p['runner_needed']} · judge {p['judge_done']}/{p['judge_needed']} · {p['cached']} cached"
        f" · {p['failed_calls']} failed"
    )
    if p.get("throttle"):
        text += f" · {p['throttle']}"
    if p.get("runner_projected") is not None:
        text += f" · agent ${p['runner_cost']:.2f} so far, ~${p['runner_projected']:.2f} for the runs left"
    return term_safe(text)


class Bar:
    """The progress callback of a run-like command (`on_progress`): one line per run, closed when the
    run's cases are all done or it stopped early (or by `close()`, on any other way out)."""

    def __init__(
        self,
        quiet: bool,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        terminal: bool | None = None,
    ):
        self.stream = stream if stream is not None else raw_stderr()
        self.quiet = quiet or self.stream is None
        self.terminal = is_terminal(self.stream) if terminal is None else terminal
        self.clock = clock
        self.closed = False
        self._tq: Any = None  # the tqdm line, in a terminal
        self._last: tuple[float, float] | None = None  # (when, share done) of the last log line
        self._said = ""

    def __call__(self, p: dict) -> None:
        if self.quiet or self.closed:
            return
        needed = max(1, p["runner_needed"] + p["judge_needed"])
        resolved = min(needed, p["runner_done"] + p["judge_done"])
        final = p["done"] >= p["total"] or bool(p.get("ended"))
        if self.terminal:
            self._draw(needed, resolved, describe(p), final)
        else:
            self._log(resolved / needed, describe(p), final)
        if final:
            self.close()

    def _draw(self, needed: int, resolved: int, text: str, final: bool) -> None:
        from tqdm import tqdm

        if self._tq is None:
            self._tq = tqdm(
                total=needed,
                initial=resolved,
                desc=text,
                file=self.stream,
                bar_format=f"[{{bar:{BAR_WIDTH}}}] {{desc}}",
                ascii=".#",
                ncols=self._width(),
                mininterval=0.2,
                leave=True,
            )
        tq = self._tq
        tq.total, tq.ncols = needed, self._width()  # trimmed to the terminal's width as it is now
        tq.set_description_str(text, refresh=False)
        tq.update(resolved - tq.n)  # redraws at most every mininterval
        if final:
            tq.refresh()

    def _width(self) -> int:
        """The terminal's columns less one (a line as wide as the screen wraps on some terminals);
        80 when the terminal does not say (a pseudo-terminal nobody sized reports 0)."""
        try:
            cols = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            cols = 0
        return (cols or 80) - 1

    def _log(self, share: float, text: str, final: bool) -> None:
        now = self.clock()
        if self._last is not None:
            when, was = self._last
            gap = now - when
            due = gap >= LOG_GAP and (share >= was + LOG_STEP or gap >= LOG_EVERY)
            if not (due or (final and text != self._said)):
                return
        self.stream.write(f"progress: {share:.0%} · {text}\n")
        self.stream.flush()
        self._last, self._said = (now, share), text

    def close(self) -> None:
        """End the line (a terminal's last frame stays, with a newline after it)."""
        if self.closed:
            return
        self.closed = True
        if self._tq is not None:
            self._tq.close()
