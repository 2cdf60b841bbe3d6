"""promptfoo's `assert` entries as abeq assertions (abeq.schemas.Assertion), kept in promptfoo's terms.

- The type and value are promptfoo's, as given (a value may be text, a number, a list or an
  object). `{{var}}` references in a text value are filled from the test's vars, as promptfoo
  does before it checks; the template is kept in options["template"].
- `metric` stays the metric; every other key (threshold, weight, transform, provider, config,
  rubricPrompt, …) goes into `options` unchanged.
- `assert-set` is flattened: each inner assertion becomes one of the case's assertions, with
  options["assert_set"] numbering the set and the set's own threshold/weight/metric beside it.
  A set with a threshold passes when enough of its members do; abeq records that threshold but
  judges each member on its own, and says so in a warning.
- `$ref: '#/…'` is resolved against the config it came from; any other reference is refused.
- CSV `__expected` cells follow promptfoo's `assertionFromString` (legacy prefixes such as
  `javascript:`, `grade:`, `python:`, `file://x.py`; `type(threshold):value`; else `equals`).
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import InputError

# promptfoo's assertion types (BaseAssertionTypesSchema, across versions); a `not-` form exists for each
ASSERTION_TYPES = (
    "answer-relevance bleu classifier contains contains-all contains-any contains-html contains-json "
    "contains-sql contains-xml context-faithfulness context-recall context-relevance "
    "conversation-relevance cost equals factuality finish-reason g-eval gleu guardrails human "
    "icontains icontains-all icontains-any is-html is-json is-refusal is-sql is-valid-function-call "
    "is-valid-openai-function-call is-valid-openai-tools-call is-xml javascript latency levenshtein "
    "llm-rubric meteor model-graded-closedqa model-graded-factuality moderation perplexity "
    "perplexity-score pi python regex rouge-l rouge-n rouge-s ruby select-best similar starts-with "
    "trace-error-spans trace-span-count trace-span-duration webhook word-count"
).split()
_FROM_STRING = re.compile(
    r"^(not-)?(" + "|".join(map(re.escape, ASSERTION_TYPES)) + r")(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$"
)
_LIST_TYPES = ("contains-all", "contains-any", "icontains-all", "icontains-any")
_SCORED = (
    "answer-relevance classifier context-faithfulness context-recall context-relevance cost latency "
    "levenshtein perplexity-score perplexity rouge-n similar starts-with"
).split()
_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_NUNJUCKS = re.compile(r"\{\{|\{%|\{#")


def from_string(expected: str) -> dict:
    """A CSV `__expected` cell as promptfoo reads it (its assertionFromString)."""
    for prefix in ("javascript:", "fn:", "eval:"):
        if expected.startswith(prefix):
            return {"type": "javascript", "value": expected[len(prefix) :].strip()}
    if expected.startswith(("grade:", "llm-rubric:")):
        return {"type": "llm-rubric", "value": expected[6 if expected.startswith("grade:") else 11 :]}
    if expected.startswith("python:") or (
        expected.startswith("file://") and (expected.endswith(".py") or ".py:" in expected)
    ):
        n = len("python:") if expected.startswith("python:") else len("file://")
        return {"type": "python", "value": expected[n:].strip()}
    if expected.startswith("file://") and (
        expected.endswith((".js", ".ts")) or ".js:" in expected or ".ts:" in expected
    ):
        return {"type": "javascript", "value": expected[len("file://") :].strip()}
    m = _FROM_STRING.match(expected)
    if not m:
        return {"type": "equals", "value": expected}
    neg, base, threshold, value = m.groups()
    value = value or ""
    out: dict = {"type": (neg or "") + base}
    if base in _LIST_TYPES:
        out["value"] = [s.strip() for s in value.split(",")]
    elif base in ("contains-json", "is-json"):
        out["value"] = value  # promptfoo passes these on as written
    else:
        out["value"] = value.strip()  # `icontains: X` checks for "X", as promptfoo trims it
    if base in _SCORED:
        out["threshold"] = float(threshold) if threshold else (0.8 if base == "similar" else 0.75)
    return out


def to_assertions(
    raw: Any, label: str, path: str, vars_: dict, config: dict, warnings: list[str], set_no: list[int]
) -> list[dict]:
    """One promptfoo assert entry (a mapping, a CSV-style string, or an assert-set) as assertion dicts.
    `config` resolves `$ref`s; `set_no` numbers the assert-sets of a test across calls."""
    if isinstance(raw, str):
        raw = from_string(raw)
    if not isinstance(raw, dict):
        raise InputError(
            f"{label}: an assert entry must be a mapping with a 'type', not {type(raw).__name__}",
            path=path,
            hint="Write it as `- type: contains` with `value: ...` under it.",
        )
    if "$ref" in raw:
        raw = {**_ref(raw["$ref"], label, path, config), **{k: v for k, v in raw.items() if k != "$ref"}}
    kind = raw.get("type")
    if not isinstance(kind, str) or not kind.strip():
        raise InputError(
            f"{label}: an assert entry has no 'type' ({_show(raw)})",
            path=path,
            hint="Give each assert a type: contains, icontains, regex, equals, llm-rubric, ….",
        )
    if kind == "assert-set":
        set_no[0] += 1
        group = {k: raw[k] for k in ("threshold", "weight", "metric") if k in raw}
        if "threshold" in raw:
            warnings.append(
                f"{label}: an assert-set with threshold {raw['threshold']} passes when enough of its "
                "checks do; abeq judges each of its checks on its own (the threshold is kept in their "
                "options)"
            )
        inner = raw.get("assert")
        if not isinstance(inner, list) or not inner:
            raise InputError(f"{label}: an assert-set needs an 'assert' list", path=path)
        out = []
        for a in inner:
            for one in to_assertions(a, label, path, vars_, config, warnings, set_no):
                extra = {f"assert_set_{k}": v for k, v in group.items()}
                one["options"] = {**one["options"], "assert_set": set_no[0], **extra}
                out.append(one)
        return out
    value = raw.get("value")
    options = {k: v for k, v in raw.items() if k not in ("type", "value", "metric")}
    rendered = _render(value, vars_)
    if rendered is not value:
        options["template"] = value
    if kind.removeprefix("not-") in ("javascript", "python"):
        if isinstance(value, str) and value.startswith("file://"):
            read_script(value, options, "script", path, label, warnings, kind.removeprefix("not-"))
        code = options["script"]["source"] if "script" in options else value
        if isinstance(code, str) and "vars" in code:  # promptfoo's code reads context.vars: kept beside it
            options["vars"] = dict(vars_)
    if isinstance(options.get("transform"), str) and options["transform"].startswith("file://"):
        read_script(options["transform"], options, "transform_script", path, label, warnings, "transform")
    metric = raw.get("metric")
    return [
        {
            "type": kind,
            "value": rendered,
            "metric": metric if isinstance(metric, str) else "" if metric is None else str(metric),
            "options": options,
        }
    ]


def _render(value: Any, vars_: dict) -> Any:
    """`{{name}}` filled from the vars, in a text value or a list of texts; anything else as given.
    A template with other Nunjucks (filters, loops) or an unknown var is left as written."""
    if isinstance(value, list):
        out = [_render(v, vars_) for v in value]
        return out if any(a is not b for a, b in zip(out, value)) else value
    if not isinstance(value, str) or not _NUNJUCKS.search(value):
        return value
    names = _VAR.findall(value)
    if _NUNJUCKS.search(_VAR.sub("", value)) or any(n not in vars_ for n in names):
        return value
    return _VAR.sub(lambda m: _var_text(vars_[m.group(1)]), value)


def _var_text(v: Any) -> str:
    import json

    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)


def _ref(ref: Any, label: str, path: str, config: dict) -> dict:
    if not isinstance(ref, str) or not ref.startswith("#/"):
        raise InputError(
            f"{label}: an assert refers to {ref!r}; abeq resolves only references inside the same "
            "config ('#/…')",
            path=path,
            hint="Copy the referenced assertion into the test (or under assertionTemplates in this file).",
        )
    node: Any = config
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise InputError(
                f"{label}: an assert refers to {ref}, which this config does not have",
                path=path,
                hint="Check the name under assertionTemplates (or wherever the reference points).",
            )
        node = node[part]
    if not isinstance(node, dict):
        raise InputError(f"{label}: {ref} is not an assertion (a mapping with a type)", path=path)
    return node


def _show(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 80 else s[:79] + "…"


_DEFAULT_FN = {"python": "get_assert", "transform": "get_transform"}


def read_script(ref: str, options: dict, key: str, path: str, label: str, warnings: list, role: str) -> None:
    """A file:// script read in beside its check (options[key]: name as written, source, function),
    so the set runs it wherever it is copied; relative to the config, as promptfoo resolves it. A
    file that is not there is said; the check is then skipped at run time, with why."""
    from pathlib import Path

    from ._common import read_referenced
    from .parse import MAX_SET_BYTES

    rel = ref.removeprefix("file://")
    name, fn = rel, ""
    for ext in (".py", ".js", ".mjs", ".cjs", ".ts"):  # file://x.py:fn names the function
        if ext + ":" in rel:
            name, fn = rel.split(ext + ":", 1)
            name += ext
    f = Path(path).resolve().parent / name
    if not f.is_file():
        warnings.append(
            f"{label}: {ref} does not exist next to {Path(path).name}; that check will be skipped"
        )
        return
    if not fn and name.endswith(".py"):
        fn = _DEFAULT_FN["transform" if role == "transform" else "python"]
    options[key] = {
        "name": name,
        "source": read_referenced(f, what=f"script {name}", max_bytes=MAX_SET_BYTES),
        "fn": fn,
    }
