"""promptfoo tests as abeq cases (types are supplied later: see imported.py).

- The input is the vars the prompt sends (defaultTest's, overridden by the test's; which ones, and
  what happens to the others, is promptfoo_input's rule): one var is the input itself; several are
  `name: value` lines in the order written. Text is kept as written (YAML 1.2: see yaml12) but for
  the one trailing newline promptfoo takes off. A var listing several texts makes one case per
  combination, as promptfoo runs them. A `file://` var naming a text file is replaced by the file's
  text, trimmed as promptfoo trims it; one naming code (or any file abeq cannot pass as text) keeps
  the reference as written, relative, with a warning.
- Asserts (defaultTest's first) become the case's assertions (promptfoo_asserts); nothing becomes
  an expectation, and nothing is added.
- Tests that share `metadata.conversationId` are the turns of one conversation: they become one
  case whose input lists the turns in order, each labelled `[turn k of n]`, after the vars all the
  turns share; each turn's asserts keep options["turn"]. Tests chained by `options.storeOutputAs`
  are one such conversation too.
- The test's metadata goes to the case's metadata; its other fields (description, threshold,
  options, provider, …) go to metadata["promptfoo"], as given.
- A test run by a red-team attacker provider (`promptfoo:redteam:iterative`, `…:tree`, `…:crescendo`,
  `…:goat`…), its own or defaultTest's, is imported as its seed prompt, and one warning says the
  attacker model's turns are not reproduced.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ._common import (
    MAX_CASES,
    _as_list,
    _declared_type,
    _json_text,
    _kind,
    _need_mapping,
    glob_paths,
    read_referenced,
    slugify,
    unique_id,
)
from .promptfoo_asserts import read_script, to_assertions
from .promptfoo_input import InputRule, Prompts, chain, chat_input, check_names, pointer
from .yaml12 import plain, scalar_text

_TEXT_SUFFIXES = {"", ".txt", ".md", ".markdown", ".json", ".yaml", ".yml", ".csv", ".html", ".xml", ".log"}
_TEST_KEYS = ("vars", "assert", "metadata")
_PROMPT = "\x00prompt"  # the one "var" of a test without vars: the rendered prompt is its input
_VARIABLE = re.compile(r"\{\{\s*[A-Za-z_][\w.]*\s*\}\}")


@dataclass
class Test:
    """One promptfoo test as found, with where it came from and the config its $refs resolve in."""

    label: str
    test: dict
    config: dict
    source: str = ""  # the file a glob brought it from, relative to the config ("" otherwise)


@dataclass
class _Turn:
    label: str
    vars: dict
    assertions: list[dict]
    meta: dict
    extra: dict
    ctype: str | None
    raw_asserts: list = field(default_factory=list)  # as written, to fill {{var}} per combination
    config: dict = field(default_factory=dict)  # where the asserts' $refs resolve
    stores: str = ""  # options.storeOutputAs: the name a later turn reads this turn's reply by
    chain: bool = False  # a turn of a storeOutputAs chain
    unread: dict = field(default_factory=dict)  # var -> the file:// reference abeq could not read, and why


def build_cases(
    tests: list[Test], default: dict, path: str, warnings: list[str], prompts: Prompts | None = None
) -> tuple[list, list]:
    """The cases and their labels, in the order the tests came (a conversation where its first turn was).
    `prompts`: the config's prompts; what the runner gets follows them (see promptfoo_input)."""
    prompts = prompts or Prompts()
    rule = InputRule(prompts, path)
    dvars = default.get("vars") or {}
    dmeta = default.get("metadata") or {}
    for key, val in (("vars", dvars), ("metadata", dmeta)):
        _need_mapping(val, "defaultTest", key, path)
    dextra = {k: v for k, v in default.items() if k not in _TEST_KEYS}
    turns = [_turn(t, default, dvars, dmeta, dextra, path, warnings, prompts) for t in tests]
    chain(turns, warnings)
    # a var any check of the config reads is check material: with no readable template to say which
    # vars the prompt sends, it stays out of every input (a scenario's answers are read test by test)
    checked = set().union(*(check_names(turn.raw_asserts) for turn, _ in turns)) if turns else set()
    groups: dict[str, list[_Turn]] = {}
    order: list[tuple[str, Any]] = []  # ("test", (_Turn, combos)) or ("conversation", id)
    for t, (turn, combos) in zip(tests, turns):
        conv = turn.meta.get("conversationId")
        if conv is not None and str(conv).strip():
            conv = str(conv)
            if len(combos) > 1:
                raise InputError(
                    f"{t.label}: a turn of conversation '{conv}' has list-valued vars ({len(combos)} "
                    "combinations); abeq cannot tell which combination belongs to which turn",
                    path=path,
                    hint="Give each turn single values, or split the combinations into conversations.",
                )
            if conv not in groups:
                groups[conv] = []
                order.append(("conversation", conv))
            turn.vars = combos[0]
            groups[conv].append(turn)
        else:
            order.append(("test", (turn, combos)))
    cases: list[dict] = []
    labels: list[str] = []
    taken: set[str] = set()
    unread_sent: dict[tuple[str, str], str] = {}  # (test, var) -> what: var files that reach an input
    for kind, item in order:
        if kind == "conversation":
            turns_ = groups[item]
            case = _conversation(item, turns_, taken, len(cases), rule, path, checked)
            out = (case.get("metadata") or {}).get("promptfoo", {}).get("vars_not_in_prompt") or {}
            for turn_ in turns_:
                unread_sent.update({(turn_.label, k): w for k, w in turn_.unread.items() if k not in out})
            cases.append(case)
            labels.append(f"{turns_[0].label} … (conversation '{item}', {len(turns_)} turns)")
            if len(turns_) > 1 and not turns_[0].chain:
                warnings.append(
                    f"{', '.join(t.label for t in turns_)} share conversationId '{item}': imported as "
                    f"one conversational case '{case['id']}' with the {len(turns_)} turns in order "
                    "(promptfoo feeds each reply back; abeq's runner gets all the turns at once)"
                )
            continue
        turn, combos = item
        if len(combos) > 1:
            warnings.append(f"{turn.label}: list-valued vars make {len(combos)} combinations; each is a case")
        for k, combo in enumerate(combos):
            inputs, kept_out = _inputs(turn, combo, checked, rule, prompts, path, warnings)
            if _PROMPT not in combo:
                unread_sent.update(
                    {(turn.label, k): w for k, w in turn.unread.items() if k in combo and k not in kept_out}
                )
            asserts = [dict(a) for a in turn.assertions]
            if len(combos) > 1:  # {{var}} in an assert is filled per combination
                asserts = _assertions_for(turn, combo, path, warnings)
            extra = dict(turn.extra)
            if kept_out:
                extra["vars_not_in_prompt"] = kept_out
            for j, inp in enumerate(inputs):
                desc = turn.extra.get("description")
                want = slugify(str(desc)) if desc else ""
                want = want or f"case-{len(cases) + 1}"
                cid = unique_id(want, taken)
                if desc and cid != want and len(combos) == 1 and len(inputs) == 1:
                    if not turn.label.startswith("scenario "):
                        warnings.append(f"{turn.label}: id '{want}' was already taken; named it '{cid}'")
                cases.append(_case(cid, inp, [dict(a) for a in asserts], turn.meta, extra, turn.ctype))
                labels.append(
                    turn.label
                    + (f", combination {k + 1}" if len(combos) > 1 else "")
                    + (f", prompt {j + 1}" if len(inputs) > 1 else "")
                )
    _say_attackers(turns, warnings)
    if unread_sent:  # one line: a missing vars/ folder would otherwise say it once per var per test
        said = [f"{label}: '{k}' is {w}" for (label, k), w in unread_sent.items()]
        warnings.append(
            f"{len(said)} var file{'s' if len(said) > 1 else ''} in the input could not be read; the "
            "input keeps the reference as text: "
            + "; ".join(said[:4])
            + (f"; and {len(said) - 4} more" if len(said) > 4 else "")
        )
    warnings.extend(rule.notes())
    return cases, labels


