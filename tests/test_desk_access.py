"""No web page, and no one without the launch link, can drive the desk (issue 27, item 1).

`abeq app` answers only to loopback Host names (a DNS-rebinding page sends its own Host and is
refused at the WebSocket), refuses a non-loopback bind unless told, and admits only a browser
that opened its printed link with the launch token.
"""

from __future__ import annotations

import base64
import os
import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest
import zygote
from conftest import DESK_APP

from abeq.desk import access, links
from abeq.testing.process import free_port, stop, wait_healthy


def test_loopback_addresses_are_told_apart_from_the_rest():
    assert all(map(access.is_loopback, ["127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost"]))
    assert not any(map(access.is_loopback, ["0.0.0.0", "::", "192.168.1.4", "example.com", ""]))


def test_the_hosts_are_loopback_the_bound_address_and_the_extra_ones():
    assert access.allowed_hosts("127.0.0.1") == ["localhost", "127.0.0.1", "::1"]
    assert access.allowed_hosts("0.0.0.0", ["desk.lan"]) == ["localhost", "127.0.0.1", "::1", "desk.lan"]
    assert access.allowed_hosts("10.1.2.3")[-1] == "10.1.2.3"


def test_a_session_is_admitted_with_the_token_and_keeps_it_in_the_url():
    env = {access.TOKEN_ENV: "s3cret"}
    params, state = {}, {}
    assert not access.admitted(params, state, env)
    assert not access.admitted({"token": "guess"}, state, env)
    params = {"token": "s3cret"}
    assert access.admitted(params, state, env)
    params.clear()  # a page switch drops the query string; the session stays admitted
    assert access.admitted(params, state, env) and params == {"token": "s3cret"}
    assert access.admitted({}, {}, {})  # started without a token (plain `streamlit run`)


def test_links_the_desk_draws_carry_the_token(monkeypatch):
    monkeypatch.setenv(access.TOKEN_ENV, "t0k")
    assert links.review_url("r", 3) == "review?review=r&run=3&token=t0k"
    monkeypatch.delenv(access.TOKEN_ENV)
    assert links.review_url("r", 3) == "review?review=r&run=3"


def test_the_desk_shows_nothing_without_the_token(db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(access.TOKEN_ENV, "launch-token")
    at = AppTest.from_file(str(DESK_APP), default_timeout=60).run()
    assert not at.exception
    assert [e.value for e in at.error] == [access.REFUSED]
    assert not at.sidebar.selectbox  # no review picker, no page
    at.query_params["token"] = "launch-token"
    at.run()
    assert not at.exception and not at.error
    assert at.sidebar.selectbox(key="review_id").value is not None


def _cli(*args: str) -> subprocess.CompletedProcess:
    return zygote.run(
        [sys.executable, "-m", "abeq", "app", *args], capture_output=True, text=True, timeout=60
    )


def test_a_non_loopback_address_is_refused_unless_allowed():
    r = _cli("--address", "0.0.0.0", "--port", "1")
    assert r.returncode == 2 and "not a loopback address" in r.stderr and "--allow-remote" in r.stderr
    r = _cli("--address", "0.0.0.0", "--allow-remote", "--no-token", "--port", "1")
    assert r.returncode == 2 and "--no-token" in r.stderr


@contextmanager
def abeq_app(tmp_path, *args: str):
    """`abeq app` on a free port; yields (port, the link it printed)."""
    port, out = free_port(), tmp_path / "app.out"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
    env.pop(access.TOKEN_ENV, None)
    with open(out, "w") as sink:
        proc = zygote.popen(
            [sys.executable, "-m", "abeq", "app", "--port", str(port), "--db", str(tmp_path / "a.db"), *args],
            cwd=tmp_path,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        try:
            wait_healthy(f"http://127.0.0.1:{port}", proc)
        except RuntimeError as e:
            raise AssertionError(f"{e}: {out.read_text()}") from None
        link = re.search(r"open (http://\S+)", out.read_text()).group(1)
        yield port, link
    finally:
        stop(proc, 15)


def _upgrade(port: int, host: str) -> str:
    """The status line of a WebSocket upgrade to the desk's stream with this Host header."""
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: streamlit\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request.encode())
        return s.recv(4096).decode("latin-1").split("\r\n", 1)[0]


def test_abeq_app_refuses_a_foreign_host_and_prints_a_token_link(tmp_path):
    with abeq_app(tmp_path) as (port, link):
        assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/\?token=[\w-]{{20,}}", link)
        assert " 403" in _upgrade(port, f"evil.example:{port}")  # DNS rebinding: its own Host
        assert " 101" in _upgrade(port, f"127.0.0.1:{port}")
        assert " 101" in _upgrade(port, f"localhost:{port}")


@pytest.mark.e2e
@pytest.mark.skipif(
    not os.path.exists("/usr/bin/chromium") and not os.environ.get("CI"), reason="no chromium"
)
def test_a_rebinding_page_cannot_drive_the_desk_even_with_the_link(tmp_path):
    """Chromium resolves evil.example to 127.0.0.1, as a rebinding attack makes it do."""
    from playwright.sync_api import sync_playwright

    with abeq_app(tmp_path) as (port, link), sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--host-resolver-rules=MAP evil.example 127.0.0.1",
            ],
        )
        try:
            page = browser.new_page()
            page.goto(link)
            page.get_by_text("abeq review desk").first.wait_for(timeout=30_000)  # the real link works
            evil = browser.new_page()
            evil.goto(link.replace("127.0.0.1", "evil.example"))
            time.sleep(5)
            assert evil.get_by_text("abeq review desk").count() == 0
            assert evil.get_by_role("button").filter(has_text="Start").count() == 0
            stranger = browser.new_page()  # the right host, no token
            stranger.goto(link.split("?")[0])
            stranger.get_by_text("prints a link with a token").wait_for(timeout=30_000)
            assert stranger.get_by_text("Documents").count() == 0
        finally:
            browser.close()
