"""The command runner mode: any agent CLI as the runner.

The command runs through the shell in a fresh copy of the case's workspace, with the runner prompt
(instructions, case input, gate answers, the request for a six-field self-report as JSON) on
standard input and ABEQ_DOCUMENT / ABEQ_VARIANT / ABEQ_CASE_ID in its environment. Only an
allow-list of environment variables reaches it (API keys by name). It runs in a session of its own:
at the timeout, and whatever it left running when it exits, the whole process group is killed.

Standard output is the transcript. A JSON object in it with `self_report` is the self-report; the
fields it lacks (all six when there is none) say "not reported" and are recorded as such, so the
judge works from the transcript and the workspace changes instead of an invented report. A command
that fails (non-zero exit, timeout) is an error for the case, never cached.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from typing import Any

from ...documents import Document
from ...errors import ModelCallError
from ...models.ask import Outcome
from ...models.call import CallPolicy
from ...models.http import keep_secret, redact
from ...prompts import messages
from ...schemas import NOT_REPORTED, SELF_REPORT_FIELDS, Case, GateHit, ObservedRun, SelfReport
from .agent_streams import read_stream
from .modes import RunnerMode, mode_prompt
from .reaper import RUN_MARK, kill_marked, new_mark
from .workspace import RunWorkspace

# what a command may see of abeq's environment: the basics a program needs, and model credentials
# by name (their values are never stored); more with --runner-env NAME
BASE_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
    "TERM", "TZ", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
)  # fmt: skip
KEY_ENV = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "OPENAI_API_KEY", "OPENAI_BASE_URL",
    "CODEX_HOME", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_OPENAI_API_KEY", "OPENROUTER_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY",
    "AWS_PROFILE", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
)  # fmt: skip
# the agents' own settings (the model they use, their timeouts, telemetry, where their config lives),
# passed by prefix: dropping ANTHROPIC_MODEL silently ran the agent's default model instead
AGENT_ENV_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "CODEX_", "OPENAI_", "DISABLE_", "BASH_", "MCP_")
AGENT_ENV = ("API_TIMEOUT_MS", "MAX_THINKING_TOKENS", "MAX_MCP_OUTPUT_TOKENS", "CLOUD_ML_REGION", "RUST_LOG")
MAX_STDOUT_BYTES = 1_000_000
MAX_TRANSCRIPT_CHARS = 200_000
STDERR_TAIL = 2_000
NO_OUTPUT = "(the runner command wrote nothing to standard output)"


class RunnerCommandError(ModelCallError):
    """The runner command failed: it exited non-zero, timed out or could not start."""


def command_input(case: Case, variant: str, placed_at: str) -> str:
    """What the command reads on standard input: the runner prompt and the case, as data blocks."""
    gates = [g.model_dump() for g in case.gate_responses]
    msgs = messages(
        mode_prompt("command"),
        [
            ("document_path", placed_at),
            ("document_kind", "instruction_file" if variant == "instruction-file" else "skill"),
            ("case_input", case.input),
            ("gate_responses", json.dumps(gates, ensure_ascii=False, indent=1)),
        ],
    )
    return "\n\n".join(m["content"] for m in msgs) + "\n"


def passed(name: str, mode: RunnerMode) -> bool:
    """Whether the command sees this variable of abeq's environment."""
    return (name in BASE_ENV or name in KEY_ENV or name in AGENT_ENV or name in mode.env) or name.startswith(
        AGENT_ENV_PREFIXES
    )


def command_env(mode: RunnerMode, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if passed(k, mode)}
    for name in mode.env:  # passed by name: a password, a token under any name; never stored
        keep_secret(os.environ.get(name, ""))
    return {**env, **extra}


