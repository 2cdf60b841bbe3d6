"""What a promptfoo test sends the runner: the vars its prompt names, never a var only a check reads.

promptfoo renders the prompt template with the test's vars; a var the template does not name never
reaches the model, however many checks read it (`equals: '{{category}}'`). So the case input is:

- when every prompt of the config is readable here (inline, `raw`, or a local text, Markdown,
  JSON or YAML file) and is a template: the vars the templates name, in the order written; the
  other vars stay with the checks (rendered into their values) and in
  `metadata.promptfoo.vars_not_in_prompt`. A test whose vars the prompt does not name at all
  gets the prompt itself, rendered as promptfoo renders it (one case per prompt);
- when a prompt is made by code, kept elsewhere or missing, or is static text naming no var (a
  config whose prompt is the document under test itself): every var except those a check of the
  config reads (`{{name}}` in an assert, `vars.name` in its code) and those named as a reference
  answer (`expected_output`, `ground_truth`, `ideal`, `target`, `label`, …: datasets.REFERENCE_NAMES);
  a test whose vars are all kept out is refused, since what the model would be sent cannot be told.

As promptfoo does before rendering: a var whose text names another var (`{{topic}}`) has it filled
in, and one trailing newline is taken off every text var (a YAML block scalar ends in one).

Refused by name, since the runner takes text only: a var the prompt sends that is an image or a
video (a `file://` picture, a `data:image/…` URI or a picture's URL), and a chat prompt (a JSON
list of messages) with earlier turns when it is the input itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ._common import slugify
from .datasets import REFERENCE_NAMES

_BLOCK = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}", re.S)
_STRING = re.compile(r"'[^']*'|\"[^\"]*\"")
_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")
_VARREF = re.compile(r"\{\{\s*(\w+)\s*\}\}")  # promptfoo's resolveVariables pattern
_CODE_VARS = re.compile(r"vars(?:\.(\w+)|\[\s*['\"](\w+)['\"]\s*\]|\.get\(\s*['\"](\w+)['\"])")
_MEDIA = tuple(
    ".jpg .jpeg .png .gif .bmp .webp .svg .mp4 .webm .ogg .mov .avi .wmv .mkv .m4v".split()
)  # promptfoo's image and video files, sent as base64 pictures


@dataclass
class Prompts:
    """The config's prompts as text, and those whose text cannot be read here (as written)."""

    texts: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    @property
    def known(self) -> bool:
        """Every prompt is readable and at least one is a template. A prompt naming no var at all is
        static text (often the document under test itself): it cannot say which vars matter."""
        return not self.unknown and any(_BLOCK.search(p) for p in self.texts)

    @property
    def names(self) -> set[str]:
        """Every name the templates use inside {{ … }} or {% … %} (keywords too: harmless)."""
        out: set[str] = set()
        for p in self.texts:
            for m in _BLOCK.finditer(p):
                out |= set(_NAME.findall(_STRING.sub("", m.group(1) or m.group(2) or "")))
        return out


def check_names(asserts: list) -> set[str]:
    """The var names the checks read: `{{name}}` in any text of an assert, `vars.name` in its code."""
    out: set[str] = set()
    stack: list[Any] = list(asserts)
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, str):
            for m in _BLOCK.finditer(x):
                out |= set(_NAME.findall(_STRING.sub("", m.group(1) or m.group(2) or "")))
            out |= {a or b or c for a, b, c in _CODE_VARS.findall(x)}
    return out


def resolve(vars_: dict) -> dict:
    """promptfoo's resolveVariables: a text var naming another var (`{{topic}}`) gets its value,
    at most five rounds; then one trailing newline off every text var (renderPrompt does both)."""
    out = dict(vars_)
    for _ in range(5):
        changed = False
        for k, v in out.items():
            if not isinstance(v, str):
                continue
            m = _VARREF.search(v)
            if m and m.group(1) in out and m.group(1) != k:
                sub = out[m.group(1)]
                out[k] = v.replace(m.group(0), sub if isinstance(sub, str) else json.dumps(sub), 1)
                changed = True
        if not changed:
            break
    return {k: v.removesuffix("\n") if isinstance(v, str) else v for k, v in out.items()}


