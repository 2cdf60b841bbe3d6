"""What every command shares: option types, model options, output files, the database, exit codes.

Nothing heavy is imported at module level, so `abeq --help` stays instant.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from stat import S_ISLNK

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


DB_HELP = "sqlite file (default: $ABEQ_DB or ./abeq.db)"


def db_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=None, help=DB_HELP)


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
    from ..results.store import open_store as open_

    return open_(db)


def existing_store(db):
    from ..results.store import existing_store as existing

    return existing(db)


def _refuse_planted_link(path: str) -> None:
    """Refuse to write through a symlink someone else made (in /tmp, a shared folder): it could
    point an export at any file this user can write. The user's own links and the system's
    (root's: /dev/stdout) are followed."""
    from ..errors import InputError

    p = Path(os.path.abspath(path))
    for part in [p, *p.parents]:
        try:
            st = part.lstat()
        except OSError:
            continue  # not there yet: nothing to follow
        if S_ISLNK(st.st_mode) and st.st_uid not in (os.geteuid(), 0):
            raise InputError(
                f"{part} is a symbolic link owned by another user (uid {st.st_uid}); abeq does not write "
                "through it",
                path=path,
                hint="Write the export to a path of your own, or remove the link.",
            )


def write_output(path: str | None, text: str) -> None:
    """stdout for no path or "-"; otherwise the whole file or nothing: a temporary file beside it,
    then one rename (an interrupted write never leaves half an export)."""
    import tempfile

    if not path or path == "-":
        sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))
        return
    import stat

    _refuse_planted_link(path)
    target = Path(os.path.realpath(path))  # write through a symlink, not over it
    if target.exists() and not target.is_file():  # /dev/null, /dev/stdout, a FIFO: written in place
        with open(target, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        # mkstemp makes the file 0600; give it the mode a plain open() would (or the file's own)
        if target.exists():
            mode = stat.S_IMODE(target.stat().st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


OUTPUT_OPTIONS = ("--out", "--record", "--markdown", "--csv", "--junit")


def check_outputs(args, flags=OUTPUT_OPTIONS) -> None:
    """Refuse an output path that cannot be written, before any model call or export is made."""
    from ..errors import InputError

    for flag in flags:
        path = getattr(args, flag.lstrip("-").replace("-", "_"), None)
        if not path or path == "-":
            continue
        _refuse_planted_link(path)
        target, hint = Path(os.path.realpath(path)), f"Create the folder first, or pick another {flag}."
        if target.is_dir():
            raise InputError(
                f"{flag} is a folder; give a file name", path=path, hint=f"e.g. {flag} {target / 'report'}"
            )
        if target.exists() and not target.is_file():  # a device or FIFO is written in place
            if not os.access(target, os.W_OK):
                raise InputError(f"cannot write {flag}", path=path, hint=f"Pick another {flag}.")
            continue
        folder = target.parent
        if not folder.is_dir():
            raise InputError(f"cannot write {flag}: the folder {folder} does not exist", path=path, hint=hint)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(
                f"cannot write {flag}: the folder {folder} is not writable",
                path=path,
                hint=f"Pick another {flag}, or fix the folder's permissions.",
            )
