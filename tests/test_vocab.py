"""The verdict names are spelled once, in abeq/vocab.py: every other module (SQL included, which
takes them as parameters) uses its constants. The prompts keep their own words."""

import io
import re
import tokenize

from conftest import ROOT

from abeq.vocab import DIVERGED, EQUIVALENT, REGRESSED, VERDICTS

# a verdict spelled in a string: a hyphenated name anywhere (docstrings too), "equivalent" only as a
# quoted value (a Python literal, or '…' in SQL); prose may still say a run is equivalent
SPELLED = re.compile(
    rf"(?<![\w-])({re.escape(REGRESSED)}|{re.escape(DIVERGED)})(?![\w-])|[\"']{re.escape(EQUIVALENT)}[\"']"
)


def spelled_verdicts(root) -> list[str]:
    hits = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "vocab.py" and path.parent == root:
            continue
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
        for tok in tokens:
            found = SPELLED.search(tok.string) if tok.type == tokenize.STRING else None
            if found:
                hits.append(f"{path.relative_to(root.parent)}:{tok.start[0]}: {found[0]}")
    return hits


def test_the_pattern_finds_each_verdict_spelled_out():
    assert len(VERDICTS) == 3
    for v in VERDICTS:
        assert SPELLED.search(repr(v)) and SPELLED.search(f"where verdict = '{v}'")
    assert not SPELLED.search("the runs are equivalent")


def test_the_verdict_constants_are_the_verdict_type_s_names():
    assert set(VERDICTS) == {EQUIVALENT, REGRESSED, DIVERGED}


def test_no_module_outside_vocab_spells_a_verdict():
    assert spelled_verdicts(ROOT / "abeq") == []
