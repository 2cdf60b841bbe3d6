"""Integration: whole runs through a real OpenAI-compatible HTTP server on loopback."""

import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import EXAMPLE

from abeq.cli import main
from abeq.testing.synthetic import example_run_args


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """The loopback server in its own process, as a user's vLLM or proxy would be."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "abeq.testing.loopback", "--port", str(port), "--latency", "0.01"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            if urllib.request.urlopen(url + "/health", timeout=1).status == 200:
                break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("loopback server did not start")
    yield url + "/v1"
    proc.terminate()
    proc.wait(10)


@pytest.fixture(autouse=True, params=["fast", "litellm"])
def transport(request, monkeypatch):
    """Every test here runs on both HTTP transports: abeq's lean one and litellm's."""
    monkeypatch.setenv("ABEQ_TRANSPORT", request.param)
    return request.param


def stats(url):
    return json.loads(urllib.request.urlopen(url.rsplit("/v1", 1)[0] + "/stats").read())


def http_run(tmp_path, server, candidate: str, *extra: str) -> list[str]:
    """`abeq run` on the example, its set confirmed, over `server`; the report in r.json."""
    db, out = tmp_path / "abeq.db", str(tmp_path / "r.json")
    return example_run_args(
        EXAMPLE / "transfer-set.json", db, server, candidate, "--confirm", "--out", out, *extra
    )


def test_cli_run_over_http_gives_the_report(tmp_path, server):
    before = stats(server)["requests"]
    out = tmp_path / "r.json"
    code = main(http_run(tmp_path, server, "candidate-lossy.md"))
    rep = json.loads(out.read_text())
    assert code == 1 and rep["summary"]["regressions"] == 7 and rep["errors"] == []
    assert stats(server)["requests"] - before == 21  # every call really crossed HTTP


def test_each_transport_is_the_client_that_called(tmp_path, server, transport):
    before = stats(server)["clients"]
    main(http_run(tmp_path, server, "candidate-faithful.md"))
    after = stats(server)["clients"]
    grew = {k for k in after if after[k] > before.get(k, 0)}
    # aiohttp's default User-Agent is "Python/3.x aiohttp/..."; the OpenAI SDK under litellm sends
    # "AsyncOpenAI/Python ..."
    assert grew == ({"Python"} if transport == "fast" else {"AsyncOpenAI"}), after


def test_round_two_over_http_sends_only_candidate_and_judge_calls(tmp_path, server):
    main(http_run(tmp_path, server, "candidate-lossy.md"))
    before = stats(server)["requests"]
    assert main(http_run(tmp_path, server, "candidate-faithful.md")) == 0
    assert stats(server)["requests"] - before == 14


def test_unreachable_server_is_an_error_not_a_verdict(run_args, tmp_path):
    out = tmp_path / "r.json"
    nowhere = {"runner_model": "openai/x", "api_base": f"http://127.0.0.1:{free_port()}/v1"}
    code = main(run_args(candidate="candidate-lossy.md", out=out, timeout=5, **nowhere))
    rep = json.loads(out.read_text())
    assert code == 3
    assert rep["cases"] == [] and len(rep["errors"]) == 7 and rep["summary"]["pass"] is False


def test_a_priced_model_is_priced_on_both_transports(run_args, tmp_path, server):
    """The same call costs the same whichever transport carried it: litellm's price list, per token."""
    import sqlite3

    from abeq.models import price

    db = tmp_path / "abeq.db"
    models = {"runner_model": "openai/gpt-4o-mini", "judge_model": "openai/scripted", "api_base": server}
    main(run_args(db=db, out=tmp_path / "r.json", **models))
    rows = (
        sqlite3.connect(db)
        .execute(
            "select model, prompt_tokens, completion_tokens, cost from calls where cached = 0 and ok = 1"
        )
        .fetchall()
    )
    runner = [r for r in rows if r[0] == "openai/gpt-4o-mini"]
    assert len(runner) == 14 and all(r[3] and r[3] > 0 for r in runner)
    for _, pt, ct, cost in runner:
        assert cost == pytest.approx(price("openai/gpt-4o-mini", pt, ct), rel=1e-6)
    assert all(r[3] is None for r in rows if r[0] == "openai/scripted")  # a self-hosted model has no price


def test_each_side_has_its_own_server_and_a_builtin_model_none(tmp_path, server):
    """A scripted runner with an HTTP judge: the api base is the judge's, and the runner's cache holds."""
    import sqlite3

    db = tmp_path / "abeq.db"
    base = [
        "run",
        "--original",
        str(EXAMPLE / "SKILL.md"),
        "--candidate",
        str(EXAMPLE / "candidate-lossy.md"),
        "--transfer-set",
        str(EXAMPLE / "transfer-set.json"),
        "--runner-model",
        "scripted/rules",
        "--db",
        str(db),
        "--confirm",
        "--quiet",
        "--out",
        str(tmp_path / "r.json"),
    ]
    assert main(base) == 1
    before = stats(server)["requests"]
    assert main(base + ["--judge-model", "openai/scripted", "--api-base", server]) == 1
    assert stats(server)["requests"] - before == 7  # only the judge crossed HTTP
    con = sqlite3.connect(db)
    made = con.execute(
        "select kind, count(*) from calls where run_id = 2 and cached = 0 group by kind"
    ).fetchall()
    assert made == [("judge", 7)]  # the runner's transcripts came from the cache
    # --judge-api-base sends the judge elsewhere while the runner keeps --api-base
    before = stats(server)["requests"]
    code = main(
        base[:-2]
        + [
            "--runner-model",
            "openai/scripted",
            "--api-base",
            server,
            "--judge-model",
            "openai/scripted",
            "--judge-api-base",
            f"http://127.0.0.1:{free_port()}/v1",
            "--timeout",
            "3",
            "--max-retries",
            "0",
            "--out",
            str(tmp_path / "r3.json"),
        ]
    )
    assert (
        code == 3 and stats(server)["requests"] - before == 14
    )  # runner calls here, judge calls failed there
