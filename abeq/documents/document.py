"""Loading the documents under test: validation, content hash, sections, size and variant."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ..vocab import Variant
from .rule_files import is_rule_file, rule_name, scope_note
from .sections import strip_front_matter  # where sections are found: abeq.documents.sections
from .skill_folder import is_skill_file, left_out, skill_files

if TYPE_CHECKING:  # imported when first needed (it is slow, and found through litellm's copy)
    import tiktoken

MAX_DOCUMENT_BYTES = 200_000  # ~50k tokens: far beyond any sane skill or instruction file.
INSTRUCTION_FILE_NAMES = {"claude.md", "agents.md", "gemini.md", "copilot-instructions.md", "claude.local.md"}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_hash(text: str, files: dict[str, str] | None = None) -> str:
    """A document's identity: its text, and a skill's other files (paths and content) when it has any
    (a document without them hashes as it always did)."""
    if not files:
        return sha256(text)
    return sha256(
        text + "\n\x00" + json.dumps(files, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    )


@dataclass(frozen=True)
class Document:
    """A document under test. For an instruction file that imports others (`@AGENTS.md`), `text`
    is the expanded text the runner gets, and its hash covers the imported files too."""

    name: str
    text: str
    read: tuple[str, ...] = ()  # the files read to make `text`, when there was more than one
    notes: tuple[str, ...] = ()  # what was not read and why (imports, a skill's evals/); a rule's scope
    files: tuple[tuple[str, str], ...] = ()  # a skill's other files (path in its folder, text): skill_folder
    # where it was read when that is not a file here: "git:COMMIT:PATH" (git_source.py); not hashed
    source: str = ""

    @functools.cached_property  # asked on every runner call: hashed once (the instance is frozen)
    def hash(self) -> str:
        return document_hash(self.text, self.folder)

    @property
    def folder(self) -> dict[str, str]:
        """A skill's other files by path in its folder ({} for a single file)."""
        return dict(self.files)


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
    from ..files import read_limited

    p = Path(path)
    # the size is counted while reading: a FIFO, /dev/zero or a file still growing has no honest stat
    data = read_limited(p, max_bytes, what=what, hint="Split the file or pass a smaller one.")
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


def load_document(
    path: str | Path, what: str = "document", *, follow_imports: bool | None = None
) -> Document:
    """Read a document under test. `follow_imports`: expand its `@path` imports (doc_imports.py);
    None follows them for agent instruction files (CLAUDE.md, AGENTS.md, …), by the file's name.
    `git:REV:PATH` reads it at a revision, with everything that travels with it (git_source.py)."""
    from .git_source import checkout, is_git

    if is_git(path):
        with checkout(str(path), "document", MAX_DOCUMENT_BYTES) as co:
            doc = load_document(co.local, what, follow_imports=follow_imports)
        return replace(doc, source=co.source.name)
    p = Path(path)
    if p.is_dir():  # a skill given as its folder (or a Cursor rule as its RULE.md folder)
        found = [c for c in sorted(p.iterdir()) if is_skill_file(c) or c.name.lower() == "rule.md"]
        p = next((c for c in found if is_skill_file(c)), found[0] if found else p / "SKILL.md")
    text = read_text_file(p, what=what, document=True)
    name = rule_name(p) or p.name  # a rule file keeps its place under its tool's folder
    if follow_imports is None:
        follow_imports = detect_variant(name) == "instruction-file"
    if is_skill_file(p) and not follow_imports:  # a skill is a folder: its files travel with it
        files = tuple(sorted(skill_files(p, text).items()))
        return Document(name=p.name, text=text, files=files, notes=tuple(left_out(p)))
    scope = scope_note(name, text) if is_rule_file(name) else None
    if not follow_imports or "@" not in text:
        return Document(name=name, text=text, notes=(scope,) if scope else ())
    from .doc_imports import expand

    exp = expand(p, text, lambda f: read_text_file(f, what=f"{what}'s import", document=False))
    if len(exp.text.encode("utf-8")) > MAX_DOCUMENT_BYTES:
        raise InputError(
            f"{what} with its imports ({', '.join(exp.read)}) is over {MAX_DOCUMENT_BYTES:,} bytes",
            path=str(p),
            hint="Import fewer or smaller files.",
        )
    return Document(
        name=name,
        text=exp.text,
        read=tuple(exp.read) if len(exp.read) > 1 else (),
        notes=tuple(exp.notes) + ((scope,) if scope else ()),
    )


def detect_variant(name: str) -> Variant:
    """Always-loaded agent instruction files (CLAUDE.md, AGENTS.md, … and the rule files of
    abeq.documents.rule_files) get the instruction-file runner; anything else is a skill."""
    n = name.replace("\\", "/").lower()
    base = n.rsplit("/", 1)[-1]
    if base in INSTRUCTION_FILE_NAMES or is_rule_file(n):
        return "instruction-file"
    return "skill"


@dataclass(frozen=True)
class SizeStats:
    characters: int
    tokens: int
    lines: int
    tokens_exact: bool  # False: an estimate (no tokenizer available offline)


@functools.lru_cache(maxsize=1)
def _cl100k() -> tiktoken.Encoding | None:
    """tiktoken's cl100k_base from the copy litellm ships (offline), without importing litellm;
    None when it cannot be loaded here (asked once per process)."""
    try:
        import importlib.util

        # litellm located, not imported; found here rather than through abeq.models, which sits
        # above documents in the layer table (tests/test_layout.py)
        found = importlib.util.find_spec("litellm")
        litellm_dir = Path(found.origin).parent if found and found.origin else None
        bundled = litellm_dir / "litellm_core_utils" / "tokenizers" if litellm_dir else None
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
