"""What the browser tests share besides fixtures: a desk server per test, page navigation, screenshots."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import zygote

from abeq.testing.process import free_port, stop, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
# The browser the tests drive: Chromium's headless build (Debian's chromium-headless-shell, which
# Playwright also uses for headless runs): the same Blink and V8 as the browser, without its window
# and compositor layers; a page of the desk costs it about a quarter less CPU than the full browser
# in headless mode (bench/bench_browsers.py). The main job's test drives the full browser a user
# has, FULL_CHROMIUM.
CHROMIUM = "/usr/bin/chromium-headless-shell"
FULL_CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# What the tests wait for is whether the desk shows a thing, not how fast: on a loaded 2-core
# machine (test workers beside this one) a redraw can outlast Playwright's 30 s default.
WAIT_MS = 60_000


def new_context(browser):
    """A fresh browser context (no cookies, no session) with the tests' viewport and wait."""
    ctx = browser.new_context(viewport={"width": 1440, "height": 1000})
    ctx.set_default_timeout(WAIT_MS)
    return ctx


@contextmanager
def desk(db: Path, env: dict[str, str] | None = None):
    """`streamlit run abeq/desk/app.py` on a free port and the given database (and `env` on top of
    this process's environment), until the test ends."""
    port = free_port()
    env = {
        **os.environ,
        **(env or {}),
        "ABEQ_DB": str(db),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_OFFLINE_MODE": "true",
    }
    log = open(db.with_suffix(".log"), "w")
    proc = zygote.popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "abeq/desk/app.py",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_healthy(url, proc)
        except RuntimeError as e:
            raise RuntimeError(f"{e}: {db.with_suffix('.log').read_text()[-2000:]}") from None
        yield url
    finally:
        stop(proc)
        log.close()


# The desk is idle: no script run requested or running (Streamlit's own e2e tests wait on stApp's
# data-test-script-state the same way), and nothing left drawn from the run before.
IDLE = """document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state')
          === 'notRunning' && !document.querySelector('[data-stale="true"]')"""


def settle(page, quiet_ms: int = 300) -> None:
    """Wait, as a person would, until the desk has finished redrawing and stayed so for `quiet_ms`:
    a key press, a click or typed text then reaches the elements of the current draw. A widget drawn
    again by a rerun still in flight comes back as the server has it (an empty field, a closed
    popover), and what was typed into the old one is gone."""
    page.evaluate("() => { window.__abeqIdleSince = undefined; }")
    page.wait_for_function(
        f"""(quiet) => {{
              if (!({IDLE})) {{ window.__abeqIdleSince = undefined; return false; }}
              window.__abeqIdleSince ??= Date.now();
              return Date.now() - window.__abeqIdleSince >= quiet;
            }}""",
        arg=quiet_ms,
        polling=50,
    )


def nav(page, title: str) -> None:
    """Open a page from the sidebar, as a person does: click, then wait until it has drawn (its
    heading is there before the rest of its script has run)."""
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    page.get_by_role("heading", name=title, exact=True).wait_for()
    settle(page)


def open_box(page, title: str, shows) -> None:
    """Open an expander whose opening reruns the page (`on_change="rerun"`: its controls are drawn only
    when it is open), and wait until that rerun has drawn `shows`, one of them, and ended. `settle`
    alone is not enough here: until the desk starts the rerun the page still reads idle, so on a
    loaded machine it can return before the rerun has begun, and what is typed or clicked next lands
    in the middle of it."""
    page.get_by_text(title).click()
    shows.wait_for()
    settle(page)


def screenshot(page, path: Path) -> None:
    """The whole page: Streamlit scrolls inside its main pane, so grow the viewport to fit it first."""
    page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")
    height = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": 1440, "height": min(12_000, height + 40)})
    page.wait_for_timeout(800)
    path.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 1000})
