"""`abeq app`: the review desk (Streamlit), bound to 127.0.0.1 unless told otherwise.

The desk can run commands and read paths on this machine, so it answers only to loopback Host
names (DNS rebinding is refused) and only to a browser that opens the link with this launch's token.
A team's desk requires sign-in instead (abeq.desk.identity): st.login when `[auth]` is in the
secrets Streamlit reads, or the identity header of a proxy at a --trusted-proxy address.
"""

from __future__ import annotations

import os
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..desk import access, identity
from ..errors import InputError
from ._common import bounds_args, db_arg

if TYPE_CHECKING:
    from ..desk.policy import Policy


def register(sub) -> None:
    a = sub.add_parser("app", help="start the review desk (Streamlit) on 127.0.0.1")
    a.add_argument("--port", type=int, default=8501, help="port on the bind address (default 8501)")
    a.add_argument("--address", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    a.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --address: anyone who reaches it with the token can run commands as you",
    )
    a.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a further Host name the desk answers to (e.g. behind a proxy); repeatable",
    )
    a.add_argument(
        "--no-token",
        action="store_true",
        help="no launch token in the link (loopback only unless sign-in is required: any local user "
        "can then drive the desk)",
    )
    a.add_argument(
        "--require-sign-in",
        action="store_true",
        help="refuse to start unless people sign in: [auth] in .streamlit/secrets.toml (st.login) or "
        "--trusted-proxy; without this, sign-in is still required whenever one of them is configured",
    )
    a.add_argument(
        "--trusted-proxy",
        metavar="ADDRESS",
        action="append",
        default=[],
        help="the address (or network) of a sign-in proxy such as oauth2-proxy: its identity header is "
        "honoured from there and nowhere else; repeatable",
    )
    a.add_argument(
        "--identity-header",
        metavar="NAME",
        default=None,
        help="the header the trusted proxy names the signed-in person in "
        f"(default {identity.DEFAULT_HEADER})",
    )
    # what a signed-in reviewer may use: the options of `abeq mcp`, with the same meaning
    bounds_args(a, "a run started on the desk", " once sign-in is on")
    a.add_argument(
        "--allow-trust-code",
        action="store_true",
        help="offer to run a set's code (its python/javascript checks) from the desk once sign-in is on "
        "(it runs as you on this machine: off unless you say so)",
    )
    db_arg(a)
    a.set_defaults(fn=cmd_app)


# the desk's router, shipped inside the package (its pages in desk_pages/ and its Streamlit settings in
# .streamlit/ beside it, which Streamlit reads from the main script's folder): an installed wheel
# serves the same desk as a checkout, from any working directory
DESK = Path(__file__).resolve().parents[1] / "desk" / "app.py"


# in the server's environment once a launch was checked: by `abeq app` before it starts Streamlit, and by
# the clone's app.py on its first run under `streamlit run` (serve_under_streamlit)
LAUNCHED_ENV = "ABEQ_DESK_LAUNCHED"


@dataclass
class Launch:
    """A desk launch, checked: the server's environment, the Host names it answers to, what to say."""

    env: dict[str, str]
    hosts: list[str]
    link: str
    said: list[str] = field(default_factory=list)  # on stdout, after the link
    warning: str | None = None  # on stderr: a desk others can reach


