"""Word-level diffs of two transcripts, and their rendering as escaped HTML for `st.html`."""

from __future__ import annotations

import bisect
import functools
import html
import math
import re
import sys
import threading
import time
import unicodedata
from collections import Counter, OrderedDict

from diff_match_patch import diff_match_patch

DELETE, EQUAL, INSERT = -1, 0, 1
TOO_DIFFERENT = "too different to diff"

# Each distinct token becomes one character so dmp diffs whole units.
# The encoded strings hold only these characters, so any code point works; starting at the
# private-use area and running to the top of Unicode skips the surrogates and allows ~1M units.
_FIRST_CODE = 0xE000
_MAX_CODES = sys.maxunicode + 1 - _FIRST_CODE

# Up to this many tokens (a + b), dmp diffs in one go, which gives the minimal diff. Longer texts
# are first cut at anchors, because dmp's search is O(tokens x edits): two 50 KB transcripts with
# edits everywhere would run into the timeout.
_DIRECT_LIMIT = 500
_MAX_DEPTH = 20

_NL = r"(?:\r\n|\r|\n)"
# Side-by-side rows are cut after a shared line break (and any blank lines after it).
_ROW_END = re.compile(rf"{_NL}(?:[ \t]*{_NL})*")

_NOTE_STYLE = (
    "margin:0 0 6px;padding:4px 8px;color:#1f2328;"
    "background:#fff8c5;border:1px solid #d4a72c;border-radius:4px"
)
_BOX_STYLE = (
    "color:#1f2328;background:#ffffff;border:1px solid #d0d7de;border-radius:6px;"
    "font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
    "white-space:pre-wrap;overflow-wrap:anywhere;padding-bottom:4px"
)
_GRID_STYLE = "display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr)"
_HEAD_STYLE = (
    "font-weight:600;padding:4px 10px;margin-bottom:4px;background:#f6f8fa;"
    "border-bottom:1px solid #d0d7de;white-space:normal"
)
_LEFT_STYLE = "padding:0 10px"
_RIGHT_STYLE = "padding:0 10px;border-left:1px solid #d0d7de"
# Deletions keep the strike-through so they differ from insertions without relying on colour.
_MARK_STYLE = {
    DELETE: ("del", "background:#ffd7d5;color:#82071e"),
    INSERT: ("ins", "background:#ccffd8;color:#055d20;text-decoration:none"),
}


class _TooDifferent(Exception):
    """The diff ran out of time (or of code points); the caller reports 'too different'."""


@functools.cache
def _token_re() -> re.Pattern[str]:
    # Python's \w leaves out combining marks, so "café" (decomposed) or Hindi words would split
    # mid-letter and a lone accent could end up highlighted on its own. Gather the marks once.
    # Only those in the BMP: re tests a class holding astral characters range by range, which
    # doubled the time to tokenize, and astral marks belong to rare historic scripts.
    ranges: list[list[int]] = []
    for c in range(0x300, 0x10000):
        if unicodedata.category(chr(c)).startswith("M"):
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1][1] = c
            else:
                ranges.append([c, c])
    mark = "[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in ranges) + "]"  # no mark is special in a class
    # Emoji keep their variation selectors, skin tones, tags and ZWJ-joined parts; a flag is a
    # pair of regional indicators.
    joiner = rf"{mark}|[\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f\U000e0100-\U000e01ef]|\u200d[^\w\s]"
    # Marks are looked for only where a run of \w stops, not at every letter.
    return re.compile(rf"\w+(?:{mark}+\w*)*|\s+|[\U0001f1e6-\U0001f1ff]{{2}}|[^\w\s](?:{joiner})*")


def tokenize(text: str) -> list[str]:
    """Split text into words, whitespace runs and single punctuation characters; joined, they give
    the text back."""
    return _token_re().findall(text)


def _encode(a_units: list[str], b_units: list[str]) -> tuple[str, str, dict[str, str]]:
    distinct = list(dict.fromkeys(a_units + b_units))  # first-seen order; dict/map/join run in C
    if len(distinct) > _MAX_CODES:
        raise _TooDifferent
    chars = list(map(chr, range(_FIRST_CODE, _FIRST_CODE + len(distinct))))
    codes = dict(zip(distinct, chars))
    ea = "".join(map(codes.__getitem__, a_units))
    eb = "".join(map(codes.__getitem__, b_units))
    return ea, eb, dict(zip(chars, distinct))


def _decode(chars: str, units: dict[str, str]) -> str:
    return "".join(map(units.__getitem__, chars))


