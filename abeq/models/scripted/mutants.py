"""The scripted model as the mutant writer (`abeq mutate --model-mutants N`): mutant i is the
document with its i-th list item deleted (outside code fences), the behaviour removed being that
item. Deterministic, so a test knows which rule each mutant drops."""

from __future__ import annotations

import re

_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)")


def mutate_rules(blocks: dict) -> dict:
    doc = blocks["document_to_mutate"]
    try:
        count = max(1, int(blocks.get("mutant_count", "1").strip()))
    except ValueError:
        count = 1
    lines = doc.split("\n")
    out: list[dict] = []
    fence = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        m = None if fence else _ITEM.match(line)
        if m and len(out) < count:
            text = "\n".join(lines[:i] + lines[i + 1 :])
            out.append({"text": text, "removed_behaviour": f"no longer: {m.group(1)}"})
    return {"mutants": out or [{"text": doc, "removed_behaviour": "nothing (no list item to drop)"}]}
