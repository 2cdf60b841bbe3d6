"""A throwaway PostgreSQL server for tests and benches: Debian's package, started in a temporary
folder on a free loopback port, as an unprivileged user (PostgreSQL refuses to run as root: under
root the `postgres` user the package creates runs it), with a password (scram) so the store is
reached the way a team's server is. `stop()` ends it and removes the folder.

Several processes (pytest-xdist workers) share one server: `shared(folder)` starts it the first
time under a file lock, and each user `release`s it; the last one stops it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

USER = "abeq"  # the server's superuser (the tests' login)


def bin_dir() -> Path | None:
    """The newest PostgreSQL installed by Debian's package (initdb, pg_ctl), or None."""
    base = Path(os.environ.get("ABEQ_PG_BIN_ROOT", "/usr/lib/postgresql"))
    version = lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0
    found = sorted(base.glob("*/bin/initdb"), key=version)
    return found[-1].parent if found else None


def unavailable() -> str | None:
    """Why no server can be started here (None when one can)."""
    if bin_dir() is None:
        return "PostgreSQL is not installed (Debian: apt-get install postgresql)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'abeq[postgres]')"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


class Server:
    """One running server: `url(dbname)` connects to a database on it as its superuser."""

    def __init__(self, folder: Path, port: int, password: str):
        self.folder, self.port, self.password = folder, port, password

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{USER}:{self.password}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str, template: str | None = None) -> str:
        """A new database (a copy of `template` when given: fast); its URL."""
        from ..results.store.postgres import create_database

        return create_database(self.url(), name, template)

    def stop(self) -> None:
        pg_ctl = str(bin_dir() / "pg_ctl")  # type: ignore[operator]
        subprocess.run(
            _as_server_user([pg_ctl, "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(self.folder, ignore_errors=True)

    def to_json(self) -> str:
        return json.dumps({"folder": str(self.folder), "port": self.port, "password": self.password})

    @classmethod
    def from_json(cls, text: str) -> Server:
        d = json.loads(text)
        return cls(Path(d["folder"]), d["port"], d["password"])


def start() -> Server:
    """A new server in a new temporary folder; raises RuntimeError with the server's log if it fails."""
    why = unavailable()
    if why:
        raise RuntimeError(why)
    bins = bin_dir()
    assert bins is not None
    folder = Path(tempfile.mkdtemp(prefix="abeq-pg-"))
    password = secrets.token_urlsafe(18)
    (folder / "pw").write_text(password)
    if os.geteuid() == 0:  # the server's user must own its folder
        pg = pwd.getpwnam("postgres")
        os.chown(folder, pg.pw_uid, pg.pw_gid)
        os.chown(folder / "pw", pg.pw_uid, pg.pw_gid)
    data = folder / "data"
    init = subprocess.run(
        _as_server_user(
            [
                str(bins / "initdb"),
                "-D",
                str(data),
                "-U",
                USER,
                "--pwfile",
                str(folder / "pw"),
                "-A",
                "scram-sha-256",
                "-E",
                "UTF8",
                "--locale",
                "C",
                "--no-sync",
            ]
        ),
        capture_output=True,
        text=True,
    )
    (folder / "pw").unlink()
    if init.returncode:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {init.stderr.strip()[-800:]}")
    for _attempt in range(5):  # a free port may be taken between looking and binding
        port = _free_port()
        opts = (
            f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        ran = subprocess.run(
            _as_server_user(
                [str(bins / "pg_ctl"), "-D", str(data), "-w", "-t", "60", "-l", str(folder / "log")]
                + ["-o", opts, "start"]
            ),
            capture_output=True,
            text=True,
        )
        if ran.returncode == 0:
            return Server(folder, port, password)
    log = (folder / "log").read_text(errors="replace")[-800:] if (folder / "log").exists() else ran.stderr
    shutil.rmtree(folder, ignore_errors=True)
    raise RuntimeError(f"PostgreSQL did not start: {log.strip()}")


@contextlib.contextmanager
def _locked(path: Path):
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def shared(folder: Path, user: str) -> Server:
    """The server every process pointed at `folder` shares (started by the first), with `user`
    counted among its users until `release`."""
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / "lock"):
        info = folder / "server.json"
        if info.exists():
            server = Server.from_json(info.read_text())
        else:
            server = start()
            info.write_text(server.to_json())
        (folder / f"user-{user}").touch()
        return server


def release(folder: Path, user: str) -> None:
    """`user` is done with the shared server; the last user stops it."""
    with _locked(folder / "lock"):
        (folder / f"user-{user}").unlink(missing_ok=True)
        info = folder / "server.json"
        if not any(folder.glob("user-*")) and info.exists():
            Server.from_json(info.read_text()).stop()
            info.unlink()


def wait_ready(server: Server, timeout: float = 30) -> None:
    """Until the server takes a connection (a freshly started one may still be recovering)."""
    import psycopg

    end = time.monotonic() + timeout
    while True:
        try:
            psycopg.connect(server.url(), connect_timeout=5).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > end:
                raise
            time.sleep(0.2)
