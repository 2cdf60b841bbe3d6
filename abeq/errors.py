"""The errors a user should read. The CLI prints them in a line or two and exits with `exit_code`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class AbeqError(Exception):
    """Base of every error abeq reports to a user."""

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, hint: str | None = None):
        self.message = message
        self.path = path
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        head = f"{self.path}: {self.message}" if self.path else self.message
        return f"{head}\n  {self.hint}" if self.hint else head


class InputError(AbeqError):
    """A file or argument the user gave is missing, malformed or refused."""


class NotConfirmedError(InputError):
    """A run was asked for before a person confirmed the transfer set."""


class ThinSetError(InputError):
    """The transfer set is below the minimum and the reviewer did not accept a thin set."""


class ReviewConflict(InputError):
    """Another reviewer's action took effect on a case after this reviewer read it; nothing was
    written (abeq.results.review.reviewing words the message: who did what, when)."""

    def __init__(
        self,
        current: Mapping[str, Any],
        message: str = "another reviewer acted on this case since you read it",
    ):
        self.current = current
        super().__init__(
            message, hint="Save again choosing Replace to put yours in its place, or keep theirs."
        )


class ModelCallError(AbeqError):
    """A model call failed after its retries; recorded as an error for that case, never a verdict."""

    exit_code = 3
    usage: dict[str, Any] = {}

    def spent(self, prompt_tokens: int, completion_tokens: int, cost: float | None) -> ModelCallError:
        """Attach what the failed attempts consumed (invalid replies are billed too)."""
        self.usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "cost": cost if (prompt_tokens or completion_tokens) else 0.0,
        }
        return self


class MissingTypesError(InputError):
    """Imported cases whose source format has no case type; a person must supply them."""

    def __init__(
        self, message: str, *, case_ids: list[str], path: str | None = None, hint: str | None = None
    ):
        self.case_ids = list(case_ids)
        super().__init__(message, path=path, hint=hint)


def json_problem(e: json.JSONDecodeError, *, position: bool = True) -> str:
    """json's message for any message about bad JSON, never "... starting at at character 12"
    (json's msg ends in " at" where it meant to append the position). With the position:
    "Unterminated string starting at line 1, column 13 (character 12)"; without (the caller names
    the place itself): "Unterminated string starting here"."""
    if not position:
        return e.msg[:-3] + " here" if e.msg.endswith(" at") else e.msg
    return f"{e.msg.removesuffix(' at')} at line {e.lineno}, column {e.colno} (character {e.pos})"
