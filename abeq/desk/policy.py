"""What a run started on the desk may do: the powers the person who started `abeq app` gave it.

A runner command runs as the desk's user on the server, an API base receives the documents, a
model costs money, and the set's code runs on the server: these are the operator's to give. On a
desk of one's own (nobody signs in, no --allow-* option) the person at the browser is the operator
and chooses all of them, as before. Once people sign in (st.login, or a trusted proxy's header) a
signed-in reviewer is not the operator: a run may use only what `abeq app` was started with, the
options `abeq mcp` takes with the same meaning (abeq.execution.bounds, which checks them) plus
--allow-trust-code. Giving any of those options bounds a desk of one's own as well.

The check is made where the desk starts work (worker.start, worker.resume, the mutation test, the
compare page, confirming a set with its code trusted), from the environment `abeq app` sets: a page
that hides a widget is a courtesy, and a forged session state meets the same refusal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from ..errors import InputError
from ..execution.bounds import Bounds
from ..execution.options import GRANTS
from ..execution.settings import RunSettings
from ..vocab import RunnerModeName
from . import identity

POLICY_ENV = "ABEQ_DESK_POLICY"  # set by `abeq app`: the bounds as JSON
NOT_SAID = "the desk's operator"  # when the login name of who started it cannot be read


@dataclass(frozen=True)
class Policy:
    """The desk's bounds (None: open, a desk of one's own), whether the set's code may be trusted
    from the desk, and who started it."""

    bounds: Bounds | None = None
    trust_code: bool = False
    operator: str = NOT_SAID

    @property
    def bounded(self) -> bool:
        return self.bounds is not None

    def allows_commands(self) -> bool:
        return self.bounds is None or self.bounds.allow_commands

    def allows_trust(self) -> bool:
        return self.bounds is None or self.trust_code

    def api_bases(self) -> tuple[str, ...] | None:
        """The API bases a run may name (None: any)."""
        return None if self.bounds is None else self.bounds.api_bases

    def check(self, settings: RunSettings) -> None:
        """Refuse settings beyond the desk's bounds (an InputError naming the option)."""
        if self.bounds is None:
            return
        self.bounds.check(settings)
        if settings.trust_code:
            self.check_trust()
        # the other grants (running the code outside a sandbox, handing it variables by name) are
        # the command line's alone: the desk offers neither to a signed-in reviewer
        for name in (g for g in GRANTS if g != "trust_code" and getattr(settings, g, None)):
            raise InputError(
                f"--{name.replace('_', '-')}: this desk does not grant it to a signed-in reviewer",
                hint="No option of `abeq app` offers it: the person who runs the set from a terminal "
                "(`abeq run`) gives it there.",
            )

    def check_stored(self, run: Mapping) -> None:
        """Refuse resuming a stored run (a row of the run log) whose settings go beyond the bounds: a
        database may hold runs started anywhere, with any command or model."""
        from ..api import run_settings
        from ..execution.config import RunConfig

        stored = run_settings(run)
        if self.bounds is None or not stored:  # (a run without settings: resume_run refuses it)
            return
        cfg = RunConfig.from_settings(stored)
        self.check(
            RunSettings(
                runner_model=cfg.runner.name,
                judge_model=cfg.judge.name,
                api_base=cfg.runner.api_base or None,
                judge_api_base=cfg.judge.api_base or None,
                runner_mode=cast(RunnerModeName, cfg.mode.kind),  # one of RUNNER_MODES, as stored
                runner_cmd=cfg.mode.command or None,
            )
        )

    def check_path(self, path: str, option: str = "Path") -> None:
        """Refuse a path a signed-in reviewer typed outside the project the desk was started in (its
        nearest folder holding a .git): the desk's user can read more than the desk should show."""
        if self.bounds is not None:
            self.bounds.path(path, option)

    def check_model(self, name: str | None, api_base: str | None, option: str = "--judge-model") -> None:
        """Refuse one model (and its API base) beyond the desk's bounds."""
        if self.bounds is not None:
            self.bounds.model(name, option)
            self.bounds.api_base(api_base, "--api-base")

    def check_trust(self) -> None:
        if not self.allows_trust():
            raise InputError(
                "--trust-code: this desk does not let a signed-in reviewer run a set's code",
                hint=f"The set's code runs as {self.operator} on the server: only a person who starts "
                "`abeq app --allow-trust-code` offers it, or trusts the code themselves with "
                "`abeq check-set --confirm --trust-code`.",
            )

    def lines(self) -> list[str]:
        """What the Run page says about this desk's bounds (Markdown; [] for a desk of one's own)."""
        b = self.bounds
        if b is None:
            return []
        bases = ", ".join(f"`{u}`" for u in b.api_bases) or "none (hosted APIs only)"
        return [
            f"Models: {', '.join(f'`{m}`' for m in b.allowed_models())}",
            f"API bases: {bases}",
            "Runner commands (any agent CLI): " + ("allowed" if b.allow_commands else "not allowed"),
            "Running a set's code: " + ("offered" if self.trust_code else "not offered"),
        ]

    def to_env(self) -> str:
        b = self.bounds
        return json.dumps(
            {
                "bounded": b is not None,
                "models": list(b.models) if b else [],
                "api_bases": list(b.api_bases) if b else [],
                "commands": bool(b and b.allow_commands),
                "trust_code": self.trust_code,
                "operator": self.operator,
            }
        )


OPEN = Policy()


def desk_bounds(models=(), api_bases=(), allow_commands: bool = False) -> Bounds:
    """Bounds worded for the desk (its messages name `abeq app` and a signed-in reviewer)."""
    return Bounds.started_in(  # files: the project `abeq app` was started in, as `abeq mcp` reads
        models=tuple(models),
        api_bases=tuple(api_bases),
        allow_commands=allow_commands,
        command="abeq app",
        server="desk",
        asker="a signed-in reviewer",
    )


CLOSED = Policy(desk_bounds())  # signed in, with nothing allowed


def current(who: str | None = None, env: Mapping[str, str] | None = None) -> Policy:
    """This desk's policy: the one `abeq app` set; without one (a server started otherwise), open
    only when nobody signs in, else nothing beyond the embedded model. `who`: the person signed in
    to the session asking, if any."""
    env = os.environ if env is None else env
    raw = env.get(POLICY_ENV, "").strip()
    if raw:
        policy = _load(raw)
        return CLOSED if who and not policy.bounded else policy  # signed in: never the open desk
    signs_in = who or identity.proxy_from(env) is not None or env.get(identity.REQUIRE_ENV) == "1"
    return CLOSED if signs_in else OPEN


def _load(raw: str) -> Policy:
    """The policy from its JSON; anything unreadable is the closed policy (fail closed)."""
    try:
        d = json.loads(raw)
        if not d.get("bounded"):
            return OPEN
        bounds = desk_bounds(
            [str(m) for m in d.get("models") or []],
            [str(u) for u in d.get("api_bases") or []],
            d.get("commands") is True,
        )
        return Policy(bounds, d.get("trust_code") is True, str(d.get("operator") or NOT_SAID))
    except (ValueError, TypeError, AttributeError):
        return CLOSED
