"""abeq's processes in the tests, forked from one that has already imported what they import.

A test that starts `python -m abeq …` pays, before abeq does anything, for importing litellm (~5 s of
CPU on this machine), sqlite_utils with pandas (~0.6 s) and, for a desk, Streamlit. The first part of
`make test` starts about ninety such processes, and those imports were about a third of its CPU.
`popen([sys.executable, "-m", "abeq", …])` takes the arguments `subprocess.Popen` takes and returns a
`subprocess.Popen`, but the process is forked from a zygote: a process per test worker that imported
litellm (through abeq's own loader), the CLI, the store and Streamlit once, and then forks a child for
each request. The child is a process of its own: its own pid, standard streams, environment, working
folder, signals, database connections and exit status; it runs `python -m <module>` with the test's
arguments the way the interpreter runs it, then exits the way the interpreter exits (threads joined,
atexit run, streams flushed; an uncaught KeyboardInterrupt ends it by SIGINT).

What is not the same as a process started with exec, and why the tests that use this do not rely on it:
- Modules imported in the zygote were imported under the zygote's environment. abeq reads its
  settings when a command runs, never at import (`ABEQ_LOCAL_STRING_LIMIT` was the one module-level
  read; it is read at call time now).
- Start-up itself (what `abeq --version` or a gate with nothing to gate imports, and how long it takes)
  is never measured through here: tests/test_startup.py and bench/bench_startup.py exec Python.
- The process's parent is the zygote, which reports its exit status to the `Popen`: `wait`, `poll`,
  `communicate`, `returncode` and `send_signal` work as usual; `pass_fds`, `preexec_fn`, user and group
  changes are refused (no test needs them).
- All children share the zygote's hash seed.

A command that is not `python -m abeq`/`python -m streamlit` (or that names another interpreter, as
the wheel's tests do) is started with exec as before. `ABEQ_TEST_FORK=0` turns the zygote off.

A forked child that exec's `python -m abeq|streamlit` itself (`abeq app` becomes its Streamlit server
so) goes on in the same process instead, with the arguments and environment it gave (~4 s of CPU
each for a fresh interpreter otherwise): the same pid, streams and working folder, as after an exec;
what it gave atexit before is dropped, as an exec drops it. What an exec would also end and this does
not: threads it started (`abeq app` starts none before it exec's), file descriptors it left open, and
the modules it imported stay imported.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import runpy
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = ("abeq", "streamlit")  # `python -m <one of these>` is forked
_HEADER = struct.Struct("!I")


# -- the test's side --------------------------------------------------------------------------------


# What the interpreter reads from the environment at start-up, beside what a child sets up again itself
# (PYTHONPATH, PYTHONIOENCODING, PYTHONUNBUFFERED): a child whose PYTHONWARNINGS, PYTHONHASHSEED,
# PYTHONDEVMODE... differ from the zygote's is exec'd, so that they take effect.
_REDONE = ("PYTHONPATH", "PYTHONIOENCODING", "PYTHONUNBUFFERED")


def _interpreter_settings(env) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("PYTHON") and k not in _REDONE}


def _zygote_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_CURRENT_TEST")}


class _Zygote:
    """The worker's zygote: started on first use, ended when the worker ends (its stdin closes)."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="abeq-zygote-")
        self.path = os.path.join(self.dir, "sock")
        self.env = _zygote_env()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"import sys; sys.path.insert(0, {str(HERE)!r}); import zygote; zygote.serve({self.path!r})",
            ],
            stdin=subprocess.PIPE,
            env=self.env,
            cwd=self.dir,
        )

    def connect(self, timeout: float = 120) -> socket.socket:
        import time

        deadline = time.monotonic() + timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.path)
                return s
            except OSError:
                s.close()
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    status = self.proc.poll()
                    raise RuntimeError(f"the test zygote did not start (exit status {status})") from None
                time.sleep(0.05)


_zygote: _Zygote | None = None
_zygote_lock = threading.Lock()


def _the_zygote() -> _Zygote:
    global _zygote
    with _zygote_lock:
        if _zygote is None or _zygote.proc.poll() is not None:
            _zygote = _Zygote()
        return _zygote


