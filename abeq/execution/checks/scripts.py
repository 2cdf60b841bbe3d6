"""promptfoo's code, run the way promptfoo runs it: `javascript` asserts and transforms with Node,
`python` asserts and transforms with the Python that runs abeq, each in a subprocess with a time
limit. The contract is promptfoo's (src/assertions/javascript.ts, python.ts, transform.ts):

- an inline value is a function body of (output, context): one line is `return <line>` (after a
  leading const/let/var statement, before its last expression); several lines are used as written
  (JavaScript) or indented into `def main(output, context):` (Python);
- a file (the importer reads `file://x.js[:fn]` in beside the check, options["script"]) exports the
  function: module.exports / default / the named one (JavaScript), `get_assert` or the named one
  (Python; `get_transform` for a transform);
- the result: a boolean; a number (passes when > 0, or >= the threshold); "true"/"false"; or a
  grading result {pass, score, reason}, failed when its score is below the threshold; `not-` inverts.
  An error, a timeout or another kind of result fails the check, with the reason, as in promptfoo.
- context: {prompt (the case input), vars, test: {vars, metadata}, config, providerResponse: {output}}.

Only what cannot run here is skipped (abeq.execution.checks.checks): a missing runtime, a TypeScript file.
Code runs only in a run the user trusted it for (abeq.execution.checks.code_trust), and then with a reduced
environment, a temporary HOME and working folder, resource limits, and inside bubblewrap where the
machine has one (docs/security.md says what each protects against); what it prints is redacted.
"""

from __future__ import annotations

import functools
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...models.http import redact

TIMEOUT = 20.0  # seconds for one script on one arm; promptfoo has none, a review must end
_MARK = "\x1eabeq-result\x1e"

_NODE = r"""
const fs = require('fs'), path = require('path'), { pathToFileURL } = require('url');
console.log = console.info = console.debug = (...a) => process.stderr.write(a.join(' ') + '\n');
function body(code) {
  const t = code.trim().replace(/;+\s*$/, '');
  if (/^(const|let|var)\s/.test(t)) {
    const i = t.lastIndexOf(';');
    if (i !== -1 && t.slice(i + 1).trim()) return t.slice(0, i + 1) + ' return ' + t.slice(i + 1).trim();
    return t;
  }
  return 'return ' + t;
}
(async () => {
  const job = JSON.parse(fs.readFileSync(0, 'utf8'));
  let fn;
  if (job.file) {
    job.file = path.resolve(job.file);
    fs.writeFileSync(job.file, job.source);
    const mod = await import(pathToFileURL(job.file).href);  // CommonJS: default is module.exports
    const d = mod.default;
    if (job.fn) fn = mod[job.fn] !== undefined ? mod[job.fn] : d && d[job.fn];
    else fn = typeof d === 'function' ? d : d && typeof d.default === 'function' ? d.default : undefined;
    if (typeof fn !== 'function') {
      throw new Error(path.basename(job.file) + ' does not export a function ' + (job.fn || '(default)'));
    }
  } else {
    const code = job.code.trimEnd();
    fn = new Function('output', 'context', code.includes('\n') ? code : body(code));
  }
  const result = await fn(job.output, job.context);
  process.stdout.write(job.mark + JSON.stringify(result === undefined ? null : result));
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(3); });
"""

_PYTHON = r"""
import contextlib, importlib.util, json, os, sys
job = json.loads(sys.stdin.read())
with contextlib.redirect_stdout(sys.stderr):
    if job["file"]:
        job["file"] = os.path.abspath(job["file"])
        with open(job["file"], "w", encoding="utf-8") as f:
            f.write(job["source"])
        spec = importlib.util.spec_from_file_location("promptfoo_script", job["file"])
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fn = getattr(mod, job["fn"], None)
        if not callable(fn):
            raise SystemExit(f"{job['file'].rsplit('/', 1)[-1]} has no function {job['fn']}")
    else:
        code = job["code"]
        if "\n" in code:
            lines = code.split("\n")
            indented = [ln for ln in lines if ln.strip() and ln[0].isspace()]
            indent = indented[0][: len(indented[0]) - len(indented[0].lstrip())] if indented else "    "
            src = "def main(output, context):\n" + "\n".join(indent + ln for ln in lines)
        else:
            src = "def main(output, context):\n    return " + code
        scope = {"json": json}
        exec(compile(src, "<promptfoo python>", "exec"), scope)
        fn = scope["main"]
    result = fn(job["output"], job["context"])
sys.stdout.write(job["mark"] + json.dumps(result, default=str))
"""


