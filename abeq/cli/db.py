"""`abeq db`: a store moved between backends (`copy`)."""

from __future__ import annotations

import sys

from ._common import EXIT_PASS


def register(sub) -> None:
    db = sub.add_parser("db", help="move a store between sqlite and PostgreSQL")
    dsub = db.add_subparsers(dest="db_command", metavar="ACTION", required=True, help="copy")
    cp = dsub.add_parser(
        "copy",
        help="copy every row of one store into an empty one (sqlite file or postgresql:// URL), "
        "then check every run's report rebuilt from the copy is byte-identical",
    )
    cp.add_argument("src", help="the store to copy: a sqlite file or a postgresql://… URL")
    cp.add_argument("dst", help="an empty store: a new sqlite file or an empty PostgreSQL database's URL")
    cp.set_defaults(fn=cmd_copy)


def cmd_copy(args) -> int:
    from ..results.copy import copy_store
    from ..results.store import existing_store, open_store

    src = existing_store(args.src)
    dst = open_store(args.dst)
    try:
        done = copy_store(src, dst)
    finally:
        src.close()
        dst.close()
    rows = sum(done.rows.values())
    print(f"copied {rows} rows ({len(done.rows)} tables) from {src.path} to {dst.path}", file=sys.stderr)
    print(f"verified: the report and record of each of {done.runs_verified} runs are byte-identical")
    return EXIT_PASS