@dataclass
class InputRule:
    """Which vars of a test the runner gets, with what was kept out (said once per import)."""

    prompts: Prompts
    path: str
    not_in_prompt: set[str] = field(default_factory=set)
    read_by_checks: set[str] = field(default_factory=set)

    def runner_vars(self, vars_: dict, checked: set[str], label: str) -> tuple[dict, dict]:
        """(the vars the runner gets, the vars kept out of the input). Empty runner vars with a known
        prompt mean the prompt itself is the input."""
        vals = resolve(vars_)
        if self.prompts.known:
            named = self.prompts.names
            keep = {k: v for k, v in vals.items() if k in named}
            self.not_in_prompt |= set(vals) - set(keep)
        else:
            # with no template to say what is sent, a var named as a reference answer stays out too
            keep = {k: v for k, v in vals.items() if k not in checked and k not in REFERENCE_NAMES}
            self.read_by_checks |= set(vals) - set(keep)
            if vals and not keep:
                raise InputError(
                    f"{label}: every var ({', '.join(vals)}) is read by a check or named as a reference "
                    "answer, and the config's prompt "
                    f"does not say which vars it sends ({self._why_unknown()}), so what promptfoo would "
                    "send the model cannot be told; abeq never puts a value only a check reads into the "
                    "input",
                    path=self.path,
                    hint="Import the promptfoo config whose prompts: name the vars (with the prompt files "
                    "beside it), or write the prompt inline under prompts:.",
                )
        for k, v in keep.items():
            _refuse_media(k, v, label, self.path)
        return keep, {k: v for k, v in vals.items() if k not in keep}

    def _why_unknown(self) -> str:
        if self.prompts.unknown:
            return "not readable: " + ", ".join(self.prompts.unknown)
        if self.prompts.texts:
            return "it names no var: static text, such as the document itself"
        return "the file has no prompts:"

    def notes(self) -> list[str]:
        out = []
        if self.not_in_prompt:
            out.append(
                "vars the prompt does not name stay out of the input, as promptfoo never sends them: "
                + ", ".join(sorted(self.not_in_prompt))
                + " (the checks that read them have their values; each case keeps them in "
                "metadata.promptfoo.vars_not_in_prompt)"
            )
        if self.read_by_checks:
            out.append(
                f"the config's prompt does not say which vars it sends ({self._why_unknown()}): the vars "
                f"checks read or named as reference answers ({', '.join(sorted(self.read_by_checks))}) "
                "are left out of the input, and "
                "every other var is sent; import the config with its prompt files to have exactly what "
                "the prompt names"
            )
        return out


def _refuse_media(key: str, value: Any, label: str, path: str) -> None:
    if not isinstance(value, str):
        return
    v = value.strip()
    low = v.lower().split("?", 1)[0]
    media = v.startswith("data:image/") or v.startswith("data:video/")
    media = media or (v.startswith(("file://", "http://", "https://")) and low.endswith(_MEDIA))
    if media:
        shown = v if len(v) <= 60 else v[:57] + "…"
        raise InputError(
            f"{label}: var '{key}' is an image or video ({shown}); promptfoo sends it to a vision model as "
            "a picture, and abeq's runner takes text only",
            path=path,
            hint="Leave the tests with pictures out of the file you import (or describe the picture in a "
            "text var); a case cannot carry an image.",
        )


def _chat_messages(prompt: str, label: str, path: str) -> Any:
    """The prompt's messages as promptfoo's parseChatPrompt reads them, by content whatever the file's
    extension: text starting with `- role:` is YAML, anything else is tried as JSON (None: text)."""
    if prompt.strip().startswith("- role:"):
        import yaml

        from .yaml12 import loader

        try:
            return yaml.load(prompt, Loader=loader())  # noqa: S506 - a SafeLoader (YAML 1.2 resolvers)
        except yaml.YAMLError as e:
            raise InputError(
                f"{label}: the prompt starts with '- role:', so promptfoo reads it as a chat in YAML, "
                f"and it is not valid YAML ({str(e).splitlines()[0]})",
                path=path,
                hint="Fix the prompt file's YAML (promptfoo refuses it too).",
            ) from None
    try:
        return json.loads(prompt)
    except ValueError:
        return None