def attacker(extra: dict) -> str | None:
    """The red-team attacker provider a test runs with (promptfoo:redteam:iterative, …:tree,
    :crescendo, :goat…: a model that rewrites the input over several turns at run time), or None.
    promptfoo's generator sets it as the test's `provider`; older configs as `options.provider`."""
    options = extra.get("options")
    for p in (extra.get("provider"), options.get("provider") if isinstance(options, dict) else None):
        pid = p.get("id") if isinstance(p, dict) else p
        if isinstance(pid, str) and pid.startswith("promptfoo:redteam:"):
            return pid
    return None


def _say_attackers(turns: list, warnings: list[str]) -> None:
    """One line for the tests an attacker model drives: abeq has their seeds, not the turns."""
    found: dict[str, list[str]] = {}
    for turn, _ in turns:
        pid = attacker(turn.extra)
        if pid:
            found.setdefault(pid, []).append(turn.label)
    if not found:
        return
    labels = [label for ls in found.values() for label in ls]
    shown = ", ".join(labels[:5]) + (f" and {len(labels) - 5} more" if len(labels) > 5 else "")
    warnings.append(
        f"{len(labels)} test{'s' if len(labels) > 1 else ''} ({shown}) run with promptfoo's red-team "
        f"attacker provider {', '.join(found)}: at run time an attacker model writes new inputs turn "
        "after turn; abeq imports each test as a seed — the case input is the seed prompt, the "
        "attacker's turns are not reproduced (the provider is kept in metadata.promptfoo)"
    )


