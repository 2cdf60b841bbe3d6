"""How abeq touches files it is given: every read bounded by reading (a size from `stat` says nothing
of /dev/zero or a FIFO), every write a temporary file beside the target, then one rename, and never
through a link or into a file someone else planted in a folder others can write (/tmp, a share).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import InputError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CHUNK = 1 << 16


def read_limited(path: str | Path, limit: int, *, what: str, hint: str = "") -> bytes:
    """The bytes of a file the user named, or an InputError naming it: not found, a folder,
    unreadable, or more than `limit` bytes (counted while reading, so /dev/zero ends here too)."""
    p = str(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(f"{what} not found", path=p, hint="Check the path and try again.") from None
    except IsADirectoryError:
        raise InputError(f"{what} is a directory, not a file", path=p) from None
    except OSError as e:
        raise InputError(f"cannot read {what} ({e.strerror})", path=p, hint=hint or None) from None
    with os.fdopen(fd, "rb") as f:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise InputError(f"{what} is a directory, not a file", path=p)
        try:
            data = read_fd(f.fileno(), limit)
        except OSError as e:
            raise InputError(f"cannot read {what} ({e.strerror})", path=p, hint=hint or None) from None
    if data is None:
        raise InputError(
            f"{what} is over the limit of {limit:,} bytes (abeq stopped reading there)",
            path=p,
            hint=hint or "Split the file or pass a smaller one.",
        )
    return data


def read_fd(fd: int, limit: int) -> bytes | None:
    """Up to `limit` bytes from an open file; None when it holds more."""
    parts: list[bytes] = []
    n = 0
    while True:
        chunk = os.read(fd, min(CHUNK, limit + 1 - n))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        n += len(chunk)
        if n > limit:
            return None


def planted_link(path: str | Path) -> tuple[Path, int] | None:
    """The first symbolic link on the way to `path` that another user made (one planted in /tmp, a
    shared folder), with its owner; None when there is none. The user's own links and the system's
    (root's: /dev/stdout) are the user's to follow."""
    p = Path(os.path.abspath(path))
    for part in [p, *p.parents]:
        try:
            st = part.lstat()
        except OSError:
            continue  # not there yet: nothing to follow
        if stat.S_ISLNK(st.st_mode) and st.st_uid not in (os.geteuid(), 0):
            return part, st.st_uid
    return None


def refuse_planted_link(path: str | Path, what: str) -> None:
    found = planted_link(path)
    if found:
        raise InputError(
            f"{found[0]} is a symbolic link owned by another user (uid {found[1]}); abeq does not write "
            f"{what} through it",
            path=str(path),
            hint="Write it to a path of your own, or remove the link.",
        )


def write_target(path: str | Path, what: str) -> Path:
    """Where a write to `path` lands, or an InputError: through a link another user planted, onto a
    link that leads nowhere, into anything but a regular file (a FIFO or device someone else reads
    from), or over another user's file. The user's own links are followed (to a new file too)."""
    refuse_planted_link(path, what)
    p = Path(os.path.abspath(path))
    target = Path(os.path.realpath(p))
    try:
        st = target.stat()
    except FileNotFoundError:
        return target
    if stat.S_ISDIR(st.st_mode):
        raise InputError(
            f"{what} is a folder; give a file name", path=str(path), hint=f"e.g. {target / 'out'}"
        )
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            f"{what} is not a regular file (a FIFO, socket or device); abeq writes regular files only",
            path=str(path),
            hint="Name a file (or - for standard output).",
        )
    if st.st_uid != os.geteuid():
        raise InputError(
            f"{what} is a file owned by another user (uid {st.st_uid}); abeq does not replace it",
            path=str(path),
            hint="Write it to a path of your own.",
        )
    return target


def write_text(path: str | Path, text: str, what: str = "the file") -> Path:
    """The whole file or nothing: a temporary file (created exclusively, never through a link) beside
    the target, then one rename over it, so an interrupted write never leaves half a file and a link
    planted at the temporary name is never followed. A new file gets the mode open() would give it;
    a replaced one keeps its own."""
    target = write_target(path, what)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        try:
            mode = stat.S_IMODE(os.stat(target, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(
            f"cannot write {what} ({e.strerror or e})",
            path=str(path),
            hint="Free some disk space or pick another path; nothing was half-written.",
        ) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


# --------------------------------------------------------------------------- the database file
DB_SHARED_ENV = "ABEQ_DB_SHARED"


def check_database_file(path: str, shared: bool | None = None) -> None:
    """Refuse a database file someone else could have planted or can change: a link another user
    made, a link that leads nowhere (sqlite would create the file where it points), anything but a
    regular file, or (unless `shared`, `--db-shared`) a file or -wal/-shm owned by another user or
    writable by others. It holds every transcript, and what it stores decides what a resume runs."""
    if shared is None:
        shared = os.environ.get(DB_SHARED_ENV, "") not in ("", "0")
    refuse_planted_link(path, "the database")
    p = Path(os.path.abspath(path))
    if p.is_symlink() and not p.exists():
        raise InputError(
            f"the database is a symbolic link to {os.readlink(p)}, which does not exist; abeq does not "
            "create a database through a link",
            path=path,
            hint="Remove the link, or pass --db with the file itself.",
        )
    real = Path(os.path.realpath(p))
    for f in (real, Path(f"{real}-wal"), Path(f"{real}-shm")):
        try:
            st = f.lstat()
        except FileNotFoundError:
            continue
        if f is not real and stat.S_ISLNK(st.st_mode):
            raise InputError(
                f"{f.name} beside the database is a symbolic link; abeq does not write through it",
                path=path,
                hint="Remove it (sqlite makes it again).",
            )
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{f} is not a regular file", path=path, hint="Pass --db with a database file.")
        if shared:
            continue
        if st.st_uid != os.geteuid():
            raise InputError(
                f"{f.name} is owned by another user (uid {st.st_uid}); whoever can write it decides what "
                "abeq reads back, and a resume runs what it stores",
                path=path,
                hint="Use a database of your own, or pass --db-shared if you mean to share this one.",
            )
        if st.st_mode & 0o022:
            raise InputError(
                f"{f.name} can be written by others (mode {stat.S_IMODE(st.st_mode):o})",
                path=path,
                hint=f"Make it yours only (chmod 600 {f}), or pass --db-shared if you mean to share it.",
            )


# --------------------------------------------------------------------------- walking a folder
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)

LINK, SPECIAL = "link", "special"  # what walk() yields instead of an open file


def open_folder(folder: str | Path) -> int:
    """An open descriptor of `folder`, every component of its real path opened without following a
    link: a folder swapped for a link after it was checked is refused (OSError ELOOP/ENOTDIR), never
    entered."""
    real = Path(os.path.realpath(folder))
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in real.parts[1:]:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def walk(folder: str | Path, *, skip: frozenset[str] = frozenset()):
    """Every entry under `folder` but folders, in sorted order, as (relative POSIX path, descriptor,
    stat) with the descriptor open for reading (closed when the walk moves on), or (path, LINK |
    SPECIAL, None) for a symbolic link or a FIFO, socket or device, which is never opened. Each
    name is opened relative to its folder's descriptor with O_NOFOLLOW and checked after opening
    (fstat), so nothing swapped in meanwhile is followed out of the folder. Folders named in `skip`
    are not entered."""
    top = open_folder(folder)
    try:
        yield from _walk_fd(top, "", skip)
    finally:
        os.close(top)


def _walk_fd(dfd: int, prefix: str, skip: frozenset[str]):
    import errno

    for name in sorted(os.listdir(dfd)):
        rel = f"{prefix}{name}"
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
        except OSError as e:
            if e.errno == errno.ELOOP:
                yield rel, LINK, None
                continue
            if e.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket
                yield rel, SPECIAL, None
                continue
            if e.errno == errno.ENOENT:  # gone since it was listed
                continue
            raise
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                if name in skip:
                    continue
                yield from _walk_fd(fd, f"{rel}/", skip)
            elif stat.S_ISREG(st.st_mode):
                yield rel, fd, st
            else:
                yield rel, SPECIAL, None
        finally:
            os.close(fd)


def read_regular(path: str | Path, limit: int, *, follow: bool = False) -> bytes | str | None:
    """A regular file's bytes, read without waiting on a FIFO: LINK for a symbolic link (unless
    `follow`), SPECIAL for anything but a regular file, None when it holds more than `limit` bytes.
    OSError when it cannot be opened."""
    import errno

    flags = _FILE_FLAGS if not follow else _FILE_FLAGS & ~_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP and not follow:
            return LINK
        if e.errno in (errno.ENXIO, errno.EOPNOTSUPP):
            return SPECIAL
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return SPECIAL
        return read_fd(fd, limit)
    finally:
        os.close(fd)


def file_name(name: str, what: str = "an uploaded file") -> str:
    """The last part of a name a browser sent, fit to be a file's name in a folder abeq made: an
    InputError for one that is empty, `.`/`..`, or holds NUL or a control character."""
    base = str(name).replace("\\", "/").rsplit("/", 1)[-1]
    if base in ("", ".", "..") or any(ord(c) < 32 or c == "\x7f" for c in base):
        raise InputError(
            f"{what} has a name that cannot be a file's ({name!r})",
            hint="Rename the file (letters, digits, dots, dashes), then upload it again.",
        )
    return base