def forks(args) -> str | None:
    """The module `args` runs when it is `<this interpreter> -m abeq|streamlit …` and forking is on."""
    if os.environ.get("ABEQ_TEST_FORK", "1") == "0" or isinstance(args, (str, bytes)):
        return None
    args = [os.fspath(a) for a in args]
    if len(args) >= 3 and args[0] == sys.executable and args[1] == "-m" and args[2] in MODULES:
        return args[2]
    return None


class _Forked(subprocess.Popen):
    """A `subprocess.Popen` whose child is forked by the zygote instead of exec'd."""

    def __init__(self, args, **kw):
        self._conn: socket.socket | None = None
        self._said = b""
        super().__init__(args, **kw)

    def _execute_child(self, args, executable, preexec_fn, close_fds, pass_fds, cwd, env,
                       startupinfo, creationflags, shell, p2cread, p2cwrite, c2pread, c2pwrite,
                       errread, errwrite, restore_signals, gid, gids, uid, umask,
                       start_new_session, process_group):  # fmt: skip
        if preexec_fn is not None or pass_fds or shell or gid is not None or gids or uid is not None:
            raise ValueError("a forked abeq process takes no preexec_fn, pass_fds, shell, uid or gid")
        env = {os.fsdecode(k): os.fsdecode(v) for k, v in (os.environ if env is None else env).items()}
        zygote = _the_zygote()
        if _interpreter_settings(env) != _interpreter_settings(zygote.env):  # e.g. PYTHONWARNINGS
            return super()._execute_child(args, executable, preexec_fn, close_fds, pass_fds, cwd, env,
                                          startupinfo, creationflags, shell, p2cread, p2cwrite, c2pread,
                                          c2pwrite, errread, errwrite, restore_signals, gid, gids, uid,
                                          umask, start_new_session, process_group)  # fmt: skip
        args = [os.fspath(a) for a in args]
        request = {
            "module": args[2],
            "argv": args[3:],
            "cwd": os.fspath(cwd) if cwd is not None else os.getcwd(),
            "env": env,
            "session": bool(start_new_session),
            "group": process_group if process_group is not None and process_group >= 0 else None,
            "umask": umask,
        }
        fds = [p2cread if p2cread != -1 else 0, c2pwrite if c2pwrite != -1 else 1,
               errwrite if errwrite != -1 else 2]  # fmt: skip
        conn = zygote.connect()
        try:
            body = json.dumps(request).encode()
            socket.send_fds(conn, [_HEADER.pack(len(body)) + body], fds)
            self.pid = self._pid(conn)
            self._child_created = True
        except BaseException:
            conn.close()
            raise
        finally:
            self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)
        self._conn = conn

    def _line(self, conn: socket.socket, block: bool) -> str | None:
        """The zygote's next line for this child (its pid, then its wait status); None when not yet,
        "" when the zygote has closed the connection."""
        while b"\n" not in self._said:
            conn.setblocking(block)
            try:
                part = conn.recv(64)
            except BlockingIOError:
                return None
            if not part:
                return ""
            self._said += part
        line, self._said = self._said.split(b"\n", 1)
        return line.decode()

    def _pid(self, conn: socket.socket) -> int:
        said = self._line(conn, block=True)
        if not said:
            raise OSError(f"the test zygote did not start {self.args!r}")
        return int(said)

    def _try_wait(self, wait_flags):
        if self._conn is None:  # exec'd after all
            return super()._try_wait(wait_flags)
        status = self._line(self._conn, block=not wait_flags & os.WNOHANG)
        if status is None:
            return (0, 0)
        self._conn.close()
        # a zygote that died before it could say is taken as a child lost to SIGKILL
        return (self.pid, int(status) if status else signal.SIGKILL.value)

    def _internal_poll(self, _deadstate=None, **_):
        if self._conn is None:
            return super()._internal_poll(_deadstate)
        if self.returncode is None:
            if not self._waitpid_lock.acquire(False):
                return None
            try:
                if self.returncode is None:
                    pid, sts = self._try_wait(os.WNOHANG)
                    if pid == self.pid:
                        self._handle_exitstatus(sts)
            except OSError:
                if _deadstate is not None:
                    self.returncode = _deadstate
            finally:
                self._waitpid_lock.release()
        return self.returncode