def _inputs(turn, combo, checked, rule: InputRule, prompts: Prompts, path, warnings) -> tuple[list, dict]:
    """The input(s) of one combination, and the vars kept out of it."""
    if _PROMPT in combo:  # no vars at all
        return [_prompt_input(p, turn.label, path, warnings) for p in prompts.texts], {}
    keep, out = rule.runner_vars(combo, checked, turn.label)
    if keep:
        inp = input_text(keep)
        if not inp.strip():
            raise InputError(
                f"{turn.label}: the vars the prompt names are empty, so there is no input to give the runner",
                path=path,
            )
        return [inp], out
    # the prompt names none of the vars: promptfoo sends the prompt itself, one case per prompt
    warnings.append(
        f"{turn.label}: the prompt names none of its vars; its input is the prompt as promptfoo renders it"
        + (f" (one case per prompt, {len(prompts.texts)})" if len(prompts.texts) > 1 else "")
    )
    return [_prompt_input(p, turn.label, path, warnings) for p in prompts.texts], out


def _prompt_input(prompt: str, label: str, path: str, warnings: list[str] | None = None) -> str:
    rendered = _render_empty(prompt)
    chat = chat_input(rendered, label, path)
    if chat is not None and warnings is not None:
        warnings.append(
            f"{label}: the prompt is a chat; its user message is the input, and its system message is left "
            "out (abeq's runner gets the document under test as its instructions)"
        )
    return rendered if chat is None else chat


