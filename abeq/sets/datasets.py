"""Other tools' datasets (OpenAI evals, Inspect AI, DeepEval goldens, Ragas, LangSmith exports, and
any rows with an input column beside a reference column) as abeq cases.

The rule is the one every importer keeps: the runner gets only what the tool would send the model;
a reference answer is never input, it becomes a check the judge grades on both arms.

- OpenAI evals (`input` + `ideal`): the input is `input` (text, or a chat's one user message); `ideal`
  is a factuality check (a list: any one of them).
- Inspect AI (`input` + `target`): `input`, with `choices` lettered A), B), … under it as Inspect's
  multiple_choice shows them; `target` is a factuality check (with choices: the lettered choice).
- DeepEval goldens (`input` + `expected_output`, `actual_output` or `retrieval_context`): `input`;
  `expected_output` is a factuality check.
- Ragas (`user_input` + `reference`, or `question` + `ground_truth`): the question; the reference.
- LangSmith exports (`inputs` + `outputs`, mappings): `inputs` (one value, or `name: value` lines);
  each `outputs` value is a factuality check.
- Other rows with an input column (`input`, `question`, `query`, `text`, …) beside a reference column
  (`expected_output`, `answer`, `grading_notes`, …, and last `label`): that column; the reference
  (`grading_notes`/`rubric`: a rubric; `label`, only when no other reference column is there: the
  label the output gives; else factuality). The first warning names the column that became the
  reference and any other such column that went to metadata.

Every other field goes to the case's metadata, named in a warning: recorded outputs (`actual_output`,
`response`), retrieved contexts, Inspect's `files`/`sandbox`/`setup` (which abeq does not provide).
Refused by name: a chat with earlier turns as the input, DeepEval conversational goldens.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InputError
from ._common import MAX_CASES, Imported, _declared_type, slugify, unique_id
from .parse import format_of

_INPUT_COLUMNS = ("input", "user_input", "question", "query", "prompt", "text", "instruction")
REFERENCE_NAMES = (
    "expected_output",
    "expected",
    "expected_answer",
    "reference",
    "reference_answer",
    "ground_truth",
    "ideal",
    "target",
    "gold",
    "answer",
    "correct_answer",
    "grading_notes",
    "rubric",
    "label",  # last: a grader's label ("correct") beside an answer is about the answer, not the reference
)
_RUBRIC_COLUMNS = ("grading_notes", "rubric")
_ABEQ_KEYS = {"type", "expectations", "assertions", "exercises_sections", "status", "gate_responses"}


# a model's recorded reply: beside score columns it is what was graded, never a reference answer
RESPONSE_COLUMNS = (
    "response",
    "answer",
    "output",
    "actual_output",
    "prediction",
    "generated_answer",
    "model_answer",
    "completion",
    "generation",
)
# the metrics RAG and LLM evaluators (Ragas, Galileo, TruLens, Azure AI, DeepEval…) write per row
_SCORE_NAMES = {
    "faithfulness",
    "answer_relevancy",
    "answer_relevance",
    "response_relevancy",
    "context_precision",
    "context_recall",
    "context_relevancy",
    "context_relevance",
    "context_entity_recall",
    "context_adherence",
    "context_utilization",
    "groundedness",
    "ground_truth_adherence",
    "answer_correctness",
    "answer_similarity",
    "semantic_similarity",
    "factual_correctness",
    "noise_sensitivity",
    "instruction_adherence",
    "completeness",
    "correctness",
    "relevance",
    "coherence",
    "fluency",
    "harmfulness",
    "toxicity",
    "hallucination",
    "chunk_attribution",
    "chunk_utilization",
    "score",
    "passed",
}


@dataclass(frozen=True)
class Kind:
    """Which tool's rows these are, in words for messages."""

    name: str
    title: str  # "an Inspect AI dataset"
    columns: str  # the fields that told it
    reference: str  # the field holding the reference answer
    input: str  # the field holding the input
    scores: tuple[str, ...] = ()  # an evaluation's results: its score columns
    response: str = ""  # and the reply they scored (kept in metadata, never a check)


def score_columns(keys: Any) -> list[str]:
    """The columns of `keys` (in order) that hold an evaluator's per-row scores."""
    out = []
    for k in keys:
        low = str(k).lower()
        if (
            low in _SCORE_NAMES
            or low.endswith("_score")
            or low.startswith(("score_", "gpt_", "outputs."))
            or low.split(".")[-1] in _SCORE_NAMES
        ):
            out.append(str(k))
    return out


