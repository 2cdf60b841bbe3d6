"""YAML read with YAML 1.2's core rules, for promptfoo configs and abeq's own sets alike.

PyYAML implements YAML 1.1, where `Yes`, `No`, `on` and `off` are booleans, `1:30` is 90 and `012`
is octal 10. promptfoo reads its files with js-yaml (YAML 1.2), where they are text — so a test whose
var is `body: Yes` sends "Yes" to the model. abeq's own sets follow the same rules, for the same
reason: a gate answer `response: yes` or a case input `No` is text, not a boolean.

Only `true`/`false` (any of three casings), `null`/`~`/empty, and numbers written as numbers
resolve to non-text. One deliberate difference from js-yaml: a number written with a leading zero
(`012`) stays text — a number never needs the zero, an id or a code does. Dates stay text too.
Integers and floats keep the text they were written as (`.source`), so an input reads as written.
"""

from __future__ import annotations

import functools
import re
from typing import Any

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_INT = re.compile(r"^(?:[-+]?(?:0|[1-9][0-9]*)|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))$"
)


class SourceInt(int):
    """An int that remembers how it was written (`0x1F`, `+3`)."""

    source = ""


class SourceFloat(float):
    """A float that remembers how it was written (`1.10`, `1e5`)."""

    source = ""


def plain(v: Any) -> Any:
    """`v` with its numbers as plain int and float (for values kept in a case)."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, SourceInt):
        return int(v)
    if isinstance(v, SourceFloat):
        return float(v)
    return v


def scalar_text(v: Any) -> str | None:
    """The text a YAML number was written as, or None when `v` is not one."""
    return getattr(v, "source", None) or None


@functools.lru_cache(maxsize=1)
def loader():
    """A SafeLoader with YAML 1.2 core resolvers that refuses a key repeated in one mapping."""
    import yaml

    class DuplicateKeyError(yaml.constructor.ConstructorError):
        first_line = 0  # where the key was first given (1-based)

    class Yaml12Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *defaults` may be overridden by the mapping's own keys
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:
                    continue  # an unhashable key: SafeLoader reports it
                if first is not key_node:
                    err = DuplicateKeyError(None, None, f"key '{key}'", key_node.start_mark)
                    err.first_line = first.start_mark.line + 1
                    raise err
            return super().construct_mapping(node, deep)

        def construct_yaml_int(self, node):
            text = self.construct_scalar(node)
            sign = -1 if text.startswith("-") else 1
            body = text.lstrip("+-")
            base = 16 if body.startswith("0x") else 8 if body.startswith("0o") else 10
            v = SourceInt(sign * int(body[2:] if base != 10 else body, base))
            v.source = text
            return v

        def construct_yaml_float(self, node):
            text = self.construct_scalar(node)
            low = text.lower()
            num = float("nan") if low == ".nan" else float(low.replace(".inf", "inf"))
            v = SourceFloat(num)
            v.source = text
            return v

    Yaml12Loader.yaml_implicit_resolvers = {}  # drop YAML 1.1's, keep the merge key and values below
    for tag, rx, first in (
        ("bool", _BOOL, "tTfF"),
        ("null", _NULL, ["~", "n", "N", ""]),
        ("int", _INT, "-+0123456789"),
        ("float", _FLOAT, "-+.0123456789"),
        ("merge", re.compile(r"^(?:<<)$"), "<"),
    ):
        Yaml12Loader.add_implicit_resolver(f"tag:yaml.org,2002:{tag}", rx, list(first))
    Yaml12Loader.add_constructor("tag:yaml.org,2002:int", Yaml12Loader.construct_yaml_int)
    Yaml12Loader.add_constructor("tag:yaml.org,2002:float", Yaml12Loader.construct_yaml_float)
    # an explicit !!timestamp is still honoured; an unquoted date is text (no implicit resolver)
    return Yaml12Loader


@functools.lru_cache(maxsize=1)
def loader_without_aliases():
    """`loader()` that refuses any alias: abeq's own sets never need one (export writes none), and
    without them no alias bomb can be built. promptfoo configs keep them (`<<: *defaults`)."""
    import yaml

    base: Any = loader()  # a class made at run time: mypy cannot use it as a base otherwise

    class NoAliasLoader(base):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"an alias (*{event.anchor}): abeq's transfer sets take none",
                    event.start_mark,
                )
            return super().compose_node(parent, index)

    return NoAliasLoader


def reads_as_text(value: str) -> bool:
    """True when `value`, written plain (unquoted), reads back as this text under these rules."""
    return not any(rx.match(value) for rx in (_BOOL, _NULL, _INT, _FLOAT))
