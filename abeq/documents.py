"""Loading the documents under test: validation, content hash, sections, size and variant."""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

MAX_DOCUMENT_BYTES = 200_000  # ~50k tokens: far beyond any sane skill or instruction file.
INSTRUCTION_FILE_NAMES = {"claude.md", "agents.md", "gemini.md", "copilot-instructions.md"}
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Document:
    name: str
    text: str

    @property
    def hash(self) -> str:
        return sha256(self.text)


def normalize_newlines(text: str) -> str:
    """One line ending: "\r\n" and a lone "\r" become "\n". Every text abeq reads goes through it
    (files here; the desk calls it on pasted and uploaded text), so a CRLF copy of a file hashes,
    measures and reads exactly like the LF one."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _check_body(text: str, name: str, what: str) -> None:
    """A document that is only YAML front matter has nothing for a model to follow."""
    if text.strip() and not strip_front_matter(text).strip():
        raise InputError(
            f"{what} has nothing after its front matter",
            path=name,
            hint="Add the instructions below the closing '---' (the front matter is only metadata).",
        )


def read_text_file(
    path: str | Path, *, what: str, max_bytes: int = MAX_DOCUMENT_BYTES, document: bool = False
) -> str:
    """Read a user's text file or raise an InputError naming it and what to do.

    Line endings are normalised (normalize_newlines). `document`: the file is a document under
    test, so front matter with nothing after it is refused too."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{what} not found", path=str(p), hint="Check the path and try again.")
    if p.is_dir():
        raise InputError(f"{what} is a directory, not a file", path=str(p))
    size = p.stat().st_size
    if size > max_bytes:
        raise InputError(
            f"{what} is {size:,} bytes; the limit is {max_bytes:,} bytes",
            path=str(p),
            hint="Split the file or pass a smaller one.",
        )
    data = p.read_bytes()
    if b"\x00" in data:
        raise InputError(
            f"{what} looks binary (it contains NUL bytes)", path=str(p), hint="Pass a UTF-8 text file."
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(
            f"{what} is not valid UTF-8 (byte {e.start})", path=str(p), hint="Re-save the file as UTF-8."
        ) from None
    text = normalize_newlines(text)
    if not text.strip():
        raise InputError(f"{what} is empty", path=str(p), hint="Pass a file with content.")
    if document:
        _check_body(text, str(p), what)
    return text


def check_document_text(
    text: str,
    name: str,
    *,
    what: str = "document",
    max_bytes: int = MAX_DOCUMENT_BYTES,
    document: bool = True,
) -> None:
    """The same rules as read_text_file, for text that arrives without a file (upload, paste).
    `document=False` for text that is not a document under test (a transfer set): no front-matter rule.
    It does not change the text: callers keep normalize_newlines(text)."""
    if "\x00" in text:
        raise InputError(
            f"{what} looks binary (it contains NUL bytes)", path=name, hint="Give a UTF-8 text file."
        )
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise InputError(
            f"{what} is {size:,} bytes; the limit is {max_bytes:,} bytes",
            path=name,
            hint="Split the file or give a smaller one.",
        )
    if not text.strip():
        raise InputError(f"{what} is empty", path=name, hint="Give a file with content.")
    if document:
        _check_body(text, name, what)


def load_document(path: str | Path, what: str = "document") -> Document:
    p = Path(path)
    return Document(name=p.name, text=read_text_file(p, what=what, document=True))


def detect_variant(name: str) -> str:
    """Always-loaded agent instruction files get the instruction-file runner; anything else is a skill."""
    n = name.replace("\\", "/").lower()
    base = n.rsplit("/", 1)[-1]
    if base in INSTRUCTION_FILE_NAMES or "/.cursor/rules/" in f"/{n}" or n.endswith(".mdc"):
        return "instruction-file"
    return "skill"


PREAMBLE = "Preamble"  # the text before the first heading, when there is any: it often holds rules


def section_texts(text: str) -> list[tuple[str, str]]:
    """(title, body) per section, in document order.

    Markdown headings outside code fences; text before the first heading is the section
    "Preamble". A title used more than once ("Examples" under two parents) is named with its
    parent ("Sorting › Examples"), so each occurrence is a section of its own. A document
    without headings is split into paragraphs, each named by its first words: coverage then
    counts paragraphs.
    """
    heads: list[tuple[int, str, list[str]]] = []  # (level, title, body lines); level 0: the preamble
    in_fence = False
    for line in strip_front_matter(text).split("\n"):  # not splitlines(): U+2028, \x0c... are not line ends
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m:
            heads.append((len(m.group(1)), m.group(2).strip(), []))
        elif heads:
            heads[-1][2].append(line)
        elif line.strip():
            heads.append((0, PREAMBLE, [line]))
    if not any(level for level, _, _ in heads):
        paras = [p.strip() for p in re.split(r"\n\s*\n", strip_front_matter(text)) if p.strip()]
        return [(paragraph_name(p), p) for p in paras]
    counts: dict[str, int] = {}
    for _, title, _ in heads:
        counts[title] = counts.get(title, 0) + 1
    out: list[tuple[str, str]] = []
    taken: set[str] = set()
    for i, (level, title, body) in enumerate(heads):
        name = title
        if counts[title] > 1:
            parent = next((t for lv, t, _ in reversed(heads[:i]) if 0 < lv < level), "")
            name = f"{parent} › {title}" if parent else title
        base, n = name, 2
        while name in taken:  # the same title twice under one parent
            name, n = f"{base} ({n})", n + 1
        taken.add(name)
        out.append((name, "\n".join(body).strip()))
    return out


def sections(text: str) -> list[str]:
    """Section titles in document order (see section_texts)."""
    return [t for t, _ in section_texts(text)]


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
            or (block and bullet.match(line))
        ):
            if block:
                break
            continue
        block.append(bullet.sub("", line).strip())
    sentence = re.split(r"(?<=[.!?])\s", " ".join(block), maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def paragraph_name(p: str) -> str:
    words = p.split()
    return "¶ " + " ".join(words[:6]) + (" …" if len(words) > 6 else "")


def strip_front_matter(text: str) -> str:
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            return text[end + 4 :]
    return text


@dataclass(frozen=True)
class SizeStats:
    characters: int
    tokens: int
    lines: int
    tokens_exact: bool  # False: an estimate (no tokenizer available offline)


@functools.lru_cache(maxsize=1)
def _cl100k():
    """tiktoken's cl100k_base from the copy litellm ships (offline), without importing litellm;
    None when it cannot be loaded here (asked once per process)."""
    try:
        from .models.bootstrap import litellm_file

        bundled = litellm_file("litellm_core_utils", "tokenizers")
        if bundled is not None and bundled.is_dir() and not os.environ.get("TIKTOKEN_CACHE_DIR"):
            os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)  # what litellm itself sets
        import tiktoken

        return tiktoken.get_encoding("cl100k_base")
    except Exception:  # noqa: BLE001 — no tokenizer offline: the figure becomes an estimate
        return None


def estimate_tokens(text: str) -> tuple[int, bool]:
    """Tokens by cl100k_base (the same figure in every command), or ~4 characters a token when
    the tokenizer cannot be loaded offline (then marked as an estimate)."""
    enc = _cl100k()
    if enc is not None:
        return len(enc.encode(text)), True
    return max(1, round(len(text) / 4)), False


def size_stats(text: str) -> SizeStats:
    tokens, exact = estimate_tokens(text)
    return SizeStats(characters=len(text), tokens=tokens, lines=len(text.splitlines()), tokens_exact=exact)


def compression_ratio(original: str, candidate: str) -> float:
    """Candidate size over original size in characters (0.6 = 40% shorter)."""
    return round(len(candidate) / max(1, len(original)), 4)