def _anchors(ea: str, eb: str) -> list[tuple[int, int]]:
    # Tokens found exactly once on each side are safe to line up (the idea of patience diff):
    # they pair paragraphs by what they say, where pairing by position, or by dmp over whole
    # paragraphs, shifts every pair after an added or dropped paragraph onto the wrong partner.
    count_a, count_b = Counter(ea), Counter(eb)
    unique = {c for c, n in count_a.items() if n == 1 and count_b[c] == 1}
    if not unique:
        return []
    where_b = {c: j for j, c in enumerate(eb) if c in unique}
    pairs = [(i, where_b[c]) for i, c in enumerate(ea) if c in unique]
    # Keep the longest run of anchors in the same order on both sides; a moved passage's
    # anchors cross the others and are dropped, so it shows as deleted and inserted.
    tails: list[int] = []  # tails[n]: index in pairs of the end of the best run of length n + 1
    tail_js: list[int] = []  # ... and its position in b, for the binary search
    before = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        n = bisect.bisect_left(tail_js, j)
        if n:
            before[k] = tails[n - 1]
        if n == len(tails):
            tails.append(k)
            tail_js.append(j)
        else:
            tails[n], tail_js[n] = k, j
    run, k = [], tails[-1]
    while k >= 0:
        run.append(pairs[k])
        k = before[k]
    return run[::-1]


def _diff_encoded(
    ea: str, eb: str, dmp: diff_match_patch, deadline: float, depth: int = 0
) -> list[tuple[int, str]]:
    # The depth cap only guards against a pathological text re-anchoring gap after gap until
    # Python's recursion limit; real gaps stop finding anchors after two or three levels.
    big = len(ea) + len(eb) > _DIRECT_LIMIT and depth < _MAX_DEPTH
    anchors = _anchors(ea, eb) if big else []
    if not anchors:
        direct: list[tuple[int, str]] = dmp.diff_main(ea, eb, False, deadline)
        # dmp does not say when it gave up: it returns a coarse but still exact diff. Running
        # out the clock is the only signal, and a coarse diff would mislead the reviewer.
        if time.time() >= deadline:
            raise _TooDifferent
        return direct
    diffs: list[tuple[int, str]] = []
    i0 = j0 = 0
    for i, j in anchors + [(len(ea), len(eb))]:
        # Between two anchors, look again: tokens unique within the gap can anchor it in turn.
        diffs += _diff_encoded(ea[i0:i], eb[j0:j], dmp, deadline, depth + 1)
        diffs += [(EQUAL, ea[i])] if i < len(ea) else []
        i0, j0 = i + 1, j + 1
    return diffs


_CACHE: OrderedDict[tuple[str, str, float], tuple[tuple[int, str], ...]] = OrderedDict()
_CACHE_SIZE = 64
_cache_lock = threading.Lock()


def word_diff(a: str, b: str, timeout: float = 1.0) -> list[tuple[int, str]] | None:
    """Word-level diff as (op, text) pairs: -1 delete, 0 equal, 1 insert; None if not done in timeout seconds.

    A page shows the same pair several ways (side by side, stats); the last few finished diffs are
    kept, so each pair is diffed once. A timed-out diff is not kept: the next call tries again.
    The timeout is part of the key: dmp settles for a coarser diff when its time runs out.
    """
    key = (a, b, timeout)
    with _cache_lock:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return list(hit)
    ops = _word_diff(a, b, timeout)
    if ops is not None:
        with _cache_lock:
            _CACHE[key] = tuple(ops)
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    return ops


def clear_cache() -> None:
    with _cache_lock:
        _CACHE.clear()


def _word_diff(a: str, b: str, timeout: float) -> list[tuple[int, str]] | None:
    # dmp measures its deadline with time.time(); one deadline covers every piece of the diff.
    deadline = time.time() + timeout if timeout > 0 else math.inf
    if a == b:
        return [(EQUAL, a)] if a else []
    dmp = diff_match_patch()
    dmp.Diff_Timeout = max(timeout, 0)  # > 0 also lets dmp take its half-match shortcut
    try:
        ea, eb, tokens = _encode(tokenize(a), tokenize(b))
        diffs = _diff_encoded(ea, eb, dmp, deadline)
    except _TooDifferent:
        return None
    # Both cleanups work on the encoded form, on whole tokens, so they never split a word. The
    # merge joins the pieces from different gaps; the semantic one folds the lone spaces between
    # changed words into one phrase-long edit, which reads better. Neither changes either text.
    dmp.diff_cleanupMerge(diffs)
    dmp.diff_cleanupSemantic(diffs)
    return [(op, _decode(chars, tokens)) for op, chars in diffs]


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _mark(op: int, text: str) -> str:
    tag, style = _MARK_STYLE[op]
    return f'<{tag} style="{style}">{_esc(text)}</{tag}>'


def _note(text: str) -> str:
    return f'<div role="status" style="{_NOTE_STYLE}">{_esc(text)}</div>'


def _grid(rows: list[tuple[str, str]], left_label: str, right_label: str) -> str:
    cells = [
        f'<div style="{_HEAD_STYLE}">{_esc(left_label)}</div>'
        f'<div style="{_HEAD_STYLE};border-left:1px solid #d0d7de">{_esc(right_label)}</div>'
    ]
    for left, right in rows:
        cells.append(f'<div style="{_LEFT_STYLE}">{left}</div><div style="{_RIGHT_STYLE}">{right}</div>')
    return f'<div style="{_BOX_STYLE};{_GRID_STYLE}">{"".join(cells)}</div>'