def command_notices(mode: RunnerMode) -> list[str]:
    """What a user should know before a command run: the agent settings it will see (they change
    what it does, and abeq cannot see their effect), and a missing --runner-cmd-version."""
    if mode.kind != "command":
        return []
    basics = set(BASE_ENV) | set(KEY_ENV)
    seen = sorted(k for k in os.environ if passed(k, mode) and k not in basics and not _secret(k))
    out = []
    if seen:
        out.append(
            f"the runner command sees these settings of your environment: {', '.join(seen)} "
            "(name what they choose, e.g. the model, in --runner-cmd-version)"
        )
    if not mode.command_version.strip():
        out.append(
            "no --runner-cmd-version: abeq cannot see which agent version or model the command runs, so a "
            "changed model would reuse the cached runs of the old one; name them (e.g. "
            '--runner-cmd-version "claude-code 2.1.197, claude-sonnet-4-5")'
        )
    return out


def _secret(name: str) -> bool:
    return any(w in name for w in ("KEY", "TOKEN", "SECRET", "PASSWORD"))


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _drain(stream: asyncio.StreamReader, limit: int) -> tuple[bytes, int]:
    """Read a stream to its end, keeping its first `limit` bytes (a chatty command cannot fill memory)."""
    kept, total = bytearray(), 0
    while chunk := await stream.read(65536):
        total += len(chunk)
        if len(kept) < limit:
            kept += chunk[: limit - len(kept)]
    return bytes(kept), total


async def _feed(proc, data: bytes) -> None:
    try:
        proc.stdin.write(data)
        await proc.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # a command that does not read its input
    finally:
        proc.stdin.close()


async def invoke(command: str, cwd: str, stdin: str, env: dict, timeout: float) -> tuple[str, str, float]:
    """Run the command; (stdout, stderr tail, seconds). Raises RunnerCommandError when it fails."""
    t0 = time.perf_counter()
    token = new_mark()
    env = {**env, RUN_MARK: token}  # what it leaves behind in a session of its own is found by this
    pipe = asyncio.subprocess.PIPE
    try:
        # Not in a pid namespace of its own (bubblewrap's --unshare-pid would end a setsid child with
        # it): an agent's own sandbox does not work inside one (Codex ran no command there).
        proc = await asyncio.create_subprocess_shell(
            command,
            cwd=cwd,
            env=env,
            stdin=pipe,
            stdout=pipe,
            stderr=pipe,
            start_new_session=True,  # its own process group: everything it starts can be stopped
        )
    except OSError as e:
        raise RunnerCommandError(f"runner command could not start: {e}") from None
    assert proc.stdout is not None and proc.stderr is not None  # both are pipes
    work = asyncio.gather(
        _feed(proc, stdin.encode()), _drain(proc.stdout, MAX_STDOUT_BYTES), _drain(proc.stderr, 1 << 20)
    )
    try:
        _, (out, total), (err, _) = await asyncio.wait_for(work, timeout)
        code = await asyncio.wait_for(proc.wait(), timeout)
    except (asyncio.TimeoutError, asyncio.CancelledError) as e:
        _kill_group(proc.pid)
        await proc.wait()
        work.cancel()
        # retrieve the cancelled gather's outcome, or asyncio reports "exception was never retrieved"
        await asyncio.gather(work, return_exceptions=True)
        if isinstance(e, asyncio.CancelledError):
            raise
        raise RunnerCommandError(
            f"runner command timed out after {timeout:g} s; it and every process it started were stopped"
        ) from None
    finally:
        _kill_group(proc.pid)  # whatever it left running in the background goes with the workspace
        kill_marked(token)  # and what left its group (setsid) but kept its environment
    stderr = redact(err.decode("utf-8", errors="replace"))[-STDERR_TAIL:]
    text = redact(out.decode("utf-8", errors="replace"))  # an agent may print a key it was given
    if code != 0:
        raise failed(code, text, stderr)
    if total > len(out):
        text += f"\n[… standard output cut: {total - len(out):,} more bytes]"
    return text, stderr, time.perf_counter() - t0


def failed(code: int, stdout: str, stderr: str) -> RunnerCommandError:
    """The error for a command that exited non-zero: the reason its event stream gives (Claude Code
    writes its errors to stdout and leaves stderr empty), else its stderr, else the end of its
    stdout; with what it reported having spent (failed agent runs are billed too)."""
    stream = read_stream(stdout)
    reason = stream.failure or stderr.strip() or stdout.strip() or "(it wrote nothing)"
    pt, ct, cost = _usage(stream.facts or read_report(stdout)[2])
    err = RunnerCommandError(f"runner command exited with status {code}: {reason[-500:]}")
    if pt or ct or cost:
        err.spent(pt, ct, cost)
    return err