def chat_input(prompt: str, label: str, path: str) -> str | None:
    """A chat prompt (a list of messages, JSON or `- role:` YAML) as the input: its one user message,
    when the others are system messages (the document under test stands where they were). None for
    a text prompt. A chat with earlier turns is refused: a case input is one user message; so is a
    user message that is empty once rendered."""
    msgs = _chat_messages(prompt, label, path)
    if not isinstance(msgs, list) or not msgs or not all(isinstance(m, dict) and "role" in m for m in msgs):
        return None
    users = [m for m in msgs if m.get("role") == "user"]
    others = {str(m.get("role")) for m in msgs if m.get("role") not in ("user", "system")}
    if len(users) != 1 or others or not isinstance(users[0].get("content"), str):
        raise InputError(
            f"{label}: the prompt is a chat of {len(msgs)} messages (roles: "
            f"{', '.join(str(m.get('role')) for m in msgs)}) and it is the input itself; abeq's case input "
            "is one user message",
            path=path,
            hint="Give the test vars the chat names (they become the input), or write the turns as tests "
            "sharing metadata.conversationId (one conversational case).",
        )
    if not users[0]["content"].strip():
        raise InputError(
            f"{label}: the prompt is a chat whose user message is empty once the test's vars are filled "
            "in, so there is no input to give the runner",
            path=path,
            hint="Give the test the vars its user message names, or leave the test out.",
        )
    return str(users[0]["content"])


def chain(turns: list, warnings: list[str]) -> None:
    """Tests linked by `options.storeOutputAs` (a later test's var names an earlier test's output)
    are one conversation, as promptfoo runs them in order; each `{{name}}` becomes a pointer to the
    reply of the turn that stored it."""
    stored: dict[str, int] = {}  # output name -> index of the turn that stores it
    group: dict[int, int] = {}  # turn index -> index of its chain's first turn
    for i, (turn, combos) in enumerate(turns):
        refs = {n for v in combos[0].values() if isinstance(v, str) for n in _VARREF.findall(v)} - set(
            combos[0]
        )
        for name in sorted(refs & stored.keys()):
            root = group.get(stored[name], stored[name])
            group[stored[name]] = root
            group[i] = root
        opts = turn.extra.get("options")
        store = opts.get("storeOutputAs") if isinstance(opts, dict) else None
        if isinstance(store, str) and store.strip():
            stored[store] = i
            turn.stores = store
    roots = sorted(set(group.values()))
    for root in roots:
        members = [i for i in sorted(group) if group[i] == root]
        conv = f"chain-{slugify(turns[root][0].stores or 'output') or 'output'}"
        for i in members:
            turns[i][0].meta.setdefault("conversationId", conv)
            turns[i][0].chain = True
        names = sorted({turns[i][0].stores for i in members if turns[i][0].stores})
        warnings.append(
            f"{', '.join(turns[i][0].label for i in members)} chain through storeOutputAs "
            f"({', '.join(names)}): imported as one conversational case with the turns in order; "
            'a later turn\'s {{name}} reads "[your reply to turn k]" (promptfoo feeds the reply in; '
            "abeq's runner gets all the turns at once)"
        )


def pointer(v: Any, stored_at: dict[str, int]) -> Any:
    """`{{name}}` of an output stored earlier in the chain, as a pointer to that turn's reply."""
    if not isinstance(v, str) or not stored_at:
        return v

    def sub(m: re.Match) -> str:
        k = stored_at.get(m.group(1))
        return f"[your reply to turn {k}]" if k else m.group(0)

    return _VARREF.sub(sub, v)
