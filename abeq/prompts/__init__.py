"""Prompt files (the `*.md` beside this module): each has a name and a version in its front matter;
results record both.

Untrusted text (documents, case inputs, transcripts) only ever goes inside <data> blocks,
and a closing tag inside that text is defused so it cannot end its block early.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def prompts_dir() -> Path:
    """The folder of prompt files: this package's own, in a checkout and in an installed wheel alike."""
    return _HERE


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    text: str

    @functools.cached_property  # asked on every call: hashed once (the instance is frozen)
    def ref(self) -> str:
        """name@version plus a short content hash, so an edit without a version bump still shows."""
        return f"{self.name}@{self.version}#{hashlib.sha256(self.text.encode()).hexdigest()[:8]}"


@functools.cache
def load_prompt(name: str) -> Prompt:
    raw = (prompts_dir() / f"{name}.md").read_text(encoding="utf-8")
    m = re.match(r"^---\n(.*?)\n---\n", raw, re.S)
    if not m:
        raise ValueError(f"prompt {name} has no front matter")
    meta = dict(line.split(":", 1) for line in m.group(1).splitlines() if ":" in line)
    meta = {k.strip(): v.strip() for k, v in meta.items()}
    return Prompt(name=meta["name"], version=int(meta["version"]), text=raw[m.end() :].strip())


def data_block(name: str, text: str) -> str:
    # no "</" in it, nothing to defuse: the look for one is ~20x cheaper than the pattern over a long
    # document, and every runner call puts the document in a block
    safe = re.sub(r"</(\s*)data", r"<\\/\1data", text, flags=re.I) if "</" in text else text
    return f'<data name="{name}">\n{safe}\n</data>'


def read_data_blocks(text: str) -> dict[str, str]:
    """Inverse of data_block, for test doubles that answer prompts."""
    out = {}
    for m in re.finditer(r'<data name="([^"]+)">\n(.*?)\n</data>', text, re.S):
        out[m.group(1)] = m.group(2).replace("<\\/data", "</data")
    return out


def messages(prompt: Prompt, blocks: list[tuple[str, str]]) -> list[dict]:
    user = "\n\n".join(data_block(n, t) for n, t in blocks)
    return [{"role": "system", "content": prompt.text}, {"role": "user", "content": user}]


def as_json(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=True)
