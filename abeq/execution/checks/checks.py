"""A case's checks on both arms, in promptfoo's vocabulary and with its semantics.

Code-checkable types run in code on each arm's output (or transcript), as promptfoo runs them
(abeq.execution.checks.code_checks); `javascript` and `python` asserts and transforms run
promptfoo's code with Node and Python (abeq.execution.checks.scripts). Natural-language ones
(llm-rubric and the other model-graded types, every `expectations` string) are graded by the judge
model in one call per case (abeq.execution.checks.grading). Types that cannot run here are listed as
skipped with the reason, never dropped.
For an equivalence test a check means something relative: the teacher passing and the candidate
failing is a lost behaviour; both failing is a property of the task.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

from ...results.store.rows import CheckResultRow
from ...schemas import Assertion, Case, CheckResult, RunnerReply
from ...schemas.checks import CheckKind, CheckSource, CheckTarget
from . import scripts
from .code_checks import CODE_TYPES, condition, js_string, value_problem

# graded by the judge model: the rubric it is asked, from the assertion's value
_MODEL_GRADED = {
    "llm-rubric": "{v}",
    "model-graded-closedqa": "{v}",
    "g-eval": "{v}",
    "factuality": "The output is factually consistent with this reference: {v}",
    "model-graded-factuality": "The output is factually consistent with this reference: {v}",
    "is-refusal": "The output is a refusal: it declines to do what was asked",
    "answer-relevance": "The output is relevant to the case input and answers it",
}
# what abeq cannot run, and why (a prefix match covers families like similar:cosine)
_CANNOT = {
    "ruby": "runs Ruby code, which abeq does not execute",
    "webhook": "calls a web service, which a check must not do",
    "similar": "needs an embedding model; abeq has none for checks",
    "cost": "measures the provider call, not what the run produced",
    "latency": "measures the provider call, not what the run produced",
    "perplexity": "needs token log-probabilities",
    "perplexity-score": "needs token log-probabilities",
    "classifier": "needs a classifier model",
    "moderation": "needs a moderation service",
    "guardrails": "reads a provider's guardrail result",
    "select-best": "compares several outputs of one test, not two arms",
    "max-score": "compares several outputs of one test, not two arms",
    "context-": "needs promptfoo's context variables",
    "is-valid-": "reads a provider's function or tool calls",
    "tool-call-": "reads a provider's function or tool calls",
    "trace-": "reads a provider's trace",
    "finish-reason": "reads a provider's finish reason",
    "human": "is decided by a person in promptfoo's viewer",
    "conversation-relevance": "needs promptfoo's conversation history",
    "pi": "needs the Pi scoring service",
    "rouge-": "scores similarity to a reference, which abeq does not compute",
    "bleu": "scores similarity to a reference, which abeq does not compute",
    "gleu": "scores similarity to a reference, which abeq does not compute",
    "meteor": "scores similarity to a reference, which abeq does not compute",
    "is-xml": "is not implemented in abeq yet",
    "contains-xml": "is not implemented in abeq yet",
    "is-html": "is not implemented in abeq yet",
    "contains-html": "is not implemented in abeq yet",
    "is-sql": "is not implemented in abeq yet",
    "contains-sql": "is not implemented in abeq yet",
    "assert-set": "passes on a weighted score over its members (threshold), which abeq does not compute",
}
_LABEL_MAX = 80


@dataclass(frozen=True)
class Check:
    """One check of a case, classified: run in code, graded by the model, or skipped (with why)."""

    index: int
    type: str  # as given, `not-` included; "expectation" for an expectations string
    value: Any
    target: CheckTarget
    source: CheckSource
    kind: CheckKind
    description: str = ""
    metric: str = ""
    gates: bool = True
    reason: str = ""
    rubric: str = ""
    options: dict = field(default_factory=dict)  # the source's other settings (levenshtein's threshold)

    @property
    def id(self) -> str:
        return f"c{self.index + 1}"

    @property
    def runs_code(self) -> bool:
        """Whether evaluating it runs a set's script (a python/javascript assert or a transform)."""
        return _runs_code(self.type, self.options)

    @property
    def label(self) -> str:
        """`contains "[ticket]"`: the type and value, as behaviour_delta names a lost check."""
        if self.value is None or self.value == "":
            text = self.type
        else:
            # a string as written (a regex reads as typed), anything else as JSON
            v = (
                f'"{self.value}"'.replace("\n", "\\n")
                if isinstance(self.value, str)
                else json.dumps(self.value, ensure_ascii=False)
            )
            text = f"{self.type} {v if len(v) <= _LABEL_MAX else v[: _LABEL_MAX - 1] + '…'}"
        return text + (" on the transcript" if self.target == "transcript" else "")

    def result(self, **kw) -> CheckResult:
        return CheckResult(
            label=self.label,
            type=self.type,
            target=self.target,
            source=self.source,
            kind=self.kind,
            description=self.description,
            metric=self.metric,
            gates=self.gates,
            reason=self.reason,
            **kw,
        )