def popen(args, **kw) -> subprocess.Popen:
    """`subprocess.Popen(args, **kw)`, forked from the zygote when `args` is `python -m abeq|streamlit`."""
    return _Forked(args, **kw) if forks(args) else subprocess.Popen(args, **kw)


def run(args, *, input=None, capture_output=False, timeout=None, check=False, **kw):
    """`subprocess.run` over `popen`."""
    if input is not None:
        kw["stdin"] = subprocess.PIPE
    if capture_output:
        kw["stdout"] = kw["stderr"] = subprocess.PIPE
    with popen(args, **kw) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
        except BaseException:
            proc.kill()
            raise
        code = proc.poll()
        if check and code:
            raise subprocess.CalledProcessError(code, proc.args, output=out, stderr=err)
    return subprocess.CompletedProcess(proc.args, code, out, err)


# -- the zygote's side ------------------------------------------------------------------------------


def _preload() -> None:
    """What abeq's processes import before they do anything; never what reads the environment."""
    from abeq.models.bootstrap import litellm

    litellm()  # offline and quiet, providers registered, heap frozen: as the first call does
    import sqlite_utils  # noqa: F401
    import streamlit.web.cli  # noqa: F401

    import abeq.cli.app  # noqa: F401
    import abeq.results.store.store  # noqa: F401

    assert threading.active_count() == 1, "a zygote must not fork with threads running"


def serve(path: str) -> None:
    """Preload, then fork a child for each request on the socket at `path`, and tell each requester
    its child's pid and, when it ends, its wait status; end when stdin (the test worker) closes."""
    _preload()
    _ZYGOTE_ENV.update(os.environ)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".part")
    listener.listen(64)
    os.rename(path + ".part", path)
    woke_r, woke_w = os.pipe()
    os.set_blocking(woke_r, False)
    os.set_blocking(woke_w, False)
    signal.set_wakeup_fd(woke_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(woke_r, selectors.EVENT_READ, "child")
    sel.register(0, selectors.EVENT_READ, "worker")
    children: dict[int, socket.socket] = {}
    mine = (listener, sel, woke_r, woke_w)
    while True:
        for key, _ in sel.select():
            if key.data == "worker" and not os.read(0, 4096):
                listener.close()
                shutil.rmtree(os.path.dirname(path), ignore_errors=True)
                return
            if key.data == "accept":
                conn, _ = listener.accept()
                pid = _fork(conn, mine, children)
                if pid:
                    children[pid] = conn
            if key.data == "child":
                try:
                    while os.read(woke_r, 4096):
                        pass
                except BlockingIOError:
                    pass
            while children:  # a SIGCHLD may stand for several children
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if not pid:
                    break
                conn = children.pop(pid, None)
                if conn:
                    try:
                        conn.sendall(f"{status}\n".encode())
                    except OSError:
                        pass
                    conn.close()


def _recv_request(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    (size,) = _HEADER.unpack(data[: _HEADER.size])
    body = data[_HEADER.size :]
    while len(body) < size:
        part = conn.recv(size - len(body))
        if not part:
            raise EOFError("the request ended early")
        body += part
    return json.loads(body), list(fds)


def _fork(conn: socket.socket, mine, children) -> int:
    try:
        request, fds = _recv_request(conn)
    except (OSError, EOFError, ValueError, struct.error):
        conn.close()
        return 0
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            listener, sel, woke_r, woke_w = mine
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            sel.close()
            listener.close()
            for fd in (woke_r, woke_w):
                os.close(fd)
            for other in children.values():
                other.close()
            conn.close()
            _child(request, fds)
        finally:
            os._exit(70)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    return pid


def _stdio(env: dict[str, str]) -> None:
    """Standard streams as the interpreter makes them for this environment (over fds 0-2)."""
    enc, _, errors = (env.get("PYTHONIOENCODING") or "").partition(":")
    enc = enc or "utf-8"
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))

    def stream(fd, mode, errors_, line):
        raw = io.FileIO(fd, mode, closefd=False)
        buf = (
            raw
            if unbuffered and mode == "wb"
            else (io.BufferedReader if mode == "rb" else io.BufferedWriter)(raw)
        )
        return io.TextIOWrapper(buf, encoding=enc, errors=errors_, line_buffering=line,
                                write_through=unbuffered and mode == "wb")  # fmt: skip

    sys.stdin = sys.__stdin__ = stream(0, "rb", errors or "strict", False)
    sys.stdout = sys.__stdout__ = stream(1, "wb", errors or "strict", os.isatty(1))
    sys.stderr = sys.__stderr__ = stream(2, "wb", "backslashreplace", True)