class ScriptError(Exception):
    """A script that could not be run or did not finish; the check fails with this as its evidence."""


def runtime_missing(language: str) -> str:
    """Why a script in `language` cannot run here ("" when it can)."""
    if language == "javascript" and not shutil.which("node"):
        return "runs JavaScript, and Node.js (node) is not installed here"
    return ""


@dataclass(frozen=True)
class Sandbox:
    """How a set's code runs: only these environment variables of abeq's own beyond the basics
    (`--check-env NAME`), inside bubblewrap (`use_bwrap`, when the machine has a working one), and
    without it only when the person said so (`unsandboxed`, `--unsandboxed`): outside a sandbox a
    script runs as the user, so it can read what the user can, the environment of the user's other
    processes (their keys) included."""

    env_names: tuple[str, ...] = ()
    use_bwrap: bool = True
    unsandboxed: bool = False


# what a script gets of abeq's environment without being asked: how to find programs and read text
_BASIC_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
CPU_SECONDS = int(TIMEOUT) + 5  # RLIMIT_CPU: a busy loop is killed even if the wall clock were not read
MEMORY_BYTES = 2 * 1024**3  # RLIMIT_AS: address space (Node reserves ~1 GiB before it runs a line)
FILE_BYTES = 64 * 1024**2  # RLIMIT_FSIZE: no file a script writes grows past this
DISK_BYTES = 256 * 1024**2  # everything a script writes into its folder (and its HOME) together
MORE_PROCESSES = 64  # RLIMIT_NPROC: processes and threads beyond those its user already runs
OUTPUT_BYTES = 1024 * 1024  # what is read of a script's stdout and stderr
# abeq run as root (containers, CI) runs scripts as this unprivileged user: the kernel does not hold
# root to RLIMIT_NPROC, and root reads every file and every process's environment
NOBODY = 65534
_IN_BOX = "/abeq"  # inside bubblewrap: a sized tmpfs holding the script's folder and HOME


def script_env(sandbox: Sandbox, home: str) -> dict[str, str]:
    """The whole environment a script sees: the basics, a temporary HOME and TMPDIR, and the names
    the user listed; no key, token or other variable of abeq's own otherwise."""
    env = {k: os.environ[k] for k in _BASIC_ENV if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update({n: os.environ[n] for n in sandbox.env_names if n in os.environ})
    env.update(
        {
            "HOME": home,
            "TMPDIR": home,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
            "NODE_OPTIONS": "",
        }
    )
    return env


def sandbox_level(sandbox: Sandbox | None = None) -> str:
    """ "bubblewrap" when scripts run inside it here, else "limits" (environment, folder, rlimits:
    a script then runs only with --unsandboxed)."""
    return "bubblewrap" if (sandbox or Sandbox()).use_bwrap and _bwrap() else "limits"


def no_sandbox() -> str:
    """Why a script would run without bubblewrap here ("" when it has one), for a refusal."""
    path = shutil.which("bwrap")
    if not path:
        return "bubblewrap (bwrap) is not installed"
    return "" if _bwrap() else f"bubblewrap ({path}) cannot make a sandbox here: {_probe()[1] or 'it failed'}"


UNSANDBOXED_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), "
    "or pass --unsandboxed to run the code as you anyway: it can then read your files and the "
    "environment of your other processes, their API keys included"
)


def _as_root() -> bool:
    return os.geteuid() == 0


@functools.lru_cache(maxsize=1)
def _bwrap() -> str:
    """bubblewrap's path when it can make a sandbox on this machine (tried once), else ""."""
    return _probe()[0]