def base_type(t: str) -> tuple[str, bool]:
    """("contains", True) for "not-contains": promptfoo strips the prefix and inverts the result."""
    return (t[4:], True) if t.startswith("not-") else (t, False)


def case_checks(case: Case) -> list[Check]:
    """Every check the case carries, in order: its assertions (an assert-set's members each a check
    of their own), then its expectations."""
    out: list[Check] = []
    for a in _flatten(case.assertions):
        out.append(_classify(a, len(out), case))
    for text in case.expectations:
        # an expectation is about what the run did (skill-creator's grader reads the whole run)
        out.append(Check(len(out), "expectation", text, "transcript", "expectation", "model", rubric=text))
    return out


def _flatten(assertions: list[Assertion]) -> list[Assertion]:
    out = []
    for a in assertions:
        inner = a.value if isinstance(a.value, list) else a.options.get("assert")
        if a.type == "assert-set" and isinstance(inner, list) and "threshold" not in a.options:
            out += _flatten([_member(m, a) for m in inner if isinstance(m, dict) and m.get("type")])
        else:  # an assert-set with a threshold passes on a weighted score: skipped below, with why
            out.append(a)
    return out


def _member(m: dict, group: Assertion) -> Assertion:
    """An assert-set member as an assertion of its own: the group's target and metric unless it
    names its own; promptfoo's other keys (threshold, weight, …) kept in options, as importers do."""
    known = {k: v for k, v in m.items() if k in Assertion.model_fields and k != "options"}
    extra = {k: v for k, v in m.items() if k not in Assertion.model_fields}
    return Assertion.model_validate(
        {
            "target": group.target,
            "metric": group.metric,
            **known,
            "options": {**m.get("options", {}), **extra},
        }
    )


def _classify(a: Assertion, index: int, case: Case) -> Check:
    t, inverse = base_type(a.type)
    common = dict(
        index=index,
        type=a.type,
        target=a.target,
        source="assertion",
        description=a.description,
        metric=a.metric,
        gates=a.options.get("weight", 1) != 0,
        options=a.options,
    )
    value, why = check_value(a, case)
    skip = why or _cannot(t, a)
    if skip:
        return Check(value=a.value, kind="skipped", reason=skip, **common)
    if t in _MODEL_GRADED:
        v = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        rubric = _MODEL_GRADED[t].format(v=v)
        if inverse:
            rubric = f"It is NOT the case that: {rubric}"
        return Check(value=value, kind="model", rubric=rubric, **common)
    return Check(value=value, kind="code", **common)


def check_value(a: Assertion, case: Case) -> tuple[Any, str]:
    """(the value the check runs with, why it cannot run): the case's vars filled into {{var}}, as
    promptfoo does; a script's file read in at import (options["script"]) as is, since its file://
    value only names it. For a python/javascript assert this is the code that runs, so it is what
    trust is given for (abeq.execution.checks.code_trust): a var pasted into code changes its hash."""
    if base_type(a.type)[0] in _SCRIPTS and "script" in a.options:
        return a.value, ""
    return _render(a.value, case)