def _excepthook(e: BaseException) -> None:
    """The uncaught exception as the interpreter shows it: from runpy's frames on, not this one's."""
    tb = e.__traceback__.tb_next if e.__traceback__ else None
    sys.excepthook(type(e), e.with_traceback(tb), tb)


class _Exec(BaseException):
    """A forked child's `os.execve` of `python -m abeq|streamlit`, run in the same process instead
    (`_child`): a BaseException, so that no `except Exception` on the way up takes it."""

    def __init__(self, module: str, argv: list[str], env: dict[str, str]) -> None:
        super().__init__(module)
        self.module, self.argv, self.env = module, argv, env


_ZYGOTE_ENV: dict[str, str] = {}  # the zygote's own environment (serve): what its imports saw
_EXECVE = os.execve


def _execve_in_place(path, args, env) -> None:
    """os.execve in a forked child. `abeq app` becomes its Streamlit server by exec'ing
    `python -m streamlit run …`: that would start a fresh interpreter (~4 s of CPU importing what the
    zygote already has), so it is run in this process instead, with the environment and arguments
    given. Anything else (another program, other interpreter settings) is exec'd."""
    argv = [os.fsdecode(a) for a in args]
    environ = {os.fsdecode(k): os.fsdecode(v) for k, v in env.items()}
    same = _interpreter_settings(environ) == _interpreter_settings(_ZYGOTE_ENV)
    if os.fsdecode(path) == sys.executable and forks(argv) and same:
        for s in (sys.stdout, sys.stderr):
            s.flush()
        raise _Exec(argv[2], argv[3:], environ)
    _EXECVE(path, args, env)


def _enter(module: str, argv: list[str], env: dict[str, str]) -> None:
    """The process as `python -m <module> <argv>` starts with `env`."""
    os.environ.clear()
    os.environ.update(env)
    # sys.path as `python -m` makes it: the working folder, then PYTHONPATH, then the rest
    base = [p for p in sys.path if p and p != str(HERE) and p != os.getcwd()]
    extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [os.getcwd(), *[p for p in extra if p not in base], *base]
    _stdio(env)
    sys.argv = ["-m", *argv]
    sys.orig_argv = [sys.executable, "-m", module, *argv]
    sys.modules["__main__"] = types.ModuleType("__main__")  # a fresh one, as the interpreter's


def _child(request: dict, fds: list[int]) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target, inheritable=True)
    for fd in set(fds):
        if fd > 2:
            os.close(fd)
    if request["session"]:
        os.setsid()
    elif request["group"] is not None:
        os.setpgid(0, request["group"])
    if request["umask"] is not None and request["umask"] >= 0:
        os.umask(request["umask"])
    os.chdir(request["cwd"])
    os.execve = _execve_in_place
    registered: list = []  # what this process gives atexit (an exec drops it; the zygote's stays)
    register = atexit.register
    atexit.register = lambda f, *a, **k: (registered.append(f), register(f, *a, **k))[1]
    module, argv, env = request["module"], request["argv"], request["env"]
    code: int | str = 0
    while True:
        _enter(module, argv, env)
        try:
            runpy._run_module_as_main(module, alter_argv=True)  # what `python -m` calls
        except _Exec as e:
            for f in registered:
                atexit.unregister(f)
            registered.clear()
            module, argv, env = e.module, e.argv, e.env
            continue
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt as e:
            _excepthook(e)
            code = "SIGINT"
        except BaseException as e:
            _excepthook(e)
            code = 1
        break
    # the interpreter's exit: join the threads, run atexit, flush the streams
    try:
        threading._shutdown()  # type: ignore[attr-defined]
    except BaseException as e:
        sys.excepthook(type(e), e, e.__traceback__)
    atexit._run_exitfuncs()
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except (OSError, ValueError):
            code = 120 if code == 0 else code
    if code == "SIGINT":
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(int(code) & 0xFF)
