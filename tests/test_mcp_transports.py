"""`abeq mcp` as an agent starts it: over stdio (the SDK's client launches the command), and over
streamable HTTP on loopback, where a request without the start-up token is refused."""

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import zygote
from conftest import ROOT
from test_mcp import project  # noqa: F401  (the fixture)


def env(**extra) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def test_over_stdio_the_sdk_client_lists_and_calls(project, tmp_path):  # noqa: F811
    from mcp import Client, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "abeq", "mcp", "--allow-model", "scripted/*"],
        cwd=str(project),
        env=env(),
    )
    # the server's stderr into a real file: stdio_client's default errlog is the sys.stderr of when
    # mcp was first imported, which in a test run may be an earlier test's capsys (no fileno)
    errlog = tmp_path / "server.err"

    async def go():
        with open(errlog, "w") as err:
            async with Client(stdio_client(params, errlog=err)) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                r = await client.call_tool(
                    "check_set", {"original": "SKILL.md", "transfer_set": "transfer-set.json"}
                )
                return names, r

    try:
        names, r = asyncio.run(go())
    except Exception as e:
        raise AssertionError(f"the server's stderr:\n{errlog.read_text()[-2000:]}") from e
    assert "run" in names and not r.is_error and r.structured_content["cases"] == 7, errlog.read_text()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_over_http_only_the_token_gets_in(project):  # noqa: F811
    from mcp import Client

    port, token = free_port(), "t0ken-for-this-test"
    proc = zygote.popen(
        [sys.executable, "-m", "abeq", "mcp", "--http", str(port), "--allow-model", "scripted/*"],
        cwd=project,
        env=env(ABEQ_MCP_TOKEN=token),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(100):
            try:
                urllib.request.urlopen(url, timeout=1)
            except urllib.error.HTTPError as e:
                refused = e.code
                break
            except OSError:
                time.sleep(0.2)
        assert refused == 401  # no token

        async def go():
            async with Client(f"{url}?token={token}") as client:
                return {t.name for t in (await client.list_tools()).tools}

        assert "report" in asyncio.run(go())
        # with the token but a foreign Host (a page whose name resolves to 127.0.0.1): refused
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}'
        req = urllib.request.Request(f"{url}?token={token}", data=body, method="POST")
        req.add_header("Host", "evil.example")
        req.add_header("Content-Type", "application/json")
        req.add_header("Accept", "application/json, text/event-stream")
        try:
            urllib.request.urlopen(req, timeout=5)
            status = 200
        except urllib.error.HTTPError as e:
            status = e.code
        assert status in (403, 421)
    finally:
        proc.terminate()
        proc.wait(10)
    assert token in proc.stderr.read()  # printed for the person who started it


def test_a_run_sends_progress_notifications_after_its_answer(project):  # noqa: F811
    """Newline-delimited JSON-RPC on stdio, as any client speaks it: `run` answers with its id, then a
    progress notification on the call's token for each case judged, until the last."""
    import json
    import queue
    import threading

    from test_mcp import confirm

    confirm(project)
    # each call 0.05 s: the run outlives its call's answer
    proc = zygote.popen(
        [sys.executable, "-m", "abeq", "mcp", "--allow-model", "scripted/*"],
        cwd=project, env=env(ABEQ_SCRIPTED_LATENCY="0.05"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        proc.stdin.flush()

    try:
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        }
        send({"id": 1, "method": "initialize", "params": hello})
        assert json.loads(proc.stdout.readline())["id"] == 1
        send({"method": "notifications/initialized"})
        args = {"original": "SKILL.md", "candidate": "candidate-lossy.md",
                "transfer_set": "transfer-set.json", "runner_model": "scripted/rules"}  # fmt: skip
        send({"id": 2, "method": "tools/call",
              "params": {"name": "run", "arguments": args, "_meta": {"progressToken": "tok"}}})  # fmt: skip
        # read lines on a thread: select() on the pipe's fd misses lines already read into the text
        # stream's buffer (two lines arriving together), so the last notification could sit unread
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
        messages, deadline = [], time.time() + 120
        while time.time() < deadline and not any(m.get("params", {}).get("progress") == 7 for m in messages):
            try:
                messages.append(json.loads(lines.get(timeout=1)))
            except queue.Empty:
                continue
    finally:
        proc.kill()
        proc.wait(10)
    answer = next(m for m in messages if m.get("id") == 2)
    assert answer["result"]["structuredContent"]["status"] == "started"
    progress = [m["params"] for m in messages if m.get("method") == "notifications/progress"]
    assert {p["progressToken"] for p in progress} == {"tok"}
    assert [p["progress"] for p in progress][-1] == 7 and progress[-1]["total"] == 7
    # while the call is open a notification may come before its answer (the SDK's progress path:
    # the first, 0/7, does when the run starts at once); the run outlives the call, and its
    # notifications go on after the answer, on the call's token, to the last
    after = messages[messages.index(answer) + 1 :]
    assert [m["params"]["progress"] for m in after if m.get("method") == "notifications/progress"][-1] == 7
