"""The sections of a document: which headings hold text that directs behaviour, and what a case
may call them.

A section is a heading with text of its own (its body up to the next heading of any level, minus
blank lines, HTML comments, thematic breaks and `@path` import lines). A heading with none — a
parent whose text is all in its subsections ("# Process" directly over "## Workflow"), or a table
of contents — directs nothing by itself, so it is not a section: its subsections are. Text before
the first heading is the section "Preamble". A document without headings is split into paragraphs.

Names are matched tolerantly (`SectionIndex`): case, emoji, backticks and emphasis, numbering
("1.1 ", "### 0. ") and the separators `>`, `›`, `»`, `→` between a parent and a child do not
block a match, and an unknown name is answered with the closest headings.
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from dataclasses import dataclass, field

PREAMBLE = "Preamble"  # the text before the first heading, when there is any: it often holds rules
SEP = " › "  # between a parent's title and a child's, in a section's name

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")  # under a paragraph: "Title\n=====" is a heading
_NOT_PARAGRAPH = re.compile(r"^(?: {4,}|\t| {0,3}(?:[-*+>|]|\d+[.)])(?:\s|$))")
_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_IMPORT_LINE = re.compile(r"^\s*(?:@\S+\s*)+$")
_ANCHOR_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[[^\]]+\]\(#[^)]*\)\s*$")
_LINK_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[[^\]]+\]\([^)]*\)[^\w]*$")
_CONTENTS_TITLES = {"contents", "table of contents", "toc", "index", "on this page"}


def strip_front_matter(text: str) -> str:
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            return text[end + 4 :]
    return text


@dataclass(frozen=True)
class Heading:
    """One heading (level 0: the preamble) with its own text and its place in the outline."""

    level: int
    title: str
    name: str  # unique: the title, or "Parent › Title" when the title repeats
    body: str  # its own text, up to the next heading of any level
    parents: tuple[str, ...]  # the titles above it, outermost first
    position: int  # in document order
    kind: str  # "section" (text of its own), "empty" (none), or "contents" (a table of contents)
    # its lines in the text after any front matter: [line, end) holds the heading and its own text
    # (up to the next heading); -1 for a paragraph of a document without headings
    line: int = -1
    end: int = -1

    @property
    def is_section(self) -> bool:
        return self.kind == "section"


@dataclass
class Outline:
    """Every heading of a document, and which of them are sections."""

    headings: list[Heading]
    by_paragraphs: bool = False  # no headings: each paragraph is a section

    @property
    def sections(self) -> list[Heading]:
        return [h for h in self.headings if h.is_section]

    def how(self) -> str:
        """How the sections were found, in a sentence or two a user can check."""
        secs = self.sections
        if self.by_paragraphs:
            return (
                f"{len(secs)} sections: the document has no Markdown headings, so each paragraph is a "
                "section, named by its first words"
            )
        real = [h for h in self.headings if h.level]
        out = f"{len(secs)} sections from {len(real)} Markdown headings (outside code blocks and comments)"
        if any(h.level == 0 for h in secs):
            out += f", plus the text before the first heading ('{PREAMBLE}')"
        empty = [h.name for h in self.headings if h.kind == "empty"]
        toc = [h.name for h in self.headings if h.kind == "contents"]
        if empty:
            out += (
                f"; {len(empty)} heading(s) with no text of their own are not sections — what they "
                f"hold is in their subsections: {', '.join(empty)}"
            )
        if toc:
            out += f"; table(s) of contents, not counted: {', '.join(toc)}"
        return out


def _own_text(lines: list[str]) -> list[str]:
    """The lines of a body that say something: not blank, a comment, a rule, or an import line."""
    return [
        ln
        for ln in lines
        if ln.strip() and not _BREAK.match(ln) and not _IMPORT_LINE.match(ln) and not _is_comment(ln)
    ]


def _is_comment(line: str) -> bool:
    return not re.sub(r"<!--.*?-->", "", line).strip()


def _kind(title: str, lines: list[str]) -> str:
    said = _own_text(lines)
    if not said:
        return "empty"
    if all(_ANCHOR_ITEM.match(ln) for ln in said):
        return "contents"
    if normalize(title) in _CONTENTS_TITLES and all(_LINK_ITEM.match(ln) for ln in said):
        return "contents"
    return "section"


def _scan(text: str) -> list[tuple[int, str, list[str], int]]:
    """(level, title, body lines, first line) in order; level 0 is the preamble. Headings inside
    fenced code or an HTML comment are text, not headings."""
    heads: list[tuple[int, str, list[str], int]] = []
    fence: str | None = None
    in_comment = False
    # not splitlines(): U+2028, \x0c... are not line ends
    for n, line in enumerate(strip_front_matter(text).split("\n")):
        m = None
        if fence is not None:
            if re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
                fence = None
        elif in_comment:
            in_comment = "-->" not in line
        elif f := _FENCE.match(line):
            fence = f.group(1)
        else:
            rest = re.sub(r"<!--.*?-->", "", line)
            if "<!--" in rest:
                in_comment = True
            else:
                m = _HEADING.match(line)
                level = 1 if (u := _SETEXT.match(line)) and u.group(1)[0] == "=" else 2
                if not m and u and _setext(heads, level, n):
                    continue
        if m:
            heads.append((len(m.group(1)), m.group(2).strip(), [], n))
        elif heads:
            heads[-1][2].append(line)
        elif line.strip():
            heads.append((0, PREAMBLE, [line], n))
    return heads


def _setext(heads: list[tuple[int, str, list[str], int]], level: int, n: int) -> bool:
    """A setext underline: the paragraph just above it (the end of the open block's body) becomes a
    heading of `level`. False when there is no such paragraph (a `---` after a blank line, a list
    item or a quote is a rule or text, as Markdown renders it)."""
    if not heads:
        return False
    body = heads[-1][2]
    start = len(body)
    while start and body[start - 1].strip():
        start -= 1
    para = body[start:]
    if not para or any(_NOT_PARAGRAPH.match(ln) or _is_comment(ln) for ln in para):
        return False
    del body[start:]
    if heads[-1][0] == 0 and not _own_text(body):  # the preamble was only this title
        heads.pop()
    # the body's lines are consecutive lines of the text, so the title's first line is len(para) up
    heads.append((level, " ".join(ln.strip() for ln in para), [], n - len(para)))
    return True


def outline(text: str) -> Outline:
    """Every heading of `text` with its own text, parents, unique name and kind (see the module doc)."""
    return _outline(text)


@functools.lru_cache(maxsize=16)  # coverage, drafting and the desk ask for the same document repeatedly
def _outline(text: str) -> Outline:
    heads = _scan(text)
    if not any(h[0] for h in heads):
        paras = [p.strip() for p in re.split(r"\n\s*\n", strip_front_matter(text)) if p.strip()]
        paras = [p for p in paras if _own_text(p.split("\n"))]
        named = [(paragraph_name(p), p) for p in paras]
        return Outline([Heading(0, n, n, p, (), i, "section") for i, (n, p) in enumerate(named)], True)
    counts: dict[str, int] = {}
    for h in heads:
        counts[h[1]] = counts.get(h[1], 0) + 1
    out: list[Heading] = []
    taken: set[str] = set()
    stack: list[tuple[int, str]] = []  # the open headings above this one: (level, title)
    ends = [h[3] for h in heads[1:]] + [len(strip_front_matter(text).split("\n"))]
    for i, (level, title, body, start) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        parents = tuple(t for lv, t in stack if lv > 0)
        name = title
        if counts[title] > 1 and parents:
            name = f"{parents[-1]}{SEP}{title}"
        base, n = name, 2
        while name in taken:  # the same title twice under one parent
            name, n = f"{base} ({n})", n + 1
        taken.add(name)
        kind = _kind(title, body) if level else ("section" if _own_text(body) else "empty")
        out.append(Heading(level, title, name, "\n".join(body).strip(), parents, i, kind, start, ends[i]))
        if level:
            stack.append((level, title))
    return Outline([h for h in out if h.level or h.kind == "section"])


def section_texts(text: str) -> list[tuple[str, str]]:
    """(name, body) per section, in document order (see the module doc)."""
    return [(h.name, h.body) for h in outline(text).sections]


def sections(text: str) -> list[str]:
    """Section names in document order (see the module doc)."""
    return [h.name for h in outline(text).sections]


def paragraph_name(p: str) -> str:
    words = p.split()
    return "¶ " + " ".join(words[:6]) + (" …" if len(words) > 6 else "")


def first_rule(body: str, limit: int = 90) -> str:
    """What a reader would call a section's behaviour: its first bullet (bullets are where rules
    usually live), else the first sentence of its first paragraph; cut to `limit` characters."""
    bullet = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
    lines = body.split("\n")
    start = next((i for i, ln in enumerate(lines) if bullet.match(ln)), None)
    block: list[str] = []
    in_fence = False
    for line in lines[start or 0 :]:
        stripped = line.strip()
        if _FENCE.match(line):
            in_fence = not in_fence
        if (
            in_fence
            or _FENCE.match(line)
            or stripped.startswith("|")
            or not stripped
            or _is_comment(line)
            or (block and bullet.match(line))
        ):
            if block:
                break
            continue
        block.append(bullet.sub("", line).strip())
    sentence = re.split(r"(?<=[.!?])\s", " ".join(block), maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


# ---------------------------------------------------------------- names, matched tolerantly
_SEPARATORS = re.compile(r"\s*(?:›|»|→|>|::)\s*")
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*[.):]?|[ivx]+[.)])\s+", re.IGNORECASE)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def normalize(title: str, numbers: bool = True) -> str:
    """A title as a matching key: case-folded, without emoji, markup or (numbers=False) numbering."""
    s = _LINK.sub(r"\1", unicodedata.normalize("NFKC", title)).lstrip(" #")  # "## Intro" is "Intro"
    # markup goes first: a backtick is a modifier symbol (Sk) and would become a space below
    s = re.sub(r"[`*_~]", "", s)
    s = "".join(
        " " if unicodedata.category(ch) in ("So", "Sk", "Cs", "Co", "Cf", "Me") else ch
        for ch in s.replace("\ufe0f", "")
    )
    s = s.casefold()
    s = " ".join(s.split()).strip(" :.-–—")
    if not numbers:
        s = _NUMBERING.sub("", s).strip(" :.-–—")
    return s


def _parts(name: str, numbers: bool) -> tuple[str, ...]:
    return tuple(p for p in (normalize(x, numbers) for x in _SEPARATORS.split(name)) if p)


@dataclass
class Match:
    """What a name given in a case refers to."""

    status: str  # "section", "heading" (a heading that is not a section), "ambiguous", "unknown"
    heading: Heading | None = None
    candidates: list[str] = field(default_factory=list)  # ambiguous: the sections meant; unknown: closest

    @property
    def section(self) -> Heading | None:
        """The section the name refers to; None for any other status."""
        return self.heading if self.status == "section" else None


class SectionIndex:
    """Resolves the section names cases give (see `normalize`) to the document's headings."""

    def __init__(self, doc: Outline | str):
        self.outline = doc if isinstance(doc, Outline) else outline(doc)
        self._cache: dict[str, Match] = {}

    def resolve(self, given: str) -> Match:
        if given not in self._cache:
            self._cache[given] = self._resolve(given)
        return self._cache[given]

    def _resolve(self, given: str) -> Match:
        heads = self.outline.headings
        exact = [h for h in heads if h.name == given or h.title == given]
        if len(exact) == 1:
            return self._found(exact[0])
        for numbers in (True, False):
            want = _parts(given, numbers)
            if not want:
                break
            hits = [h for h in heads if _parts(h.name, numbers) == want]
            if not hits:  # the title alone, or a trailing part of its path of parents
                hits = [h for h in heads if _path(h, numbers)[-len(want) :] == want]
            if len(hits) == 1:
                return self._found(hits[0])
            secs = [h for h in hits if h.is_section]
            if len(secs) == 1:
                return self._found(secs[0])
            if len(hits) > 1:
                return Match("ambiguous", None, [h.name for h in hits])
        # a heading's label: "Phase 2" for "Phase 2: Implementation", "1.1" for "1.1 Understand …"
        label = normalize(given).rstrip(".")
        hits = [h for h in heads if label and label in _labels(h.title)]
        if len(hits) == 1:
            return self._found(hits[0])
        return Match("unknown", None, self.closest(given))

    @staticmethod
    def _found(h: Heading) -> Match:
        return Match("section" if h.is_section else "heading", h)

    def closest(self, given: str, n: int = 3) -> list[str]:
        """The headings most like `given`: half spelling, half how many of its words they contain."""
        want = normalize(given, numbers=False)
        words = set(want.split())
        scored = []
        for h in self.outline.headings:
            key = normalize(h.name, numbers=False)
            ratio = difflib.SequenceMatcher(None, want, key).ratio()
            contained = len(words & set(key.split())) / max(1, len(words))
            scored.append((ratio / 2 + contained / 2, h.position, h.name))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [name for score, _, name in scored[:n] if score > 0.2]

    def subsections(self, h: Heading) -> list[str]:
        """The sections under a heading (what a case naming an empty parent should name instead)."""
        out = []
        for s in self.outline.headings:
            if s.position <= h.position:
                continue
            if 0 < s.level <= h.level:
                break  # the next heading at its level or above ends it
            if s.is_section:
                out.append(s.name)
        return out


def _labels(title: str) -> set[str]:
    """Short names a heading is called by: the part before a colon, its leading number."""
    t = normalize(title)
    out = set()
    if ":" in t:
        out.add(t.split(":", 1)[0].strip())
    if m := re.match(r"^(\d+(?:\.\d+)*)[.):]?\s", t):
        out.add(m.group(1))
    return out


def _path(h: Heading, numbers: bool) -> tuple[str, ...]:
    return tuple(p for p in (normalize(x, numbers) for x in (*h.parents, h.title)) if p)