@functools.lru_cache(maxsize=1)
def _probe() -> tuple[str, str]:
    path = shutil.which("bwrap")
    if not path:
        return "", "not installed"
    try:
        done = subprocess.run(
            [path, *_bwrap_args(), "--", "/bin/sh", "-c", "true"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return "", str(e)[:160]
    why = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
    return (path, "") if done.returncode == 0 else ("", (why[-1] if why else f"exit {done.returncode}")[:160])


def _bwrap_args() -> list[str]:
    """The sandbox: the system read-only, a sized tmpfs for the script's folder, no network, no
    other process. As root, no user namespace (root's would map only root), so the script itself
    can drop to NOBODY: bubblewrap gives it the two capabilities that needs and no other."""
    out = [
        *_bwrap_binds(),
        "--perms",
        "0777",
        "--size",
        str(DISK_BYTES),
        "--tmpfs",
        _IN_BOX,
        "--perms",
        "0777",
        "--dir",
        f"{_IN_BOX}/work",
        "--perms",
        "0777",
        "--dir",
        f"{_IN_BOX}/home",
        "--chdir",
        f"{_IN_BOX}/work",
        "--die-with-parent",
    ]
    if _as_root():
        out += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        out += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        out += ["--unshare-all"]  # no network, no other process to see
    return out


# of /etc, only what loading a program and naming a user need (not shadow, not ssh's or a tool's keys)
_ETC = tuple(
    f"/etc/{n}"
    for n in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "passwd", "group")
)


_SYSTEM = ("/usr", "/bin", "/lib", "/lib64")


def _bwrap_binds() -> list[str]:
    """Read-only: the system's programs and libraries, and the Pythons and Node that run scripts.
    Nothing of the user's: no home, no project, no /tmp."""
    out: list[str] = []
    for d in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", *_ETC):
        if os.path.exists(d):
            out += ["--ro-bind", d, d]
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    node = shutil.which("node")
    if node:
        prefixes.add(os.path.dirname(os.path.dirname(os.path.realpath(node))))
    extra = [p for p in sorted(prefixes) if not any(p == d or p.startswith(d + "/") for d in _SYSTEM)]
    # a venv's python is a link into its base prefix: the venv folder itself is bound too
    venv_bin = os.path.dirname(sys.executable)
    if not any(venv_bin.startswith(p + "/") for p in prefixes):
        extra.append(os.path.dirname(venv_bin))
    made: set[str] = set()
    for p in extra:
        # the folders above it made passable (bubblewrap makes them 0700: a script dropped to
        # NOBODY could not reach a Python under /root)
        parts = p.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/" + "/".join(parts[:i])
            if d not in made:
                made.add(d)
                out += ["--perms", "0755", "--dir", d]
        out += ["--ro-bind", p, p]
    return out + ["--proc", "/proc", "--dev", "/dev"]


def _limits(nproc_cap: int, drop: bool) -> None:
    """In the child before it runs the script: limits on CPU, memory, file size and processes; as
    root outside bubblewrap, the switch to NOBODY; and death with abeq (a killed abeq leaves no
    script behind). Only system calls here: the parent may have other threads."""
    for res, value in (
        (resource.RLIMIT_CPU, CPU_SECONDS),
        (resource.RLIMIT_AS, MEMORY_BYTES),
        (resource.RLIMIT_FSIZE, FILE_BYTES),
        (resource.RLIMIT_CORE, 0),
    ):
        soft, hard = resource.getrlimit(res)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(res, (cap, cap))
    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    cap = nproc_cap if hard == resource.RLIM_INFINITY else min(nproc_cap, hard)
    resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))
    if drop:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    if _LIBC is not None:
        _LIBC.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG, after the uid changed (it clears it)


try:
    import ctypes

    _LIBC: Any = ctypes.CDLL(None, use_errno=True)  # loaded here: the child must not load a library
except (ImportError, OSError):  # not Linux
    _LIBC = None


