"""What every command shares: option types, model options, output files, the database, exit codes.

Nothing heavy is imported at module level, so `abeq --help` stays instant.
"""

from __future__ import annotations

import argparse
import os
import sys

EXIT_PASS, EXIT_REGRESSED, EXIT_BAD_INPUT, EXIT_INCOMPLETE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_CRASHED = 4  # an unexpected error (a bug): never 1, which CI reads as "a case regressed"
EXIT_BROKEN_PIPE = 141  # what a shell reports for a writer killed by SIGPIPE (`abeq history | head`)


def bounded(kind, lo=None, hi=None, *, above=None):
    """An argparse `type=` that refuses values out of range, so argparse names the option and exits 2."""
    from ..execution.options import out_of_bounds

    def parse(text: str):
        v, why = out_of_bounds(kind, text, lo, hi, above)
        if why:
            raise argparse.ArgumentTypeError(why)
        return v

    parse.__name__ = kind.__name__
    return parse


DB_HELP = "sqlite file, or a postgresql://user:password@host/db URL (default: $ABEQ_DB or ./abeq.db)"


def db_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=None, help=DB_HELP)
    p.add_argument(
        "--db-shared",
        action="store_true",
        help="use a database another user owns or others can write (refused otherwise: whoever can "
        "write it decides what abeq reads back); also $ABEQ_DB_SHARED=1",
    )


def bounds_args(p: argparse.ArgumentParser, who: str = "a tool call", default: str = "") -> None:
    """The options that bound what `who` may use: `abeq mcp`'s tool calls, the desk's signed-in
    reviewers (one meaning and spelling for both; abeq.execution.bounds checks them)."""
    p.add_argument(
        "--allow-model",
        action="append",
        default=[],
        metavar="PATTERN",
        help=f"a model (fnmatch pattern) {who} may use, e.g. 'anthropic/*' or scripted/rules; repeat for "
        f"more (default{default}: only the embedded model, local/smollm2)",
    )
    p.add_argument(
        "--allow-api-base",
        action="append",
        default=[],
        metavar="URL",
        help=f"a server URL {who} may send documents to (repeat for more; default{default}: none)",
    )
    p.add_argument(
        "--allow-commands",
        action="store_true",
        help=f"let {who} give a runner command, --runner-cmd (it runs as you: off unless you say so)",
    )


def model_spec(name, args, purpose: str = "run", api_base=None):
    """The ModelSpec for a model option: its provider's reply limit unless --max-tokens says otherwise."""
    from ..models.spec import ModelSpec

    return ModelSpec.for_purpose(
        name, purpose, api_base=api_base, timeout=args.timeout, max_tokens=getattr(args, "max_tokens", None)
    )


def check_model(name: str, option: str, api_base: str | None = None) -> None:
    """Refuse a model string no provider can serve, before a run (or anything in the database) starts."""
    from ..errors import InputError
    from ..models.check import model_refusal

    refused = model_refusal(name, option, api_base)
    if refused:
        raise InputError(refused[0], hint=refused[1])


def caution(spec, quiet: bool = False) -> None:
    """Print what a user should know about this model (the embedded one is tiny), once per command."""
    if spec.provider.caution and not quiet:
        print(f"note: {spec.provider.caution}", file=sys.stderr)


def open_store(db):
    """The Store at --db, or an InputError naming the path when it cannot be a database."""
    from ..results.store.store import open_store as open_

    return open_(db)


def existing_store(db):
    from ..results.store.store import existing_store as existing

    return existing(db)


# standard streams named as paths: written to the stream, never opened (nor replaced) as a file
_STREAMS = {"-": "stdout", "/dev/stdout": "stdout", "/dev/stderr": "stderr"}


def write_output(path: str | None, text: str) -> None:
    """stdout for no path or "-" (/dev/stdout, /dev/stderr: that stream; /dev/null: nothing);
    otherwise a regular file of the user's, whole or not at all (abeq.files.write_text)."""
    from ..files import write_text

    if path == os.devnull:
        return
    stream = getattr(sys, _STREAMS.get(path or "-", ""), None)
    if stream is not None or not path:
        stream = stream or sys.stdout
        stream.write(text + ("\n" if not text.endswith("\n") else ""))
        stream.flush()
        return
    write_text(path, text, what=f"the output file {path}")


OUTPUT_OPTIONS = ("--out", "--record", "--markdown", "--csv", "--junit")


def check_outputs(args, flags=OUTPUT_OPTIONS) -> None:
    """Refuse an output path that cannot be written, before any model call or export is made."""
    from ..errors import InputError

    for flag in flags:
        path = getattr(args, flag.lstrip("-").replace("-", "_"), None)
        if not path or path == "-":
            continue
        if path in _STREAMS or path == os.devnull:
            continue
        from ..files import write_target

        target, hint = write_target(path, flag), f"Create the folder first, or pick another {flag}."
        folder = target.parent
        if not folder.is_dir():
            raise InputError(f"cannot write {flag}: the folder {folder} does not exist", path=path, hint=hint)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(
                f"cannot write {flag}: the folder {folder} is not writable",
                path=path,
                hint=f"Pick another {flag}, or fix the folder's permissions.",
            )


def shard_arg(text: str) -> tuple[int, int]:
    """K/N with 1 <= K <= N."""
    import argparse

    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N with 1 <= K <= N (e.g. 2/4)")
    return int(k), int(n)
