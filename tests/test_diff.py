import html
import itertools
import random
import re

import pytest

from abeq.results.reports import diff
from abeq.results.reports.diff import diff_stats, inline_html, side_by_side_html, tokenize, word_diff

WORDS = [
    "the",
    "model",
    "answer",
    "tool",
    "call",
    "café",
    "naïve",
    "日本語",
    "Привет",
    "👍🏽",
    "🇫🇷",
    "x_1",
    "42",
]
SEPARATORS = [
    " ",
    " ",
    " ",
    "  ",
    ", ",
    ". ",
    "\n",
    "\r\n",
    "\n\n",
    "\r\n\r\n",
    "\t",
    "! ",
    "'",
    "😀",
    "<",
    "&",
]


# Real transcripts have a wide vocabulary (names, numbers, rare words) next to the common words.
VOCABULARY = [
    "".join(random.Random(i).choices("abcdefghijklmnopqrstuvwxyz", k=3 + i % 7)) for i in range(2000)
]


def random_word(rng: random.Random) -> str:
    return rng.choice(WORDS) if rng.random() < 0.4 else rng.choice(VOCABULARY)


def random_text(rng: random.Random, n_words: int) -> str:
    return "".join(random_word(rng) + rng.choice(SEPARATORS) for _ in range(n_words))


def mutate(rng: random.Random, text: str, rate: float) -> str:
    out = []
    for token in tokenize(text):
        r = rng.random()
        if r < rate / 3:
            continue
        out.append(random_word(rng) if r < 2 * rate / 3 else token)
        if r > 1 - rate / 3:
            out.append(rng.choice(SEPARATORS) + random_word(rng))
    return "".join(out)


def sides(ops):
    left = "".join(t for op, t in ops if op in (diff.EQUAL, diff.DELETE))
    right = "".join(t for op, t in ops if op in (diff.EQUAL, diff.INSERT))
    return left, right


def visible_text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.mark.parametrize("n_words", [0, 1, 5, 60, 400, 3000])
@pytest.mark.parametrize("rate", [0.05, 0.3, 0.9])
def test_diff_gives_back_both_texts_exactly(n_words, rate):
    rng = random.Random(n_words * 1000 + int(rate * 100))
    a = random_text(rng, n_words)
    b = mutate(rng, a, rate)
    ops = word_diff(a, b, timeout=10)
    assert sides(ops) == (a, b)
    assert all(text for _, text in ops)
    assert all(ops[i][0] != ops[i + 1][0] for i in range(len(ops) - 1))


def test_tokenize_is_lossless_and_keeps_characters_whole():
    text = "It's 3.14 café\u0301 नमस्ते 👍🏽 👨\u200d👩\u200d👧 🇫🇷 ❤️\r\n\r\nend"
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert tokens[:6] == ["It", "'", "s", " ", "3", "."]
    for whole in ["café\u0301", "नमस्ते", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "❤️", "\r\n\r\n"]:
        assert whole in tokens


def test_one_word_change_marks_only_that_word():
    a = "The assistant called the search tool and summarised the results."
    b = "The assistant called the browse tool and summarised the results."
    assert word_diff(a, b) == [
        (0, "The assistant called the "),
        (-1, "search"),
        (1, "browse"),
        (0, " tool and summarised the results."),
    ]
    page = side_by_side_html(a, b)
    assert re.findall(r"<del[^>]*>(.*?)</del>", page) == ["search"]
    assert re.findall(r"<ins[^>]*>(.*?)</ins>", page) == ["browse"]
    inline = inline_html(a, b)
    assert re.findall(r"<del[^>]*>(.*?)</del>", inline) == ["search"]
    assert re.findall(r"<ins[^>]*>(.*?)</ins>", inline) == ["browse"]
    assert diff_stats(a, b) == {"added": 1, "removed": 1, "unchanged": 9, "too_different": False}


def test_identical_texts_have_no_marks():
    text = "Same answer.\n\nSame second paragraph."
    assert word_diff(text, text) == [(0, text)]
    assert "<del" not in side_by_side_html(text, text) and "<ins" not in inline_html(text, text)


PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "&lt;b&gt;",
]


@pytest.mark.parametrize("render", [side_by_side_html, inline_html])
@pytest.mark.parametrize("timeout", [1.0, 1e-9])
def test_transcript_html_is_shown_as_text(render, timeout):
    a = "Answer: " + " then ".join(PAYLOADS)
    b = "Answer: " + " and ".join(PAYLOADS) + " <script>x</script>"
    page = render(a, b, left_label="<script>L</script>", right_label='"><img src=y>', timeout=timeout)
    assert "<script" not in page.lower() and "<img" not in page.lower() and "<svg" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&quot;&gt;&lt;svg onload=alert(1)&gt;" in page
    assert "&amp;lt;b&amp;gt;" in page  # already-escaped text stays literal, not decoded
    assert "&lt;script&gt;L&lt;/script&gt;" in page and "&quot;&gt;&lt;img src=y&gt;" in page


def test_side_by_side_columns_show_each_text_whole():
    rng = random.Random(7)
    a = random_text(rng, 300)
    b = mutate(rng, a, 0.2)
    page = side_by_side_html(a, b)
    cells = re.findall(r'<div style="padding:0 10px(;border-left[^"]*)?">(.*?)</div>', page, re.S)
    left = "".join(visible_text(c) for right, c in cells if not right)
    right = "".join(visible_text(c) for right, c in cells if right)
    assert left == a and right == b
    assert "white-space:pre-wrap" in page
    assert "Original" in page and "Candidate" in page