def _plain_rows(rows: Any) -> list[str] | None:
    """The fields of rows that are another tool's (in first-seen order), or None for what is not rows
    or is promptfoo's, skill-creator's or abeq's own."""
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows[:50]):
        return None
    ordered = list(dict.fromkeys(k for r in rows[:50] for k in r))
    keys = set(ordered)
    if any(str(k).startswith("__") for k in keys) or keys & {"vars", "assert", "should_trigger"}:
        return None
    if {"id", "input"} <= keys and keys & _ABEQ_KEYS:
        return None  # abeq's own cases
    return ordered


# a grader's column beside the answers, and the words in it that say an answer is wrong: an answer a
# grader marked wrong is a reply that was graded, never a reference answer
_GRADE_COLUMNS = ("label", "grade", "verdict", "is_correct", "correct")
_WRONG = {
    "incorrect", "wrong", "false", "no", "0", "fail", "failed", "bad", "partial", "partially correct",
    "hallucinated", "hallucination", "unfaithful", "unsupported", "not correct", "not_correct",
}  # fmt: skip


# what not_a_dataset names that the dataset reader refuses itself, whatever else would take the rows
# (read as promptfoo vars or abeq's columns, the recorded or graded replies would reach the input, or
# the refusal would be a column list)
REFUSED_BY_NAME = ("results", "judge", "graded")


def graded_answers(ordered: list, rows: list, reference: str) -> tuple[str, int, list[str]] | None:
    """(column, how many marked wrong, the words) when a grader's column beside the reference
    column marks some of its values wrong; None otherwise."""
    for col in _GRADE_COLUMNS:
        if col in ordered and col != reference:
            said = [str(r.get(col, "")).strip().lower() for r in rows if isinstance(r, dict)]
            wrong = [v for v in said if v in _WRONG]
            if wrong:
                return col, len(wrong), sorted(set(wrong))
    return None


def dataset_kind(rows: Any) -> Kind | None:
    """The tool a list of rows (dicts) comes from, by its fields; None for promptfoo tests, abeq cases,
    skill-creator evals or rows that hold no reference answer. Rows with score columns beside a
    recorded reply are an evaluation's results: the reply is never taken for the reference."""
    ordered = _plain_rows(rows)
    if ordered is None:
        return None
    scores = tuple(score_columns(ordered))
    response = next((c for c in RESPONSE_COLUMNS if c in ordered), "") if scores else ""
    kind = _kind_of(set(ordered), rows, {response} if response else set())
    if kind is not None and graded_answers(ordered, rows, kind.reference):
        return None  # graded answers: see not_a_dataset
    if kind is None or not response:
        return kind
    if kind.reference not in ordered:
        return None  # results with no reference answer: see not_a_dataset
    return replace(kind, scores=scores, response=response)


def not_a_dataset(rows: Any) -> tuple[str, str, str] | None:
    """(what, message, hint) for rows that look like another tool's but hold no reference answer: an
    evaluation's results ("results"), judge rows — a question beside a reply to grade ("judge") — or
    prompts alone ("prompts"); None for anything else (a dataset among them)."""
    ordered = _plain_rows(rows)
    if ordered is None or dataset_kind(rows) is not None:
        return None
    keys = set(ordered)
    if "prompt" in keys and keys & {"expectations", "assertions", "expected_output"}:
        return None  # skill-creator evals: their own reader, and abeq's, name them
    inp = next((c for c in (*_INPUT_COLUMNS, "inputs") if c in keys), None)
    scores = score_columns(ordered)
    response = next((c for c in RESPONSE_COLUMNS if c in keys), "")
    fields = ", ".join(ordered[:8]) + (", …" if len(ordered) > 8 else "")
    base = _kind_of(keys, rows, set())
    graded = graded_answers(ordered, rows, base.reference) if base else None
    if base and graded:
        col, wrong, words = graded
        return (
            "graded",
            f"these are graded answers ({fields}), not a dataset: the '{col}' column marks {wrong} of "
            f"{len(rows)} '{base.reference}' values wrong ({', '.join(repr(w) for w in words[:4])}), and an "
            "answer marked wrong is no reference answer",
            f"Keep the rows whose '{col}' says the answer is right, drop the '{col}' column, and import "
            "again: `abeq import-set --from dataset FILE --out set.json`.",
        )
    if scores and response:
        shown = ", ".join(scores[:6]) + (", …" if len(scores) > 6 else "")
        return (
            "results",
            f"this is an evaluation's results (score columns: {shown}), not a dataset: '{response}' is the "
            "reply that was scored, not a reference answer, and no reference column is there",
            "Import the dataset the evaluation was made from (its questions with their reference answers, "
            "e.g. question + ground_truth): `abeq import-set --from dataset DATASET --out set.json`.",
        )
    if inp and response:
        return (
            "judge",
            f"these are judge rows ({fields}), not a dataset: '{response}' is a reply to be graded beside "
            f"its '{inp}', not a reference answer",
            "Import the dataset the replies were made for (questions with reference answers), or keep "
            f"only the '{inp}' texts as abeq cases with an id and a type each "
            "(docs/guides/transfer-sets.md).",
        )
    if inp and "id" not in keys and not keys & _ABEQ_KEYS:
        return (
            "prompts",
            f"these rows hold prompts only ({fields}), not a dataset: there is no reference answer beside "
            f"'{inp}', and no id or type to make them abeq cases",
            "Give each row an id and a type (abeq's own format: docs/guides/transfer-sets.md), or add a "
            "reference column (e.g. expected_output) and import with `abeq import-set --from dataset`.",
        )
    return None