def prepare(args, environ: dict[str, str]) -> Launch:
    """Every rule `abeq app` keeps before a desk serves anyone: loopback unless --allow-remote, a
    launch token unless sign-in (or --no-token on loopback), the sign-in configuration checked, the
    database's absolute path. `environ` is the environment the server starts from."""
    from ..results.store import postgres  # here, not at the top: `abeq --version` opens no store
    from ..results.store.store import db_path

    remote = not access.is_loopback(args.address)
    if remote and not args.allow_remote:
        raise InputError(
            f"--address {args.address} is not a loopback address: anyone who can reach it could run "
            "commands on this machine through the desk",
            hint="Keep the default 127.0.0.1 (use an SSH tunnel to reach it), or pass --allow-remote "
            "to accept that risk; the desk then still asks for the launch token.",
        )
    env = dict(environ)
    sign_in = _sign_in(args, env)
    if remote and args.no_token and not sign_in:
        raise InputError(
            "--no-token with a non-loopback --address would let anyone on the network drive the desk",
            hint="Drop --no-token: open the link with the token that abeq app prints (or require "
            "sign-in: [auth] in .streamlit/secrets.toml, or --trusted-proxy).",
        )
    from ..desk.policy import POLICY_ENV

    bounds = _policy(args, sign_in)
    env[POLICY_ENV] = bounds.to_env()
    # st.login's provider sends the browser back to the desk's root, which would drop the token from
    # the URL: with [auth] configured, signing in is the lock instead
    no_token = args.no_token or isinstance(sign_in, identity.SignIn)
    if no_token:
        env.pop(access.TOKEN_ENV, None)
    token = None if no_token else (env.get(access.TOKEN_ENV) or secrets.token_urlsafe(24))
    if token:
        env[access.TOKEN_ENV] = token  # in the environment, not argv: other users can read argv
    env[LAUNCHED_ENV] = "1"
    # absolute, so the desk and its workers open the database this command was started beside; a
    # postgresql:// URL as it is
    where = db_path(args.db)
    env["ABEQ_DB"] = where if postgres.is_url(where) else str(Path(where).resolve())
    extra_hosts = list(args.allowed_host)
    if isinstance(sign_in, identity.SignIn):  # the address the provider sends the browser back to
        extra_hosts.append(sign_in.host)
    shown = "127.0.0.1" if args.address in ("0.0.0.0", "::") else args.address
    shown = f"[{shown}]" if ":" in shown else shown
    link = f"http://{shown}:{args.port}/" + (f"?{access.TOKEN_PARAM}={token}" if token else "")
    said = []
    if isinstance(sign_in, identity.SignIn):  # sign-in starts and ends at one origin (its state cookie)
        link = sign_in.origin + "/"
        said.append(f"Sign-in required (st.login, configured in {sign_in.path}).")
    elif sign_in:
        said.append(f"Sign-in required: the {sign_in.header} header, from {sign_in.shown()} only.")
    said += _policy_said(bounds)
    warning = None
    if remote:
        warning = (
            f"WARNING: the desk listens on {args.address}, not only on this machine. Anyone with the "
            "link above can run commands here as you."
        )
    return Launch(env, access.allowed_hosts(args.address, extra_hosts), link, said, warning)


def cmd_app(args) -> int:
    launch = prepare(args, dict(os.environ))
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(DESK),
        "--server.port",
        str(args.port),
        "--server.address",
        args.address,
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    for host in launch.hosts:
        cmd += ["--server.allowedHosts", host]
    print(f"abeq review desk: open {launch.link}", flush=True)
    for line in launch.said:
        print(line, flush=True)
    if launch.warning:
        print(launch.warning, file=sys.stderr)
    # Become the Streamlit server rather than wait on it as a child: SIGTERM or SIGINT then reach
    # the server itself (which stops, marking the desk's runs interrupted), and no server is left
    # orphaned on the port when `abeq app` is stopped. The working directory stays the user's: paths
    # typed on the desk are read from where `abeq app` was started.
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, cmd, launch.env)
    return 0  # not reached


def serve_under_streamlit() -> None:
    """The clone's top-level app.py under `streamlit run app.py`: the rules `abeq app` keeps, applied
    once to the server Streamlit started (its address, port and allowed hosts, as configured), then the
    packaged desk. A server `abeq app` started was checked before it started; a server these rules
    refuse shows the refusal and the command to run instead, and serves nothing."""
    import runpy

    import streamlit as st

    if not os.environ.get(LAUNCHED_ENV):
        try:
            launch = _checked_here(st.get_option)
        except InputError as e:
            st.error(f"{e.render()}\n\nStart the desk with `abeq app` (the same desk; it says its options).")
            st.stop()
            return
        os.environ.update(launch.env)  # the token, the database: what `abeq app` gives its server
        print(f"abeq review desk: open {launch.link}", file=sys.stderr, flush=True)
        for line in launch.said:
            print(line, file=sys.stderr, flush=True)
    runpy.run_path(str(DESK), run_name="__main__")