def _aligned_rows(ops: list[tuple[int, str]]) -> list[tuple[str, str]]:
    # Where both sides are at the start of a line at the same point of the diff (after a shared
    # line break, or after whole lines were added or dropped), a new row starts, so the columns
    # stay level even when one side gained or lost whole paragraphs.
    rows: list[tuple[str, str]] = []
    left: list[str] = []
    right: list[str] = []
    left_at_line_start = right_at_line_start = True

    def end_row() -> None:
        nonlocal left, right
        rows.append(("".join(left), "".join(right)))
        left, right = [], []

    for op, text in ops:
        if op == DELETE:
            left.append(_mark(op, text))
            left_at_line_start = text.endswith(("\n", "\r"))
        elif op == INSERT:
            right.append(_mark(op, text))
            right_at_line_start = text.endswith(("\n", "\r"))
        else:
            # Not after each change: a replaced line keeps its deletion and insertion in one row.
            if (left or right) and left_at_line_start and right_at_line_start:
                end_row()
            start = 0
            for m in _ROW_END.finditer(text):
                piece = _esc(text[start : m.end()])
                left.append(piece)
                right.append(piece)
                end_row()
                start = m.end()
            if start < len(text):
                piece = _esc(text[start:])
                left.append(piece)
                right.append(piece)
            left_at_line_start = right_at_line_start = start == len(text)
    if left or right:
        end_row()
    return rows


def side_by_side_html(
    a: str, b: str, *, left_label: str = "Original", right_label: str = "Candidate", timeout: float = 1.0
) -> str:
    """Two-column HTML: a with deletions marked on the left, b with insertions marked on the right."""
    ops = word_diff(a, b, timeout)
    if ops is None:
        return _note(TOO_DIFFERENT) + _grid([(_esc(a), _esc(b))], left_label, right_label)
    return _grid(_aligned_rows(ops), left_label, right_label)


def marked_pair(a: str, b: str, *, timeout: float = 1.0) -> tuple[str, str, bool]:
    """(a, b) as escaped HTML with a's deleted words and b's added words marked, for two short texts
    shown in separate cells (a self-report field); the flag is False when the diff timed out, and
    then both come back escaped but unmarked."""
    ops = word_diff(a, b, timeout)
    if ops is None:
        return _esc(a), _esc(b), False
    left = "".join(_esc(t) if op == EQUAL else _mark(op, t) for op, t in ops if op != INSERT)
    right = "".join(_esc(t) if op == EQUAL else _mark(op, t) for op, t in ops if op != DELETE)
    return left, right, True


def inline_html(
    a: str, b: str, *, left_label: str = "Original", right_label: str = "Candidate", timeout: float = 1.0
) -> str:
    """One-column HTML with deletions and insertions marked in place."""
    ops = word_diff(a, b, timeout)
    if ops is None:
        # Nothing to interleave: show each text whole, one after the other, under its label.
        blocks = "".join(
            f'<div style="{_HEAD_STYLE}">{_esc(label)}</div><div style="{_LEFT_STYLE}">{_esc(text)}</div>'
            for label, text in ((left_label, a), (right_label, b))
        )
        return _note(TOO_DIFFERENT) + f'<div style="{_BOX_STYLE}">{blocks}</div>'
    # The legend uses spans, not del/ins: it is not part of either transcript.
    chips = (
        f'<span style="{_MARK_STYLE[op][1]};text-decoration:{deco}">{_esc(label)}</span>'
        for op, label, deco in ((DELETE, left_label, "line-through"), (INSERT, right_label, "none"))
    )
    legend = f'<div style="{_HEAD_STYLE}">{" ".join(chips)}</div>'
    body = "".join(_esc(text) if op == EQUAL else _mark(op, text) for op, text in ops)
    return f'<div style="{_BOX_STYLE}">{legend}<div style="{_LEFT_STYLE}">{body}</div></div>'


def _count_words(text: str) -> int:
    return sum(1 for t in tokenize(text) if t[0].isalnum() or t[0] == "_")


def diff_stats(a: str, b: str, *, timeout: float = 1.0) -> dict:
    """Counts of words added, removed and unchanged; a diff that timed out counts as a full rewrite."""
    ops = word_diff(a, b, timeout)
    if ops is None:
        return {"added": _count_words(b), "removed": _count_words(a), "unchanged": 0, "too_different": True}
    counts = {DELETE: 0, EQUAL: 0, INSERT: 0}
    for op, text in ops:
        counts[op] += _count_words(text)
    return {
        "added": counts[INSERT],
        "removed": counts[DELETE],
        "unchanged": counts[EQUAL],
        "too_different": False,
    }