def _kind_of(keys: set, rows: list, exclude: set) -> Kind | None:
    if "input" in keys and "ideal" in keys:
        return Kind("openai-evals", "OpenAI evals samples", "input, ideal", "ideal", "input")
    langsmith = isinstance(rows[0].get("inputs"), dict) and keys & {"outputs", "reference_outputs"}
    if langsmith:
        return Kind("langsmith", "a LangSmith dataset export", "inputs, outputs", "outputs", "inputs")
    if {"user_input", "reference"} <= keys:
        return Kind("ragas", "a Ragas dataset", "user_input, reference", "reference", "user_input")
    if {"question", "ground_truth"} <= keys:
        return Kind("ragas", "a Ragas testset", "question, ground_truth", "ground_truth", "question")
    if "input" in keys and keys & {"expected_output", "actual_output", "retrieval_context"}:
        return Kind("deepeval", "DeepEval goldens", "input, expected_output", "expected_output", "input")
    if {"input", "target"} <= keys:
        cols = "input, target, choices" if "choices" in keys else "input, target"
        return Kind("inspect", "an Inspect AI dataset", cols, "target", "input")
    inp = next((c for c in _INPUT_COLUMNS if c in keys), None)
    ref = next((c for c in REFERENCE_NAMES if c in keys and c != inp and c not in exclude), None)
    if inp and ref and not (inp == "prompt" and keys & {"expectations", "assertions", "expected_output"}):
        return Kind("columns", "rows with a reference column", f"{inp}, {ref}", ref, inp)
    return None


