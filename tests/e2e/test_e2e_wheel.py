"""`abeq app` from the installed wheel (tests/installed.py), started outside the checkout: every page
of the desk loads in Chromium with no error."""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from abeq.testing.process import free_port, stop, wait_healthy

from .helpers import nav

# on the worker that builds and installs the wheel for tests/test_wheel.py (once per test process)
pytestmark = pytest.mark.xdist_group("wheel")

PAGES = ["Documents", "Transfer set", "Run", "Review", "History", "Compare"]


def test_the_installed_desk_serves_every_page(installed_wheel, page):
    w, port = installed_wheel, free_port()
    log_path = w.home / "app.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [w.abeq, "app", "--port", str(port), "--db", "desk.db"],
            cwd=w.home,
            env=w.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        try:
            wait_healthy(f"http://127.0.0.1:{port}", proc)
        except RuntimeError as e:
            raise AssertionError(f"{e}: {log_path.read_text()[-2000:]}") from None
        deadline = time.time() + 10
        while not (link := re.search(r"open (http://\S+)", log_path.read_text())) and time.time() < deadline:
            time.sleep(0.1)
        assert link, log_path.read_text()
        page.goto(link.group(1))
        page.get_by_role("heading", name="Documents", exact=True).wait_for()
        # the desk's own settings (abeq/desk/.streamlit/config.toml, beside the script) are in force
        # outside the checkout: the theme's sidebar colour, not Streamlit's default
        sidebar = page.get_by_test_id("stSidebar").evaluate("e => getComputedStyle(e).backgroundColor")
        assert sidebar == "rgb(246, 248, 250)"
        for title in PAGES:
            nav(page, title)  # and its script has finished
            assert page.get_by_test_id("stException").count() == 0, title
        assert (w.home / "desk.db").is_file()  # opened where `abeq app` was started
    finally:
        stop(proc)
