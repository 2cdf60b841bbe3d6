"""Issue 50: the fourth round of real files (tests/fixtures/real, see SOURCES.md). Each class is
read as the tool that wrote the file reads it, or refused in one line that names the file's kind
and the command to use."""

from __future__ import annotations

from pathlib import Path

from abeq import sets
from abeq.sets.promptfoo_asserts import from_string

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
PF = REAL / "promptfoo"


# ---------------------------------------------------------------- 3. promptfoo trims `type: value`
def test_csv_type_colon_value_is_trimmed_as_promptfoo_trims_it():
    # the real file writes "contains: algorithm"; promptfoo checks for "algorithm", so a reply
    # that ends a sentence with the word (or holds it alone) passes
    imp = sets.read_source("promptfoo", PF / "config-csv-metadata" / "promptfooconfig.yaml")
    assert [c["assertions"][0]["value"] for c in imp.cases] == ["algorithm", "quantum", "temperature"]


def test_the_json_assertions_keep_their_value_as_written():
    # promptfoo's buildAssertionFromRegexMatch returns contains-json/is-json values untrimmed
    assert from_string("is-json: {}")["value"] == " {}"
    assert from_string("icontains:  05-08-1993 ")["value"] == "05-08-1993"
    assert from_string("contains-any: a , b")["value"] == ["a", "b"]
