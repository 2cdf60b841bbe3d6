"""`abeq app`: the review desk (Streamlit), bound to 127.0.0.1 unless told otherwise."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def register(sub) -> None:
    a = sub.add_parser("app", help="start the review desk (Streamlit) on 127.0.0.1")
    a.add_argument("--port", type=int, default=8501, help="port on the bind address (default 8501)")
    a.add_argument("--address", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    a.add_argument("--db", default=None, help="sqlite file (default: $ABEQ_DB or ./abeq.db)")
    a.set_defaults(fn=cmd_app)


def cmd_app(args) -> int:
    app = Path(__file__).resolve().parents[2] / "app.py"
    if not app.exists():
        from ..errors import InputError

        raise InputError(
            "the review desk (app.py) is not in this installation", hint="Run from a checkout of abeq."
        )
    env = dict(os.environ)
    if args.db:
        env["ABEQ_DB"] = str(Path(args.db).resolve())
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app),
        "--server.port",
        str(args.port),
        "--server.address",
        args.address,
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    # Become the Streamlit server rather than wait on it as a child: SIGTERM or SIGINT then reach
    # the server itself (which stops, marking the desk's runs interrupted), and no server is left
    # orphaned on the port when `abeq app` is stopped.
    os.chdir(app.parent)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, cmd, env)
    return 0  # not reached