def _checked_here(option) -> Launch:
    """`prepare` for the server `streamlit run` started: its own address and port, no --allow-remote,
    --no-token or sign-in options (they are `abeq app`'s), and Host names no wider than abeq's."""
    import argparse

    address, port = str(option("server.address") or ""), int(option("server.port"))
    args = argparse.Namespace(
        address=address or "0.0.0.0",  # unset: Streamlit listens on every interface
        port=port,
        allow_remote=False,
        allowed_host=[],
        no_token=False,
        require_sign_in=False,
        trusted_proxy=[],
        identity_header=None,
        db=None,
        # no bounds: a desk of one's own, as `abeq app` gives it without --allow-* (desk.policy.OPEN)
        allow_model=[],
        allow_api_base=[],
        allow_commands=False,
        allow_trust_code=False,
    )
    launch = prepare(args, dict(os.environ))
    hosts = list(option("server.allowedHosts") or [])
    wider = [h for h in hosts if h not in launch.hosts] if hosts else ["any Host (no server.allowedHosts)"]
    if wider:
        raise InputError(
            f"this server answers to {', '.join(wider)}: a page on another domain that resolves to this "
            "machine could drive the desk (DNS rebinding)",
            hint="Run it from the clone, where .streamlit/config.toml limits the Host names, or use "
            "`abeq app`; --allowed-host NAME adds a name on purpose.",
        )
    return launch


def _policy(args, sign_in) -> Policy:
    """What a run started on the desk may use: everything on a desk of one's own; once people sign
    in (or when any --allow-* option is given), only what the options allow."""
    from ..desk import policy

    given = args.allow_model or args.allow_api_base or args.allow_commands or args.allow_trust_code
    if not (sign_in or given):
        return policy.OPEN
    bounds = policy.desk_bounds(args.allow_model, args.allow_api_base, args.allow_commands)
    return policy.Policy(bounds, args.allow_trust_code, _operator())


def _operator() -> str:
    """Who started the desk: this account's login name (the Run page shows it beside the bounds)."""
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in the environment nor the password database
        from ..desk.policy import NOT_SAID

        return NOT_SAID


def _policy_said(p: Policy) -> list[str]:
    if not p.bounded:
        return []
    return ["Runs started on the desk may use only: " + "; ".join(p.lines()).replace("`", "") + "."]


def _sign_in(args, env: dict[str, str]) -> identity.SignIn | identity.Proxy | None:
    """How people sign in to this desk, checked before it starts, and told to it in `env`: st.login
    (an [auth] section in the secrets Streamlit reads) or a trusted proxy's header. Neither, with
    --require-sign-in, is refused."""
    for key in (identity.PROXY_ENV, identity.HEADER_ENV, identity.REQUIRE_ENV):
        env.pop(key, None)  # only what this command was told
    # the peer address as the connection gives it: uvicorn would otherwise take it from
    # X-Forwarded-For on a loopback connection (identity.py says why this matters)
    env[identity.PEER_ENV] = ""
    proxy = None
    if args.trusted_proxy:
        nets = identity.parse_networks(",".join(args.trusted_proxy))
        header = identity.check_header_name(args.identity_header or identity.DEFAULT_HEADER)
        proxy = identity.Proxy(nets, header)
        env[identity.PROXY_ENV] = ",".join(str(n) for n in nets)
        env[identity.HEADER_ENV] = header
    elif args.identity_header:
        raise InputError(
            "--identity-header is honoured only from a trusted proxy",
            hint="Add --trusted-proxy ADDRESS: the address your sign-in proxy connects to the desk from.",
        )
    login = identity.sign_in_config(args.port)
    if login is not None:
        import importlib.util

        if importlib.util.find_spec("authlib") is None:
            raise InputError(
                "[auth] is configured, and Streamlit's sign-in needs Authlib, which is not installed",
                path=login.path,
                hint="pip install 'abeq[team]'",
            )
    if args.require_sign_in:
        if login is None and proxy is None:
            raise InputError(
                "--require-sign-in: no way to sign in is configured",
                hint="Add an [auth] section to .streamlit/secrets.toml (here or in your home folder) "
                "for st.login, or pass --trusted-proxy with your sign-in proxy's address.",
            )
        env[identity.REQUIRE_ENV] = "1"
    return login or proxy