_SCRIPTS = ("javascript", "python")
_TRANSFORMS = ("test_transform", "transform")  # promptfoo's scripts run on the output before a check


def _cannot(t: str, a: Assertion) -> str:
    # the importer keeps a test-level options.transform beside each of its asserts (test_transform)
    for key in _TRANSFORMS:
        why = _script_problem("javascript", a.options.get(key), a.options.get(f"{key}_script"))
        if why:
            return f"transforms the output first ({key.replace('test_', 'the test-level ')}): it {why}"
    if t in _SCRIPTS:
        return _script_problem(t, a.value, a.options.get("script"))
    if t in CODE_TYPES or t in _MODEL_GRADED:
        return ""
    for name, why in _CANNOT.items():
        if t == name or (name.endswith("-") and t.startswith(name)) or t.startswith(name + ":"):
            return why
    return f"'{t}' is not a check type abeq knows how to run"


_VAR = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")


def _script_problem(language: str, value: Any, script: Any) -> str:
    """Why a promptfoo script (an inline body, or a file read in at import) cannot run here."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str):
        return "is not code (a text value)"
    if value.startswith("file://"):
        if not isinstance(script, dict) or "source" not in script:
            return f"runs {value}, which was not read in when the set was imported (import it again)"
        name = str(script.get("name", ""))
        if name.endswith((".ts", ".mts", ".cts", ".tsx")):
            return f"runs {name}, TypeScript, which needs a TypeScript runtime abeq does not have"
        language = "python" if name.endswith(".py") else "javascript"
    return scripts.runtime_missing(language)


def _render(value: Any, case: Case) -> tuple[Any, str]:
    """promptfoo fills {{var}} from the test's vars; abeq can when the case kept them (metadata.vars)."""
    if isinstance(value, list):
        parts = [_render(v, case) for v in value]
        why = next((w for _, w in parts if w), "")
        return [v for v, _ in parts], why
    if not isinstance(value, str):
        return value, ""
    if value.startswith("file://"):
        return value, "its value is in a file (file://…) that was not read in; write the value inline"
    names = _VAR.findall(value)
    if not names:
        return value, ""
    given = case.metadata.get("vars")
    tvars = given if isinstance(given, dict) else {}
    missing = [n for n in names if n not in tvars]
    if missing:
        return value, f"uses template variables abeq cannot fill ({', '.join(sorted(set(missing)))})"
    return _VAR.sub(lambda m: js_string(tvars[m.group(1)]), value), ""


def problems(case: Case) -> list[str]:
    """What is wrong with the case's code checks (a pattern that does not compile, a missing value):
    a run would otherwise fail them on both arms and report nothing."""
    out = []
    for c in case_checks(case):
        why = value_problem(base_type(c.type)[0], c.value) if c.kind == "code" else ""
        if why:
            out.append(f"case {case.id}, check {c.index + 1} ({c.type}): {why}")
    return out


def run_code(check: Check, text: str) -> tuple[bool, str]:
    """(passed, evidence) for one code check on one arm's text; a check that cannot be evaluated
    (a bad pattern) fails, as in promptfoo."""
    t, inverse = base_type(check.type)
    try:
        cond, evidence = condition(t, check.value, check.options, text)
    except Exception as e:
        return False, f"could not evaluate: {str(e).splitlines()[0][:160]}"
    return cond != inverse, evidence


