"""Untrusted text made inert where abeq writes it: a spreadsheet cell, Markdown, a terminal.

Case ids, inputs, reasons, reviewer names and judge text come from files other people write and
from model output; each place that shows them goes through one of these, never its own variant.
"""

from __future__ import annotations

import re

# OWASP (CSV injection): a cell starting with one of these is read as a formula by spreadsheets
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A CSV cell a spreadsheet shows as text: a leading formula character gets a `'` before it.

    A cell that already starts with quotes before a formula character gets one more, so
    `csv_uncell` gives back exactly what was written (the set importer reads its own exports)."""
    if not isinstance(value, str):
        return value
    return "'" + value if value.lstrip("'").startswith(FORMULA_START) else value


def csv_report_cell(value):
    """A cell of a report's CSV: csv_cell, its control characters shown as escapes (\\x1b) like on
    the terminal (a CSV is read with cat too). A set's CSV export keeps them: it is read back."""
    return csv_cell(term_safe(value)) if isinstance(value, str) else value


def csv_uncell(text: str) -> str:
    """The value `csv_cell` neutralised: one leading `'` taken off a cell it would have prefixed."""
    if text.startswith("'") and text.lstrip("'").startswith(FORMULA_START):
        return text[1:]
    return text


# the punctuation that makes Markdown anywhere in a line (CommonMark lets a backslash make any ASCII
# punctuation literal, but escaping all of it made "(… 15:50)" read "\(… 15\:50\)"): emphasis, code,
# links and images (a "(" is inert once "[" and "]" are), HTML ("<", "<!"), table cells, strikethrough,
# maths ($); a ":" only where Streamlit reads a directive or a shortcode (":red[", ":material/x:",
# ":smile:"), an "&" only where it starts an entity ("&lt;")
_MD_INLINE = re.compile(r"([\\`*_\[\]<|~$])|:(?=[A-Za-z]|[\w+/-]+:)|&(?=#?\w+;)|!(?=\[)|(?<=<)!")
# and what makes a block only at the start of a line: a list item, a heading, a quote, a setext
# underline, "1." and "1)"
_MD_LINE_START = re.compile(r"(?m)^([ \t]*)([-+=#>]|\d+(?=[.)]))")
# GFM autolinks are found in the text *after* escapes are read (remark-gfm), so a backslash does not
# stop them; a word joiner (invisible) after the scheme, "www" or an e-mail's "@" does
_AUTOLINK = re.compile(r"(?i)(https?:|ftp:|mailto:|xmpp:|www|(?<=[\w.+-])@)")  # the @ of an e-mail
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
WORD_JOINER = "\u2060"


def md_escape(text, one_line: bool = False) -> str:
    """Text for a Markdown renderer that shows as the literal text: no HTML, link, image, heading,
    emphasis, table cell, autolink or Streamlit directive can come out of it. `one_line` collapses
    line breaks into spaces (a table cell, a list item, a heading)."""
    s = str(text if text is not None else "")
    if one_line:
        s = _LINE_BREAKS.sub(" ", s)
    s = term_safe(s)  # a report is read in a terminal too (cat, less -R): no raw ESC reaches it
    s = _AUTOLINK.sub(lambda m: m.group(1) + WORD_JOINER, s)
    s = _MD_INLINE.sub(lambda m: "\\" + m.group(0), s)
    return _MD_LINE_START.sub(_line_start, s)


# bidirectional controls (embeddings, overrides, isolates, marks): U+202E makes "gpj.exe" read
# "exe.jpg" ("Trojan Source"); shown as their code point instead, so a reader sees they are there
_BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# what GitHub turns into a notification or a cross-reference once the Markdown is rendered (its
# filters read the rendered text, so a backslash or an entity does not stop them; a word joiner
# does): @user, @org/team, #1, owner/repo#2, GH-3
_GITHUB_REF = re.compile(r"@(?!\u2060)|#(?=\d)|(?i:\bgh-)(?=\d)")


def github_escape(text, one_line: bool = True) -> str:
    """Text for a GitHub comment that shows as the literal text: md_escape, and no mention, issue
    reference or bidirectional control comes out of it. The gate's comment passes every value it
    did not write itself (paths, case ids and text, the judge's words, names) through this one."""
    s = _BIDI.sub(lambda m: f"<U+{ord(m.group()):04X}>", str(text if text is not None else ""))
    s = md_escape(s, one_line)
    return _GITHUB_REF.sub(lambda m: m.group(0) + WORD_JOINER, s)


def _line_start(m: re.Match) -> str:
    lead, mark = m.groups()
    return lead + (mark + "\\" if mark[0].isdigit() else "\\" + mark)  # "1\." (or "1\)") and "\-"


# C0 and C1 controls but tab, newline and CR-LF, and DEL: ESC (and C1's CSI) start the sequences that
# recolour, move the cursor, set the window title or write to the clipboard (OSC 52); a lone CR lets
# a line overwrite what came before it on screen
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")


def term_safe(text) -> str:
    """Text for a terminal: control characters shown as visible escapes (\\x1b), never sent raw."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


class TermSafe:
    """A text stream that passes everything written to it through `term_safe` (the CLI wraps the
    terminal in it, so no message can forget to)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(term_safe(text))

    def __getattr__(self, name: str):
        return getattr(self.stream, name)