def _rows(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def rows_of(path: str, text: str) -> list[dict]:
    """A dataset file's rows: JSON (a list, or a list under one key), JSONL or CSV."""
    from .formats import parse_text

    fmt = format_of(path)
    if fmt == "csv":
        try:
            return [dict(r) for r in csv.DictReader(io.StringIO(text), strict=True)]
        except csv.Error as e:
            raise InputError(f"the CSV does not parse: {e}", path=path) from None
    if fmt not in ("json", "jsonl"):
        raise InputError(f"a dataset file is JSON, JSONL or CSV, not .{fmt}", path=path)
    data = parse_text(text, fmt, path)
    if isinstance(data, dict):  # {"examples": [...]}, {"goldens": [...]}, …
        lists = [v for v in data.values() if _rows(v)]
        data = lists[0] if len(lists) == 1 else data
    if not isinstance(data, list):
        raise InputError("a dataset file is a list of rows (objects)", path=path)
    return data


def bare_rows(data: Any) -> Any:
    """Rows as another tool writes them: a list as it is, or the one list of rows under a key
    (`{"examples": [...]}`); None for abeq's own `{"cases": ...}` or a mapping without one such list."""
    if not isinstance(data, dict):
        return data
    lists = [v for v in data.values() if isinstance(v, list) and v and isinstance(v[0], dict)]
    return lists[0] if len(lists) == 1 and "cases" not in data else None


def claims(rows: Any) -> bool:
    """Rows the dataset reader takes: a dataset, or rows it refuses by name (REFUSED_BY_NAME)."""
    if dataset_kind(rows) is not None:
        return True
    told = not_a_dataset(rows)
    return told is not None and told[0] in REFUSED_BY_NAME


def detect(data: Any, fmt: str) -> bool:
    """Another tool's rows (an input beside a reference answer), bare or under one key
    (`{"examples": [...]}`)."""
    return claims(bare_rows(data))


def read(path: str, text: str, *, trigger_queries: bool = False) -> Imported:
    """Another tool's dataset as cases (the importer's reader, abeq.sets.importers)."""
    return read_dataset(path, text)


def read_dataset(path: str, text: str) -> Imported:
    """The rows of another tool's dataset as cases (see the module's table)."""
    rows = rows_of(path, text)
    kind = dataset_kind(rows)
    told = not_a_dataset(rows) if kind is None else None
    if told is not None:
        raise InputError(told[1], path=path, hint=told[2])
    if kind is None:
        raise InputError(
            "these rows are not a dataset abeq recognises: it looks for an input field beside a reference "
            "answer (OpenAI evals input + ideal, Inspect AI input + target, DeepEval input + "
            "expected_output, Ragas user_input + reference, LangSmith inputs + outputs, or columns such as "
            "question + answer)",
            path=path,
            hint="Rename the columns to input and expected_output, or import abeq's own format "
            "(docs/guides/transfer-sets.md).",
        )
    if len(rows) > MAX_CASES:
        raise InputError(f"more than {MAX_CASES} rows", path=path)
    if kind.name == "deepeval" and any("turns" in r or "scenario" in r for r in rows):
        raise InputError(
            "these are DeepEval conversational goldens (scenario, turns): a case input here is one message",
            path=path,
            hint="Export single-turn goldens (input, expected_output) and import those.",
        )
    cases: list[dict] = []
    labels: list[str] = []
    taken: set[str] = set()
    kept: dict[str, int] = {}
    for n, row in enumerate(rows, start=1):
        label = f"row {n}"
        inp = _input(kind, row, label, path)
        if not inp.strip():
            raise InputError(f"{label}: '{kind.input}' is empty; it is the case input", path=path)
        checks = _checks(kind, row, label, path)
        used = {kind.input, "id", "choices"} | ({kind.reference} if checks else set())
        meta = {k: v for k, v in row.items() if k not in used and v not in (None, "", [], {})}
        system = _system_messages(row.get(kind.input))
        if system:  # the document under test is the runner's instructions; the file's stay beside
            meta["system_messages"] = system
        for k in meta:
            kept[k] = kept.get(k, 0) + 1
        rid = row.get("id")
        want = slugify(str(rid)) if rid not in (None, "") else f"{kind.name}-{n}"
        case: dict = {"id": unique_id(want or f"row-{n}", taken), "input": inp, "status": "user-added"}
        if checks:
            case["assertions"] = checks
        if meta:
            case["metadata"] = meta
        nested: dict = row["metadata"] if isinstance(row.get("metadata"), dict) else {}
        ctype = _declared_type(row, path, label) or _declared_type(nested, path, label)
        if ctype:
            case["type"] = ctype
        cases.append(case)
        labels.append(label)
    keys = set().union(*rows)
    passed_over = [c for c in REFERENCE_NAMES if c in keys and c not in (kind.input, kind.reference)]
    warnings = [
        f"read as {kind.title} ({kind.columns}): '{kind.input}' is the input, '{kind.reference}' a check "
        "(the reference; never part of the input)"
        + (
            f"; {', '.join(repr(c) for c in passed_over)} went to metadata, not the reference"
            if passed_over
            else ""
        )
    ]
    if kind.scores:
        warnings.append(
            f"these rows are an evaluation's results (score columns: {', '.join(kind.scores)}): "
            f"'{kind.response}' is the reply that was scored, kept in metadata as a recorded output and "
            "never a check; the scores are kept in metadata too"
        )
    if "system_messages" in kept:
        warnings.append(
            f"{kept.pop('system_messages')} input(s) are chats with a system message: the user message is "
            "the input, the system message is kept in metadata.system_messages — abeq's runner gets the "
            "document under test as its instructions instead"
        )
    if kept:
        warnings.append(
            "fields kept in each case's metadata, not sent to the runner: "
            + ", ".join(f"{k} ({v})" for k, v in kept.items())
            + (
                "; files, sandbox and setup are not provided to abeq's runner"
                if kept.keys() & {"files", "sandbox", "setup"}
                else ""
            )
        )
    return Imported(path, "dataset", cases, labels, warnings)


def _input(kind: Kind, row: dict, label: str, path: str) -> str:
    v = row.get(kind.input)
    if kind.name == "langsmith":
        if not isinstance(v, dict) or not v:
            raise InputError(f"{label}: 'inputs' must be a mapping of names to values", path=path)
        if isinstance(v.get("messages"), list):
            return _messages(v["messages"], label, path)
        vals = {k: x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for k, x in v.items()}
        if len(vals) == 1:
            return next(iter(vals.values()))
        return "\n".join(f"{k}: {x}" for k, x in vals.items())
    if isinstance(v, list):
        text = _messages(v, label, path)
    elif isinstance(v, str):
        text = v
    else:
        raise InputError(f"{label}: '{kind.input}' must be text or a list of messages", path=path)
    choices = _choices(row.get("choices"))
    if kind.name == "inspect" and choices:  # Inspect's multiple_choice shows them under the question
        text += "\n\n" + "\n".join(f"{chr(65 + i)}) {c}" for i, c in enumerate(choices))
    return text


def _choices(v: Any) -> list[str]:
    if isinstance(v, list):
        return [str(x) for x in v]
    if isinstance(v, str) and v.strip():
        from .formats import _list_cell

        return _list_cell(v, lambda s: s.split(","))
    return []


def _system_messages(v: Any) -> list[str]:
    if not isinstance(v, list):
        return []
    return [str(m.get("content")) for m in v if isinstance(m, dict) and m.get("role") == "system"]


def _messages(msgs: list, label: str, path: str) -> str:
    """A chat as the input: its one user message; system messages are the document's place."""
    if not all(isinstance(m, dict) for m in msgs):
        raise InputError(f"{label}: the input list must hold messages (role, content)", path=path)
    users = [m for m in msgs if m.get("role") == "user"]
    others = sorted({str(m.get("role")) for m in msgs} - {"user", "system"})
    if len(users) != 1 or others or not isinstance(users[0].get("content"), str):
        raise InputError(
            f"{label}: the input is a chat of {len(msgs)} messages (roles: "
            f"{', '.join(str(m.get('role')) for m in msgs)}); abeq's case input is one user message",
            path=path,
            hint="Keep rows whose input is one user message (system messages may stand beside it).",
        )
    return str(users[0]["content"])


def _checks(kind: Kind, row: dict, label: str, path: str) -> list[dict]:
    ref = row.get(kind.reference)
    if ref in (None, "", [], {}):
        return []
    field = kind.reference
    if kind.name == "langsmith":
        if not isinstance(ref, dict):
            return [_factuality(ref, field)]
        return [_factuality(v, f"{field}.{k}") for k, v in ref.items() if v not in (None, "")]
    if kind.name == "inspect" and _choices(row.get("choices")):
        choices = _choices(row.get("choices"))
        letters = ref if isinstance(ref, list) else [x.strip() for x in str(ref).split(",")]
        picked = []
        for letter in letters:
            i = ord(letter.upper()) - 65 if len(letter) == 1 else -1
            if not 0 <= i < len(choices):
                raise InputError(f"{label}: target '{letter}' is not one of the choices' letters", path=path)
            picked.append(f"{letter.upper()}) {choices[i]}")
        return [_rubric("The answer chosen is " + " and ".join(picked), field)]
    if isinstance(ref, list):
        listed = " | ".join(map(str, ref))
        return [_rubric(f"The output agrees with one of these reference answers: {listed}", field)]
    if field in _RUBRIC_COLUMNS:
        return [_rubric(str(ref), field)]
    if field == "label":
        return [_rubric(f"The output gives the label: {ref}", field)]
    return [_factuality(ref, field)]


def _rubric(value: str, field: str) -> dict:
    return {"type": "llm-rubric", "value": value, "metric": field, "options": {"reference_field": field}}


def _factuality(ref: Any, field: str) -> dict:
    value = ref if isinstance(ref, str) else json.dumps(ref, ensure_ascii=False)
    return {"type": "factuality", "value": value, "metric": field, "options": {"reference_field": field}}