def _turn(t: Test, default, dvars, dmeta, dextra, path, warnings, prompts) -> tuple[_Turn, list[dict]]:
    test, label = t.test, t.label
    tvars = test.get("vars") or {}
    _need_mapping(tvars, label, "vars", path)
    _need_mapping(test.get("metadata") or {}, label, "metadata", path)
    if isinstance(test.get("description"), (dict, list)):
        raise InputError(
            f"{label}: 'description' must be text, not a {_kind(test['description'])}",
            path=path,
            hint="Write the test's description as one line of text.",
        )
    merged = {**dvars, **tvars}
    unread: dict[str, str] = {}
    if not merged and not prompts.texts:
        raise InputError(
            f"{label}: has no vars, and the config has no prompt written out, so there is no input to give "
            "the runner",
            path=path,
            hint="Give the test vars (the vars the prompt names become the input), or write the prompt "
            "under the config's prompts:.",
        )
    meta = {**dmeta, **(test.get("metadata") or {})}
    if t.source:
        meta.setdefault("source_file", t.source)
    extra = {**dextra, **{k: v for k, v in test.items() if k not in _TEST_KEYS}}
    if isinstance(dextra.get("options"), dict) and isinstance(test.get("options"), dict):
        extra["options"] = {**dextra["options"], **test["options"]}
    if merged:
        combos = _combinations(merged, label, path, warnings, unread)
    else:  # promptfoo sends the prompt itself, its {{vars}} rendered empty: that is what the runner gets
        combos = [{_PROMPT: ""}]
        warnings.append(
            f"{label} has no vars: its input is the config's prompt as promptfoo renders it"
            + (f" (one case per prompt, {len(prompts.texts)})" if len(prompts.texts) > 1 else "")
        )
    raw = [*_as_list(default.get("assert")), *_as_list(test.get("assert"))]
    turn = _Turn(label, merged, [], meta, extra, _declared_type(meta, path, label), raw, t.config)
    turn.unread = unread
    turn.assertions = _convert(turn, combos[0], path, warnings)
    return turn, combos


def _convert(turn: _Turn, vars_: dict, path: str, warnings: list[str]) -> list[dict]:
    set_no = [0]
    out = [
        a
        for r in turn.raw_asserts
        for a in to_assertions(r, turn.label, path, vars_, turn.config, warnings, set_no)
    ]
    options = turn.extra.get("options")
    transform = options.get("transform") if isinstance(options, dict) else None
    if transform:  # promptfoo applies a test's options.transform to the output every assert reads
        script: dict = {}
        if isinstance(transform, str) and transform.startswith("file://"):
            read_script(transform, script, "s", path, turn.label, warnings, "transform")
        for a in out:
            a["options"] = {**a["options"], "test_transform": transform}
            if script:
                a["options"]["test_transform_script"] = script["s"]
    return out


def _assertions_for(turn: _Turn, combo: dict, path: str, warnings: list[str]) -> list[dict]:
    quiet: list[str] = []  # the first combination already said what there was to say
    return _convert(turn, combo, path, quiet)


def _case(cid: str, inp: str, asserts: list, meta: dict, extra: dict, ctype: str | None) -> dict:
    case: dict = {"id": cid, "input": inp, "status": "user-added"}
    if asserts:
        case["assertions"] = asserts
    metadata = dict(meta)
    if extra:
        metadata["promptfoo"] = extra
    if metadata:
        case["metadata"] = metadata
    if ctype:
        case["type"] = ctype
    return plain(case)