def test_inserted_paragraph_keeps_columns_level():
    a = "First point.\n\nLast point."
    b = "First point.\n\nA new middle point.\n\nLast point."
    page = side_by_side_html(a, b)
    row = r'<div style="padding:0 10px">(.*?)</div><div style="padding:0 10px;border-left[^"]*">(.*?)</div>'
    rows = re.findall(row, page, re.S)
    assert ("First point.\n\n", "First point.\n\n") in rows
    assert ("Last point.", "Last point.") in rows


def test_too_different_shows_a_note_and_both_texts_unmarked():
    rng = random.Random(1)
    a = " ".join(rng.choice("abcdefghij") * rng.randint(1, 6) for _ in range(20000))
    b = " ".join(rng.choice("klmnopqrst") * rng.randint(1, 6) for _ in range(20000))
    assert word_diff(a, b, timeout=0.001) is None
    for render in (side_by_side_html, inline_html):
        page = render(a, b, timeout=0.001)
        assert diff.TOO_DIFFERENT in page
        assert "<del" not in page and "<ins" not in page
        assert a in page and b in page
    assert diff_stats(a, b, timeout=0.001)["too_different"] is True


def test_timeout_is_reported_even_when_dmp_returns_a_result(monkeypatch):
    # dmp never raises on timeout; only the clock says its answer is a coarse fallback.
    clock = itertools.chain([0.0], itertools.repeat(100.0))
    monkeypatch.setattr(diff.time, "time", lambda: next(clock))
    assert word_diff("one two three", "one 2 three", timeout=1.0) is None


@pytest.mark.parametrize("a, b", [("", ""), ("", "New answer.\n"), ("Old answer.\n", "")])
def test_empty_side(a, b):
    ops = word_diff(a, b)
    assert sides(ops) == (a, b)
    page = side_by_side_html(a, b)
    assert diff.TOO_DIFFERENT not in page
    if a:
        assert "<del" in page and "Old answer." in page
    if b:
        assert "<ins" in page and "New answer." in page
    assert diff_stats(a, b) == {
        "added": 2 * bool(b),
        "removed": 2 * bool(a),
        "unchanged": 0,
        "too_different": False,
    }


def test_long_transcripts_with_edits_everywhere_still_diff():
    rng = random.Random(42)
    a = "\n\n".join(random_text(rng, 80).replace("\n", " ") for _ in range(60))
    b = mutate(rng, a, 0.4)
    ops = word_diff(a, b, timeout=5)
    assert ops is not None and sides(ops) == (a, b)


def test_paragraph_dropped_at_top_and_added_at_end_leaves_the_rest_unmarked():
    rng = random.Random(3)
    paragraphs = [random_text(rng, 120).replace("\n", " ").replace("\r", " ") for _ in range(5)]
    a = "\n\n".join(paragraphs[:4])
    b = "\n\n".join(paragraphs[1:])  # same number of paragraphs, each moved up one place
    ops = word_diff(a, b)
    assert sides(ops) == (a, b)
    deleted = "".join(t for op, t in ops if op == diff.DELETE)
    inserted = "".join(t for op, t in ops if op == diff.INSERT)
    # Equal runs may take a shared space from either end; the words are what the reviewer reads.
    assert deleted.strip() == paragraphs[0].strip() and inserted.strip() == paragraphs[4].strip()
    assert all(p.strip() in "".join(t for op, t in ops if op == diff.EQUAL) for p in paragraphs[1:4])


def test_paragraph_added_at_top_of_an_edited_transcript_does_not_shift_every_pairing():
    rng = random.Random(11)
    paragraphs = [random_text(rng, 100).replace("\n", " ").replace("\r", " ") for _ in range(40)]
    a = "\n\n".join(paragraphs)
    edited = "\n\n".join(mutate(rng, p, 0.1) for p in paragraphs)
    opening = "A new opening paragraph from the candidate.\n\n"
    ops = word_diff(a, opening + edited, timeout=10)
    assert ops is not None and sides(ops) == (a, opening + edited)
    assert ops[0] == (diff.INSERT, opening)
    # The added paragraph costs its own 7 words and nothing more.
    without, with_opening = diff_stats(a, edited, timeout=10), diff_stats(a, opening + edited, timeout=10)
    assert with_opening == {**without, "added": without["added"] + 7}


def test_a_finished_diff_is_reused_and_callers_cannot_change_the_kept_copy(monkeypatch):
    from abeq.results.reports import diff

    diff.clear_cache()
    calls = []
    real = diff._word_diff
    monkeypatch.setattr(diff, "_word_diff", lambda a, b, t: calls.append(1) or real(a, b, t))
    first = diff.word_diff("the quick brown fox", "the slow brown fox")
    first.append((0, "junk"))
    again = diff.word_diff("the quick brown fox", "the slow brown fox")
    assert len(calls) == 1 and (0, "junk") not in again
    assert "".join(t for op, t in again if op != 1) == "the quick brown fox"


def test_a_timed_out_diff_is_not_kept(monkeypatch):
    from abeq.results.reports import diff

    diff.clear_cache()
    answers = iter([None, [(0, "same")]])
    monkeypatch.setattr(diff, "_word_diff", lambda a, b, t: next(answers))
    assert diff.word_diff("x y", "x z") is None
    assert diff.word_diff("x y", "x z") == [(0, "same")]