def _user_tasks(uid: int) -> int:
    """The processes and threads `uid` runs now (RLIMIT_NPROC counts them all)."""
    n = 0
    try:
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if os.stat(f"/proc/{pid}").st_uid == uid:
                        n += len(os.listdir(f"/proc/{pid}/task"))
                except OSError:
                    pass
    except OSError:
        return 4096
    return n


@functools.lru_cache(maxsize=2)
def _nproc_cap(uid: int) -> int:
    """RLIMIT_NPROC for scripts run as `uid`: its tasks when the first script starts, plus
    MORE_PROCESSES (counted once: a walk of /proc per script is work for nothing)."""
    return _user_tasks(uid) + MORE_PROCESSES


# the first thing a script's interpreter does as root inside bubblewrap: become NOBODY (with the two
# capabilities bubblewrap lends it, which go with the switch)
_DROP_PY = "import os\nif os.getuid() == 0:\n    os.setgroups([]); os.setgid({n}); os.setuid({n})\n"
_DROP_JS = (
    "if (process.getuid() === 0) {{ process.setgroups([]); process.setgid({n}); process.setuid({n}); }}\n"
)


def run(
    language: str,
    code: str,
    output: Any,
    context: dict,
    *,
    script: dict | None = None,
    sandbox: Sandbox | None = None,
) -> Any:
    """The value a promptfoo script returns for `output`. `script`: {"name", "source", "fn"} of a
    file the importer read in; without it `code` is an inline function body. It runs in a folder of
    its own with a reduced environment and limits, inside bubblewrap (Sandbox); without one only when
    the person said --unsandboxed. Raises ScriptError."""
    sandbox = sandbox or Sandbox()
    bwrap = _bwrap() if sandbox.use_bwrap else ""
    if not bwrap and not sandbox.unsandboxed:
        why = no_sandbox() if sandbox.use_bwrap else "bubblewrap is off"
        raise ScriptError(f"was not run: {why}, and it runs only in a sandbox unless --unsandboxed is given")
    # as root outside bubblewrap the child switches to NOBODY itself (inside, the script does)
    drop = _as_root() and not bwrap
    limits = functools.partial(_limits, _nproc_cap(NOBODY if _as_root() else os.getuid()), drop)
    job: dict[str, Any] = {"code": code, "output": output, "context": context, "mark": _MARK, "file": ""}
    if script:
        source = str(script.get("source", ""))
        name = Path(str(script.get("name") or "script")).name
        if name.endswith(".js") and re.search(r"^\s*export\s", source, re.M):
            name = name[:-3] + ".mjs"  # an ES module where its package.json said so
        job.update(file=name, source=source, fn=script.get("fn") or "")
    if language == "javascript":
        argv = [shutil.which("node") or "node", "-e", _DROP_JS.format(n=NOBODY) + _NODE]
    else:
        argv = [sys.executable, "-I", "-c", _DROP_PY.format(n=NOBODY) + _PYTHON]
    with tempfile.TemporaryDirectory(prefix="abeq-script-") as tmp:
        if bwrap:
            # the folder and HOME are a tmpfs of DISK_BYTES inside the sandbox: nothing of the host's
            argv = [bwrap, *_bwrap_args(), "--", *argv]
            work, home, watch = f"{_IN_BOX}/work", f"{_IN_BOX}/home", ""
        else:
            work, home, watch = os.path.join(tmp, "work"), os.path.join(tmp, "home"), tmp
            for d in (work, home):
                os.mkdir(d)
                if drop:
                    os.chown(d, NOBODY, NOBODY)
            if drop:
                os.chmod(tmp, 0o711)
        done = _communicate(
            argv,
            json.dumps(job, ensure_ascii=False),
            None if bwrap else work,
            script_env(sandbox, home),
            limits,
            watch,
        )
    stdout, stderr = (redact(x) for x in done)
    if _MARK not in stdout:
        if "No space left on device" in stderr or "ENOSPC" in stderr:
            raise ScriptError(f"filled the {DISK_BYTES // 1024**2} MiB its folder may hold, and was stopped")
        lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
        why = next(
            (ln for ln in reversed(lines) if "Error" in ln or "error" in ln), lines[-1] if lines else ""
        )
        raise ScriptError(f"threw an error: {why.strip()[:200] or 'no result'}")
    try:
        return json.loads(stdout.rsplit(_MARK, 1)[1])
    except ValueError:
        raise ScriptError("returned something that is not JSON") from None


