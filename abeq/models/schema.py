"""The JSON schema a model is asked to follow, derived from a pydantic class (never written by hand)."""

from __future__ import annotations

import functools
import json

_NOT_PORTABLE = ("minLength", "maxLength", "minItems", "maxItems", "default")


def _strip(schema, keys):
    if isinstance(schema, dict):
        return {k: _strip(v, keys) for k, v in schema.items() if k not in keys}
    if isinstance(schema, list):
        return [_strip(x, keys) for x in schema]
    return schema


def response_format(model_cls, *, portable: bool) -> dict:
    """The response_format for a call, derived from the pydantic class.

    Hosted providers' strict modes reject some length keywords, so those are left out for them
    (pydantic still enforces every rule on the reply); local grammars get the full schema.
    """
    schema = json.loads(_schema_json(model_cls, portable))  # each call gets its own copy to change
    return {
        "type": "json_schema",
        "json_schema": {"name": model_cls.__name__, "schema": schema, "strict": True},
    }


@functools.cache
def _schema_json(model_cls, portable: bool) -> str:
    # model_json_schema rebuilds the schema every time (~2 ms, half of abeq's CPU per call when it
    # ran per call); a class's schema does not change while the process runs, so derive it once.
    if not portable and hasattr(model_cls, "grammar_schema"):
        schema = model_cls.grammar_schema()  # tighter, for constrained decoding (see JudgeReply)
    else:
        schema = model_cls.model_json_schema()
    schema = _strip(schema, _NOT_PORTABLE) if portable else schema
    _close(schema)
    return json.dumps(schema)


def _close(schema) -> None:
    """Strict JSON-schema modes want additionalProperties false and every property required."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" and "properties" in schema:
            schema["additionalProperties"] = False
            schema["required"] = list(schema["properties"])
        for v in schema.values():
            _close(v)
    elif isinstance(schema, list):
        for x in schema:
            _close(x)