def _json_objects(text: str, depth: int = 0):
    """JSON objects in the text, last first: each that starts a line (or the text), and the text of
    a `result` field inside one (Claude Code's --output-format json wraps the answer so)."""
    decoder = json.JSONDecoder()
    starts = [i for i, ch in enumerate(text) if ch == "{" and (i == 0 or text[i - 1] in "\n`")]
    for i in reversed(starts[-200:]):
        try:
            obj, _ = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj
            if depth < 2 and isinstance(obj.get("result"), str):
                yield from _json_objects(obj["result"], depth + 1)


def _as_text(v) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return "\n".join(v)
    return json.dumps(v, ensure_ascii=False)


def read_report(stdout: str) -> tuple[SelfReport, list[str], dict]:
    """(self-report, fields not reported, usage facts) from the command's standard output."""
    found: Any = None  # the self_report object, as JSON gave it
    facts: dict[str, Any] = {}
    for obj in _json_objects(stdout):
        if "total_cost_usd" in obj or "usage" in obj:
            facts = facts or obj
        if found is None and isinstance(obj.get("self_report"), dict):
            found = obj["self_report"]
    given = found or {}
    fields: dict[str, Any] = {}
    missing: list[str] = []
    for name in SELF_REPORT_FIELDS:
        value: Any = given.get(name)  # JSON: a malformed gates_hit fails below, as not reported
        if name == "gates_hit":
            try:
                fields[name] = [GateHit.model_validate(g).model_dump() for g in value]
            except Exception:  # noqa: BLE001 — absent or malformed: not reported, never "none"
                fields[name] = []
                missing.append(name)
        elif value is None or not _as_text(value).strip():
            fields[name] = NOT_REPORTED
            missing.append(name)
        else:
            fields[name] = _as_text(value)
    return SelfReport.model_validate(fields), missing, facts


def _usage(facts: dict) -> tuple[int, int, float | None]:
    given = facts.get("usage")
    usage = given if isinstance(given, dict) else {}
    pt = sum(
        int(usage.get(k) or 0)
        for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    cost = facts.get("total_cost_usd")
    return pt, int(usage.get("output_tokens") or 0), float(cost) if isinstance(cost, (int, float)) else None


async def run_command(
    document: Document,
    case: Case,
    variant: str,
    mode: RunnerMode,
    placed_at: str,
    policy: CallPolicy,
) -> Outcome:
    """One document version on one case through the runner command; the value is an ObservedRun.
    Its cost is what the command reported (Claude Code's total_cost_usd), else unknown (None)."""
    with RunWorkspace(case, document, placed_at) as ws:
        env = command_env(
            mode,
            {"ABEQ_DOCUMENT": str(ws.document_path), "ABEQ_VARIANT": variant, "ABEQ_CASE_ID": case.id},
        )
        stdin = command_input(case, variant, placed_at)
        async with policy.semaphore or contextlib.nullcontext():
            policy.check()  # after the wait for a slot: nothing starts once the run is cancelled
            stdout, _, seconds = await invoke(mode.command, str(ws.root), stdin, env, mode.timeout)
        changes = ws.changes()
    stream = read_stream(stdout.replace(str(ws.root), "."))  # the copy's temporary path is no behaviour
    report, missing, facts = read_report(stream.final if stream.kind != "text" else stdout)
    transcript = stream.transcript[:MAX_TRANSCRIPT_CHARS] if stdout.strip() else NO_OUTPUT
    observed = ObservedRun(
        transcript=transcript, self_report=report, workspace_changes=changes, not_reported=missing
    )
    pt, ct, cost = _usage(stream.facts or facts)
    return Outcome(observed, stdout[-4000:], pt, ct, cost, seconds, 1)
