"""`abeq db`: a store moved between backends (`copy`), shards' stores combined (`merge`)."""

from __future__ import annotations

import sys

from ._common import EXIT_PASS


def register(sub) -> None:
    db = sub.add_parser("db", help="move a store between sqlite and PostgreSQL")
    dsub = db.add_subparsers(dest="db_command", metavar="ACTION", required=True, help="copy or merge")
    cp = dsub.add_parser(
        "copy",
        help="copy every row of one store into an empty one (sqlite file or postgresql:// URL), "
        "then check every run's report rebuilt from the copy is byte-identical",
    )
    cp.add_argument("src", help="the store to copy: a sqlite file or a postgresql://… URL")
    cp.add_argument("dst", help="an empty store: a new sqlite file or an empty PostgreSQL database's URL")
    cp.set_defaults(fn=cmd_copy)
    mg = dsub.add_parser(
        "merge",
        help="combine the stores shards of a run wrote (abeq run --shard k/n, each into its own "
        "sqlite file) into one: each run whole once its every share is in",
    )
    mg.add_argument("dst", help="the store to merge into (created when it does not exist)")
    mg.add_argument("src", nargs="+", help="the shards' stores (sqlite files or postgresql:// URLs)")
    mg.set_defaults(fn=cmd_merge)


def cmd_copy(args) -> int:
    from ..results.reports.record import run_text
    from ..results.store.copy import copy_store
    from ..results.store.store import existing_store, open_store

    src = existing_store(args.src)
    dst = open_store(args.dst)
    try:
        done = copy_store(src, dst, reads_as=run_text)
    finally:
        src.close()
        dst.close()
    rows = sum(done.rows.values())
    print(f"copied {rows} rows ({len(done.rows)} tables) from {src.path} to {dst.path}", file=sys.stderr)
    print(f"verified: the report and record of each of {done.runs_verified} runs are byte-identical")
    return EXIT_PASS


def cmd_merge(args) -> int:
    from ..results.reports.record import end_run
    from ..results.store.merge import Merged, merge_into
    from ..results.store.store import existing_store, open_store

    dst = open_store(args.dst)
    done = Merged()
    try:
        for path in args.src:
            src = existing_store(path)
            try:
                merge_into(dst, src, done, finish=end_run)
            finally:
                src.close()
        runs = sorted(set(done.runs.values()))
        print(
            f"merged {len(args.src)} stores into {dst.path}: runs {runs}, {done.cases} cases brought in; "
            f"finished: {done.finished or 'none (a share is still missing)'}"
        )
    finally:
        dst.close()
    return EXIT_PASS
