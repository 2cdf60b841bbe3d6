"""A provider's prompt cache, simulated for the fake servers: what a request would read from it
and write to it, so abeq's accounting is tested against the usage each kind of provider reports.

Tokens are counted as the loopback server counts them (about 4 characters a token).

- `automatic` (OpenAI and OpenAI-compatible servers): every prompt's prefix is cached by itself;
  a request reads the longest prefix an earlier request had, in `block`-token steps from
  `min_tokens` on; nothing is billed for writing.
- `marked` (Anthropic): only the prefix up to a block marked `cache_control` is cached. A request
  reads the longest marked prefix already cached and writes the rest of the prefix up to its last
  mark; a prefix shorter than `min_tokens` is not cached at all.
"""

from __future__ import annotations

import hashlib
import threading


def tokens(text: str) -> int:
    return len(text) // 4


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class PromptCache:
    def __init__(self, min_tokens: int = 1024, block: int = 128):
        self.min_tokens, self.block = min_tokens, block
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()

    def automatic(self, prompt: str) -> int:
        """Cached tokens of this prompt (OpenAI's `prompt_tokens_details.cached_tokens`)."""
        n = tokens(prompt)
        bounds = list(range(self.min_tokens, n + 1, self.block))
        with self._lock:
            hit = max((b for b in bounds if _digest(prompt[: b * 4]) in self._seen), default=0)
            self._seen.update(_digest(prompt[: b * 4]) for b in bounds)
        return hit

    def marked(self, parts: list[tuple[str, bool]]) -> tuple[int, int, int]:
        """(read, written, uncached) tokens of a request made of text parts in order, each with
        whether it carries a cache mark (Anthropic's cache_read_input_tokens,
        cache_creation_input_tokens and input_tokens)."""
        text, marks = "", []
        for part, marked in parts:
            text += part
            if marked:
                marks.append(len(text))
        total = tokens(text)
        marks = [m for m in marks if tokens(text[:m]) >= self.min_tokens]
        if not marks:
            return 0, 0, total
        with self._lock:
            read = max((tokens(text[:m]) for m in marks if _digest(text[:m]) in self._seen), default=0)
            self._seen.update(_digest(text[:m]) for m in marks)
        end = tokens(text[: marks[-1]])
        return read, end - read, total - end
