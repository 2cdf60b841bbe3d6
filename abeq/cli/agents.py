"""`abeq mcp` (abeq's tools for an agent, over the Model Context Protocol) and `abeq skill install`
(a skill telling an agent how to gate its own rewrite with them). The logic is in abeq.agents."""

from __future__ import annotations

import sys

from ._common import EXIT_PASS, bounded, bounds_args, db_arg


def register(sub) -> None:
    m = sub.add_parser(
        "mcp",
        help="serve abeq's tools to an agent over the Model Context Protocol (stdio, or HTTP on loopback)",
        description="Tools: check_set, run, run_status, report, mutate, history, export, compare. A tool "
        "call reads only under the project root this is started in (the nearest folder above holding a "
        ".git), uses only the models and API bases allowed here, never confirms a set and never lets the "
        "set's code run. Exit codes: 0 stopped, 2 bad input.",
    )
    bounds_args(m)
    db_arg(m)
    m.add_argument(
        "--http",
        type=bounded(int, 1, 65535),
        default=None,
        metavar="PORT",
        help="serve streamable HTTP on 127.0.0.1:PORT instead of stdio; requests need the token printed at "
        "start-up ($ABEQ_MCP_TOKEN to set it)",
    )
    m.set_defaults(fn=cmd_mcp)

    s = sub.add_parser("skill", help="install the skill that gates an agent's rewrite with abeq")
    ssub = s.add_subparsers(dest="skill_command", metavar="ACTION", required=True, help="install")
    i = ssub.add_parser(
        "install",
        help="write the abeq-gate skill folder (SKILL.md and references/) where an agent finds it",
        description="--claude: .claude/skills/ in this project; --codex: $CODEX_HOME/skills (~/.codex); "
        "--dir DIR: DIR. --mcp also registers `abeq mcp` in that agent's configuration (.mcp.json in this "
        "project; [mcp_servers.abeq] in $CODEX_HOME/config.toml).",
    )
    where = i.add_mutually_exclusive_group(required=True)
    where.add_argument("--claude", action="store_true", help="for Claude Code, in this project")
    where.add_argument("--codex", action="store_true", help="for Codex, in $CODEX_HOME (default ~/.codex)")
    where.add_argument("--dir", default=None, help="into this folder (the skill goes in DIR/abeq-gate)")
    i.add_argument("--mcp", action="store_true", help="also register `abeq mcp` with the agent")
    bounds_args(i)
    i.add_argument(
        "--db",
        default=None,
        metavar="PATH_OR_URL",
        help="the store the registered server uses (its --db): a team's PostgreSQL URL without a password, "
        "or a sqlite file; an entry's own env (ABEQ_DB) is kept either way",
    )
    i.add_argument("--force", action="store_true", help="replace an abeq-gate skill already there")
    i.set_defaults(fn=cmd_skill_install)


def _bounds(args):
    from ..execution.bounds import Bounds

    return Bounds.started_in(
        models=tuple(args.allow_model),
        api_bases=tuple(args.allow_api_base),
        allow_commands=args.allow_commands,
        db=args.db,
    )


def cmd_mcp(args) -> int:
    bounds = _bounds(args)
    try:
        import mcp  # noqa: F401
    except ImportError:
        from ..errors import InputError

        hint = "pip install 'mcp==2.3.0' (abeq depends on it)"
        raise InputError("the MCP SDK is not installed", hint=hint) from None
    from ..agents import server

    models = ", ".join(bounds.models) or "local/smollm2"
    print(f"abeq mcp: reading under {bounds.root}; models: {models}", file=sys.stderr)
    if args.http:
        server.serve_http(bounds, args.http)
    else:
        server.serve_stdio(bounds)
    return EXIT_PASS


def cmd_skill_install(args) -> int:
    from ..agents.skill import install

    for line in install(
        agent="claude" if args.claude else "codex" if args.codex else None,
        folder=args.dir,
        mcp=args.mcp,
        server_args=_server_args(args),
        force=args.force,
    ):
        print(line, file=sys.stderr)
    return EXIT_PASS


def _server_args(args) -> list[str]:
    out = ["mcp"]
    for m in args.allow_model:
        out += ["--allow-model", m]
    for u in args.allow_api_base:
        out += ["--allow-api-base", u]
    if getattr(args, "db", None):
        from ..errors import InputError
        from ..results.store.postgres import is_url, secrets

        if is_url(args.db) and secrets(args.db):
            raise InputError(
                "--db holds a password: it would be written into the agent's configuration",
                hint="Keep it out of the URL (a ~/.pgpass file or PGPASSWORD), or set ABEQ_DB in the "
                "entry's env yourself.",
            )
        out += ["--db", args.db]
    return out + (["--allow-commands"] if args.allow_commands else [])