def _conversation(
    conv: str, turns: list[_Turn], taken: set, n_before: int, rule: InputRule, path: str, checked: set
) -> dict:
    """One case for the turns of a conversation (or a storeOutputAs chain), in order."""
    stored_at = {t.stores: k for k, t in enumerate(turns, start=1) if t.stores}
    sent: list[dict] = []
    kept_out: dict = {}
    for t in turns:
        keep, out = rule.runner_vars(t.vars, checked, t.label)
        kept_out.update(out)
        if not keep and rule.prompts.texts:
            keep = {_PROMPT: _prompt_input(rule.prompts.texts[0], t.label, path)}
        sent.append({k: pointer(v, stored_at) for k, v in keep.items()})
    keys = list(dict.fromkeys(k for v in sent for k in v))
    shared = {k: sent[0][k] for k in keys if all(k in v and v[k] == sent[0][k] for v in sent)}
    if len(shared) == len(keys):
        shared = {}  # every turn says the same thing: each turn shows its vars in full
    # the shared vars are labelled even when there is one, so it does not read as a first message
    parts = ["\n".join(f"{k}: {_text(v)}" for k, v in shared.items())] if shared else []
    for k, v in enumerate(sent, start=1):
        own = {key: x for key, x in v.items() if key not in shared}
        parts.append(f"[turn {k} of {len(turns)}]\n{input_text(own)}")
    asserts = []
    for k, t in enumerate(turns, start=1):
        for a in t.assertions:
            asserts.append({**a, "options": {**a["options"], "turn": k}} if len(turns) > 1 else a)
    cid = unique_id(slugify(conv) or f"conversation-{n_before + 1}", taken)
    extra = dict(turns[0].extra)
    descs = [t.extra.get("description") for t in turns]
    if any(descs) and len(turns) > 1:
        extra["turn_descriptions"] = descs
    if kept_out:
        extra["vars_not_in_prompt"] = kept_out
    meta = {**turns[0].meta, "turns": len(turns)}
    return _case(cid, "\n\n".join(parts), asserts, meta, extra, turns[0].ctype)


def _combinations(merged: dict, label: str, path: str, warnings: list[str], unread: dict) -> list[dict]:
    """promptfoo runs every combination of list-of-text vars; file:// values are read here (`unread`
    gets those that cannot be: whether that matters depends on the var reaching the input)."""
    keys, choices = [], []
    base = Path(path).resolve().parent
    for k, v in merged.items():
        if isinstance(v, str) and v.startswith("file://"):
            options = _var_files(v, base, label, k, unread)
        elif isinstance(v, list) and v and isinstance(v[0], str):
            options = v
        else:
            options = [v]
        keys.append(k)
        choices.append(options)
    combos = [dict(zip(keys, vals)) for vals in itertools.product(*choices)]
    if len(combos) > MAX_CASES:
        raise InputError(f"{label}: its vars make {len(combos)} combinations", path=path)
    return combos


def _var_files(ref: str, base: Path, label: str, key: str, unread: dict) -> list[str]:
    """A file:// var: the text of each file it names; the reference itself, as written, for a file
    abeq cannot pass as text (code promptfoo would run, a missing file). Never an absolute path."""
    rel = ref.removeprefix("file://")
    if any(ch in rel for ch in "*?["):
        paths = glob_paths(base, rel, label)
        refs = [f"file://{p.relative_to(base).as_posix()}" if p.is_relative_to(base) else ref for p in paths]
    else:
        paths, refs = [base / rel], [ref]
    out = []
    for p, written in zip(paths, refs):
        if p.suffix.lower() in _TEXT_SUFFIXES and p.is_file():
            # promptfoo trims a var file's text (renderPrompt: readFileSync(…).trim())
            out.append(read_referenced(p, what=f"var '{key}' file").strip())
            continue
        if not p.exists():
            why = "does not exist"
        elif p.suffix.lower() in (".py", ".js", ".mjs", ".cjs", ".ts"):
            why = "is code promptfoo runs to make the value; abeq does not run it"
        else:
            why = "is not a text file abeq can pass to the runner"
        unread[key] = f"{written}, which {why}"
        out.append(written)
    return out or [ref]


def input_text(vars_: dict) -> str:
    """The case input from vars: the one value, or `name: value` lines in order."""
    vals = {k: _text(v) for k, v in vars_.items()}
    if len(vals) == 1:
        return next(iter(vals.values()))
    return "\n".join(f"{k}: {v}" for k, v in vals.items())


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    return scalar_text(v) or _json_text(v)


def _render_empty(prompt: str) -> str:
    """A prompt rendered with no vars, as Nunjucks renders it: each `{{ name }}` becomes empty."""
    return _VARIABLE.sub("", prompt)