def _folder_bytes(folder: str) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


def _communicate(
    argv: list[str],
    stdin: str,
    cwd: str | None,
    env: dict[str, str],
    limits: Callable[[], None],
    watch: str = "",
) -> tuple[str, str]:
    """Run the script to its end or its time limit; on the limit, or past DISK_BYTES written into
    `watch` (outside bubblewrap, whose tmpfs holds the total itself), its whole process group is
    killed (children it started included)."""
    from ..runners.reaper import RUN_MARK, kill_marked, new_mark

    token = new_mark()  # found again at the end in whatever left the process group (setsid)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**env, RUN_MARK: token},
            start_new_session=True,  # its own process group, killed whole at the end
            preexec_fn=limits,  # _limits with this script's cap and uid (no state shared by threads)
        )
    except OSError as e:
        raise ScriptError(f"could not start {argv[0]}: {e}") from None
    deadline = time.monotonic() + TIMEOUT
    data: bytes | None = stdin.encode()
    try:
        while True:
            try:
                out, err = proc.communicate(data, timeout=min(0.2, max(0.01, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                data = None  # sent with the first call; a retry must not send it again
                if time.monotonic() >= deadline:
                    _kill_group(proc)
                    raise ScriptError(f"did not finish within {TIMEOUT:g}s") from None
                if watch and _folder_bytes(watch) > DISK_BYTES:
                    _kill_group(proc)
                    raise ScriptError(
                        f"wrote more than the {DISK_BYTES // 1024**2} MiB its folder may hold: stopped"
                    ) from None
    finally:
        _kill_group(proc)  # what it left running in its session goes too
        kill_marked(token)  # and what made a session of its own but kept the environment
    return (
        out[:OUTPUT_BYTES].decode("utf-8", errors="replace"),
        err[-OUTPUT_BYTES:].decode("utf-8", errors="replace"),
    )


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.returncode is None:
        proc.kill()
        proc.wait()


def verdict(result: Any, threshold: float | None, inverse: bool) -> tuple[bool, str]:
    """(passed, evidence) from what a script returned, by promptfoo's rules."""
    if isinstance(result, str) and result.strip().lower() in ("true", "false"):
        result = result.strip().lower() == "true"
    if isinstance(result, str) and result.startswith("{"):
        try:
            result = json.loads(result)
        except json.JSONDecodeError:
            pass
    if isinstance(result, bool):
        passed, evidence = result, f"returned {str(result).lower()}"
    elif (score := float(result) if isinstance(result, (int, float)) else _number(result)) is not None:
        passed = score > 0 if threshold is None else score >= threshold
        evidence = f"score {score:g}" + ("" if threshold is None else f" (threshold {threshold:g})")
    elif isinstance(result, dict) and "pass" in result:
        score = result.get("score")
        passed = bool(result["pass"])
        if threshold is not None and isinstance(score, (int, float)) and score < threshold:
            passed = False
        reason = str(result.get("reason") or "")
        evidence = f"pass {str(passed).lower()}" + (
            f", score {score:g}" if isinstance(score, (int, float)) else ""
        )
        evidence += f": {reason[:160]}" if reason else ""
    else:
        shown = json.dumps(result, ensure_ascii=False, default=str)[:80]
        return False, f"returned {shown}, not a boolean, a number or a grading result"
    return passed != inverse, evidence


def _number(v: Any) -> float | None:
    try:
        return float(v) if isinstance(v, str) and v.strip() else None
    except ValueError:
        return None


def as_text(value: Any) -> str:
    """What a code check reads after a transform: text as is, anything else as JSON (promptfoo's
    outputString)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
