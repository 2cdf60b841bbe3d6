"""Checks in code, with promptfoo's semantics, and how a case's checks are classified."""

import pytest

from abeq.execution.checks.checks import case_checks, problems, run_code
from abeq.schemas import Case


def check(type_, value=None, **kw):
    case = Case(id="c", type="happy", input="x", assertions=[{"type": type_, "value": value, **kw}])
    return case_checks(case)[0]


@pytest.mark.parametrize(
    "type_, value, text, passed",
    [
        ("contains", "[ticket]", "see [ticket] 12", True),
        ("contains", "Ticket", "see ticket", False),  # case-sensitive
        ("icontains", "TICKET", "see ticket", True),
        ("not-contains", "DATA-882", "Added --since (#471)", True),
        ("not-contains", "DATA-882", "Added --since [DATA-882]", False),
        ("contains", 482, "(#482)", True),  # a number is compared as its text
        ("equals", "done", "done\n", False),  # no trimming
        ("equals", "done", "done", True),
        ("equals", {"a": 1}, '{"a": 1.0}', True),
        ("equals", {"a": True}, '{"a": 1}', False),  # deep strict: true is not 1
        ("starts-with", "# Release", "# Release 2.4.0", True),
        ("starts-with", "# Release", " # Release", False),
        ("regex", "v\\d+\\.\\d+", "ships v2.4 today", True),
        ("regex", "^ships", "Ships", False),  # no flags: case-sensitive
        ("regex", "(?<ver>\\d+)\\.\\k<ver>", "1.1", True),  # JavaScript's named groups
        ("not-regex", "\\b(?!CVE-)[A-Z][A-Z0-9]+-[0-9]+\\b", "fixes CVE-2025-1234", True),
        ("contains-any", "alpha, beta", "only beta here", True),
        ("contains-any", '"a, b", c', "has a, b", True),  # CSV-style quoting keeps the comma
        ("contains-all", ["alpha", "beta"], "only beta here", False),
        ("icontains-all", "ALPHA,Beta", "alpha and BETA", True),
        ("not-icontains-any", ["todo", "fixme"], "clean text", True),
        ("is-json", None, '{"ok": true}', True),
        ("is-json", None, "ok", False),
        ("is-json", {"type": "object", "required": ["ok"]}, '{"no": 1}', False),
        ("is-json", "type: array", "[1, 2]", True),  # a schema given as YAML text
        ("contains-json", None, 'Result: {"n": 2} done', True),
        ("contains-json", {"required": ["m"]}, 'Result: {"n": 2}', False),
        ("levenshtein", "kitten", "sitting", True),  # distance 3 <= 5
        ("levenshtein", "kitten", "a much longer text", False),
        ("word-count", {"min": 2, "max": 3}, "one two three", True),
        ("word-count", 2, "one two three", False),
    ],
)
def test_code_checks_follow_promptfoo(type_, value, text, passed):
    c = check(type_, value)
    assert c.kind == "code"
    assert run_code(c, text)[0] is passed


def test_the_evidence_says_what_was_found():
    ok, ev = run_code(check("not-contains", "DATA-882"), "Added the flag [DATA-882] today")
    assert not ok and "DATA-882" in ev and ev.startswith("found")
    assert run_code(check("contains-all", "a1, b2, c3"), "a1 only")[1] == "missing ['b2', 'c3']"


def test_levenshtein_reads_the_threshold():
    assert run_code(check("levenshtein", "kitten", options={"threshold": 2}), "sitting")[0] is False


@pytest.mark.parametrize(
    "type_, why",
    [
        ("javascript", "not read in"),  # a script file that was never read in (inline ones run)
        ("similar", "embedding"),
        ("similar:cosine", "embedding"),
        ("webhook", "web service"),
        ("context-recall", "context"),
        ("rouge-n", "similarity"),
        ("is-xml", "not implemented"),
        ("made-up-type", "not a check type"),
    ],
)
def test_checks_abeq_cannot_run_are_skipped_with_the_reason(type_, why):
    c = check(type_, "file://grade.js" if type_ == "javascript" else "x")
    assert c.kind == "skipped" and why in c.reason


def test_a_transform_file_value_or_unknown_var_skips_the_check():
    assert check("contains", "x", options={"transform": "output.trim()"}).kind == "code"  # run with Node
    assert "transform" in check("contains", "x", options={"test_transform": "file://t.js"}).reason
    assert "file" in check("contains", "file://expected.txt").reason
    assert "name" in check("contains", "{{ name }}").reason


def test_template_vars_are_filled_from_the_cases_vars():
    case = Case(
        id="c",
        type="happy",
        input="x",
        metadata={"vars": {"version": "2.4.0"}},
        assertions=[{"type": "contains", "value": "v{{version}}"}],
    )
    assert case_checks(case)[0].value == "v2.4.0"


def test_natural_language_checks_go_to_the_grader():
    case = Case(
        id="c",
        type="happy",
        input="x",
        assertions=[
            {"type": "llm-rubric", "value": "mentions the CVE"},
            {"type": "not-llm-rubric", "value": "rude"},
        ],
        expectations=["asks to confirm the version"],
    )
    rubric, negated, expectation = case_checks(case)
    assert rubric.kind == negated.kind == expectation.kind == "model"
    assert negated.rubric.startswith("It is NOT the case that")
    assert expectation.source == "expectation" and expectation.target == "transcript"
    assert [c.id for c in case_checks(case)] == ["c1", "c2", "c3"]


def test_assert_sets_are_flattened_and_weight_zero_never_gates():
    case = Case(
        id="c",
        type="happy",
        input="x",
        assertions=[
            {
                "type": "assert-set",
                "value": [
                    {"type": "contains", "value": "a"},
                    {"type": "levenshtein", "value": "b", "threshold": 1},
                ],
            },
            {"type": "contains", "value": "c", "options": {"weight": 0}},
        ],
    )
    got = case_checks(case)
    assert [c.type for c in got] == ["contains", "levenshtein", "contains"] and not got[2].gates
    assert got[1].options == {"threshold": 1}  # a member's own promptfoo keys stay with it


def test_the_label_names_type_value_and_target():
    assert check("contains", "[ticket]").label == 'contains "[ticket]"'
    assert check("regex", "x+", target="transcript").label == 'regex "x+" on the transcript'
    assert check("regex", "\\bPAY-\\d+").label == 'regex "\\bPAY-\\d+"'  # as typed, not JSON-escaped
    assert check("contains-any", ["a", "b"]).label == 'contains-any ["a", "b"]'


def test_problems_name_the_case_and_check():
    case = Case(
        id="h1",
        type="happy",
        input="x",
        assertions=[
            {"type": "regex", "value": "(unclosed"},
            {"type": "contains"},
            {"type": "is-json", "value": 3},
        ],
    )
    found = problems(case)
    assert len(found) == 3 and found[0].startswith("case h1, check 1 (regex)") and "needs a value" in found[1]


def test_every_promptfoo_type_the_importer_knows_is_run_graded_or_skipped_with_its_own_reason():
    from abeq.sets.promptfoo_asserts import ASSERTION_TYPES

    for t in ASSERTION_TYPES:
        c = check(t, "x")
        assert c.kind in ("code", "model") or "not a check type" not in c.reason, t
