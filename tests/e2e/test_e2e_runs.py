"""The desk tells the truth about runs, in a real Chromium, against a real OpenAI-compatible server in
its own process that counts every request: Cancel with calls queued starts no model call after it;
a reload mid-run and a second reviewer both see "running"; `abeq app` stopped by SIGTERM leaves no
server on the port and marks its run interrupted."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import zygote

from abeq.testing.process import LoopbackProcess, free_port, wait_healthy

from .helpers import ARTIFACTS, desk, nav, screenshot, settle

# seconds per reply: long enough that the calls in flight are still out when Cancel lands, however
# loaded the machine (a slow browser step must not let them finish first)
LATENCY = 120.0
AFTER_CANCEL = 5.0  # a call started after Cancel would reach the server within milliseconds


def start_run(tab, url: str, api_base: str, concurrency: int = 2) -> None:
    """Confirm the example's cases and start a run on the loopback server from the Run page."""
    tab.goto(url)
    tab.get_by_role("heading", name="Documents", exact=True).wait_for(timeout=30_000)
    nav(tab, "Transfer set")
    tab.get_by_role("button", name="Confirm", exact=True).click()
    tab.get_by_text("Confirmed 20").wait_for()
    nav(tab, "Run")
    for label, value in (
        ("Runner model (any litellm model string)", "openai/scripted"),
        ("Judge model", "openai/scripted"),
        ("API base (Ollama, vLLM, any OpenAI-compatible server; blank for hosted APIs)", api_base),
        ("Concurrency (model calls in flight; 1 = one case after another)", str(concurrency)),
    ):
        field = tab.get_by_label(label)
        field.fill(value)
        field.press("Enter")
        settle(tab)  # each Enter reruns the page: the next field, and Start, as it redraws them
    tab.get_by_role("button", name="Start run").click()


def wait_for_requests(srv: LoopbackProcess, n: int, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while srv.stats()["requests"] < n:
        assert time.time() < deadline, srv.stats()
        time.sleep(0.05)


def test_cancel_with_calls_queued_starts_no_call_and_a_reload_shows_running(browser, page, tmp_path):
    db = tmp_path / "desk.db"
    with LoopbackProcess(latency=LATENCY) as srv, desk(db) as url:
        start_run(page, url, srv.url)
        wait_for_requests(srv, 2)  # 2 calls in flight, 12 runner calls queued behind them
        page.reload()  # a reload mid-run reattaches to it
        page.get_by_text("Run 1: 0/7 cases · running").wait_for(timeout=30_000)
        screenshot(page, ARTIFACTS / "run-running.png")
        second = browser.new_context().new_page()  # another reviewer, Review page
        second.goto(f"{url}/review")
        second.get_by_text("running — 0 of 7 judged").wait_for(timeout=30_000)
        screenshot(second, ARTIFACTS / "review-running.png")
        assert second.get_by_text("FAIL").count() == 0
        second.context.close()

        in_flight = srv.stats()["requests"]
        page.get_by_role("button", name="Cancel run").click()
        page.get_by_text("Run 1: 0/7 cases · cancelled").wait_for(timeout=30_000)
        page.get_by_role("button", name="Resume run 1").wait_for()  # listed, with its settings
        page.get_by_text("runner openai/scripted at").first.wait_for()
        screenshot(page, ARTIFACTS / "run-cancelled.png")
        time.sleep(AFTER_CANCEL)
        stats = srv.stats()
    assert in_flight == 2 and stats["requests"] == in_flight  # nothing started after Cancel
    assert stats["ok"] == 0  # the two in flight were dropped, not awaited
    con = sqlite3.connect(db)
    assert con.execute("select status from runs").fetchone() == ("cancelled",)
    assert con.execute("select count(*) from run_cases where status = 'pending'").fetchone() == (7,)


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_abeq_app_stopped_by_sigterm_stops_its_server_and_interrupts_its_run(page, tmp_path):
    db, port = tmp_path / "desk.db", free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
    out = tmp_path / "app.out"
    with open(out, "w") as sink:
        app = zygote.popen(
            [sys.executable, "-m", "abeq", "app", "--port", str(port), "--db", str(db)],
            cwd=tmp_path,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, app)
        link = out.read_text().split("open ", 1)[1].split()[0]  # the launch link, with its token
        with LoopbackProcess(latency=LATENCY) as srv:
            start_run(page, link, srv.url)
            wait_for_requests(srv, 2)
            app.send_signal(signal.SIGTERM)
            assert app.wait(30) is not None
            time.sleep(0.5)
            assert not _port_open(port)  # no server left behind on the port
            assert srv.stats()["requests"] == 2
    finally:
        if app.poll() is None:
            app.kill()
    con = sqlite3.connect(db)
    assert con.execute("select status from runs").fetchone() == ("interrupted",)  # written, not inferred
