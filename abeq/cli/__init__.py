"""The `abeq` command line: one module per command group over a shared `_common`.

Heavy imports stay inside the commands so `abeq --help` is instant.
"""

from __future__ import annotations

import argparse
import sys

from . import agents, app, calibrate, compare, db, gate, mutate, results, run, sets
from ._common import EXIT_BROKEN_PIPE, EXIT_CRASHED, EXIT_INTERRUPTED, EXIT_PASS, check_model, write_output

__all__ = ["main", "build_parser", "check_model", "write_output"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="abeq",
        description="Does a rewritten prompt, skill or instruction file still "
        "make the model do what the original did? A/B behavioural-equivalence runs.",
        epilog="Exit codes, for every command: 0 pass, 1 a case regressed (or a gate's condition failed), "
        "2 bad input or usage, 3 incomplete (a case errored after retries), 4 an unexpected error (a bug; "
        "the one line printed names the crash log), 130 interrupted (the same command resumes), "
        "141 the output's reader stopped reading.",
    )
    from .. import __version__

    p.add_argument("--version", action="version", version=f"abeq {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for group in (run, mutate, results, sets, app, compare, calibrate, gate, agents, db):
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """`abeq …`: the exit code (0 pass, 1 regressed, 2 bad input, 3 incomplete, 4 crashed,
    130 interrupted, 141 the output's reader went away)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "fn", None):
        parser.print_help()
        return EXIT_PASS
    from ..untrusted import TermSafe

    # case ids, reasons and runner output reach these messages: a terminal escape in them must not act
    # (stdout only on a terminal: piped, it carries data such as a CSV, meant to be written as is)
    streams = sys.stdout, sys.stderr
    sys.stderr = TermSafe(sys.stderr)
    if sys.stdout.isatty():
        sys.stdout = TermSafe(sys.stdout)
    import os

    from ..files import DB_SHARED_ENV

    before = os.environ.get(DB_SHARED_ENV)
    if getattr(args, "db_shared", False):  # every store this command opens (the desk's too) may be shared
        os.environ[DB_SHARED_ENV] = "1"
    try:
        return _run(args, sys.argv[1:] if argv is None else argv)
    finally:
        sys.stdout, sys.stderr = streams
        if before is None:
            os.environ.pop(DB_SHARED_ENV, None)
        else:
            os.environ[DB_SHARED_ENV] = before


def _run(args, argv: list[str]) -> int:
    from ..errors import AbeqError

    try:
        return args.fn(args)
    except AbeqError as e:
        print(f"abeq: {e.render()}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("\nabeq: interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the output's reader stopped reading (`abeq history | head -1`): no crash
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush then succeeds
        return EXIT_BROKEN_PIPE
    except Exception as e:  # a bug, not a verdict: never exit 1 ("a case regressed")
        from ..results.store.store import database_problem

        problem = database_problem(e, getattr(args, "db", None))  # a full disk, a damaged database
        if problem is not None:  # the file's or the disk's doing, not a bug
            print(f"abeq: {problem.render()}", file=sys.stderr)
            return problem.exit_code
        from ._crash import report

        report(e, argv)
        return EXIT_CRASHED


if __name__ == "__main__":
    sys.exit(main())