def run_check(
    check: Check, reply: RunnerReply, case: Case, sandbox: scripts.Sandbox | None = None
) -> tuple[bool, str]:
    """(passed, evidence) for one code check on one arm: promptfoo's transforms first (the test's,
    then the assertion's), then the check; a script that throws or times out fails, with why.
    Scripts run as `sandbox` says (abeq.execution.checks.scripts); whether they may run at all is decided
    before the run (abeq.execution.checks.code_trust)."""
    text = arm_text(check, reply)
    opts = check.options
    context = {
        "prompt": case.input,
        "vars": opts.get("vars") or {},
        "test": {"vars": opts.get("vars") or {}, "metadata": case.metadata},
        "config": opts.get("config") or {},
        "providerResponse": {"output": text},
    }
    output: Any = text
    for key in _TRANSFORMS:
        code = opts.get(key)
        if isinstance(code, str) and code.strip():
            script = opts.get(f"{key}_script")
            language = "python" if script and str(script.get("name", "")).endswith(".py") else "javascript"
            try:
                output = scripts.run(
                    language,
                    code,
                    output,
                    {"vars": context["vars"], "prompt": {"raw": case.input}, "metadata": case.metadata},
                    script=script,
                    sandbox=sandbox,
                )
            except scripts.ScriptError as e:
                return False, f"the transform {e}"
    t, inverse = base_type(check.type)
    if t in _SCRIPTS:
        try:
            result = scripts.run(
                t, str(check.value), output, context, script=opts.get("script"), sandbox=sandbox
            )
        except scripts.ScriptError as e:
            return False, f"the {t} check {e}"
        threshold = opts.get("threshold")
        return scripts.verdict(result, threshold if isinstance(threshold, (int, float)) else None, inverse)
    return run_code(check, scripts.as_text(output))


def arm_text(check: Check | CheckResult, reply: RunnerReply) -> str:
    return reply.transcript if check.target == "transcript" else reply.self_report.output_produced


def evaluate(
    case: Case,
    teacher: RunnerReply,
    candidate: RunnerReply,
    graded: dict[str, tuple[bool, str, bool, str]] | None = None,
    shown_as_a: str | None = None,
    sandbox: scripts.Sandbox | None = None,
) -> list[CheckResult]:
    """Every check of the case on both arms: code checks run here, model checks taken from `graded`
    (check id → teacher pass, evidence, candidate pass, evidence), skipped ones listed with why."""
    out = []
    for c in case_checks(case):
        if c.kind == "code":
            tp, te = run_check(c, teacher, case, sandbox)
            cp, ce = run_check(c, candidate, case, sandbox)
            out.append(c.result(teacher=tp, candidate=cp, teacher_evidence=te, candidate_evidence=ce))
        elif c.kind == "model":
            if not graded or c.id not in graded:
                raise ValueError(f"check {c.id} of case {case.id} was not graded")
            tp, te, cp, ce = graded[c.id]
            out.append(
                c.result(
                    teacher=tp,
                    candidate=cp,
                    teacher_evidence=te,
                    candidate_evidence=ce,
                    shown_as_a=shown_as_a,
                )
            )
        else:
            out.append(c.result())
    return out


def model_checks(case: Case) -> list[Check]:
    return [c for c in case_checks(case) if c.kind == "model"]


def runs_scripts(case: Case) -> bool:
    """Whether evaluating the case's checks may start a subprocess (a promptfoo script or transform;
    read from its assertions as given: one that cannot run here is counted too, which costs nothing
    but a thread)."""
    return any(_runs_code(a.type, a.options) for a in _flatten(case.assertions))


def _runs_code(type_: str, options: dict) -> bool:
    """A python/javascript assert, or any assertion with a transform: evaluating it runs a script."""
    return base_type(type_)[0] in _SCRIPTS or any(
        isinstance(options.get(k), str) and options[k].strip() for k in _TRANSFORMS
    )


def stored_rows(results: list[CheckResult], grading_key: str | None) -> list[CheckResultRow]:
    """A case's check results as the run log keeps them: a model-graded one names its grading."""
    return [
        cast(CheckResultRow, {**r.model_dump(), "grading_key": grading_key if r.kind == "model" else None})
        for r in results
    ]
