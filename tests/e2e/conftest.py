"""The desk in a real Chromium: one browser per test process for the whole package (helpers.py has
the rest).

Every test in this package is marked `e2e`. They are not one xdist group: most of a browser test's
time is waiting on a desk that draws, so kept on one worker they would be the fast part's long pole
(~13 minutes of tests); spread over the workers, each starts Chromium once. Without Playwright the
package is skipped, so `pytest -m "not e2e"` collects.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("playwright")

from playwright.sync_api import expect  # noqa: E402

from .helpers import CHROMIUM, CHROMIUM_ARGS, FULL_CHROMIUM, new_context  # noqa: E402

expect.set_options(timeout=20_000)  # not 5 s: see helpers.WAIT_MS

HERE = Path(__file__).resolve().parent
# Locally a missing browser skips; in CI (.ci/run installs it) a missing browser must fail.
NO_BROWSER = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(FULL_CHROMIUM).exists()) and not os.environ.get("CI"),
    reason=f"{CHROMIUM} or {FULL_CHROMIUM} missing (apt-get install -y chromium chromium-headless-shell)",
)


@pytest.hookimpl(tryfirst=True)  # before -m deselects and before xdist reads the groups
def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in Path(item.fspath).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            item.add_marker(NO_BROWSER)  # the main job's browser test is grouped in tests/conftest.py


# Our own fixture rather than pytest-playwright's session-scoped one: that keeps the sync API's
# event loop running on the main thread for the rest of the session, and every later test that
# calls asyncio.run() then fails. Scoped to this package (whose tests xdist keeps together on one
# worker), the loop is gone when the package ends.
@pytest.fixture(scope="package")
def package_playwright():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="package")
def browser(package_playwright):
    b = package_playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield b
    b.close()


@pytest.fixture
def full_browser(package_playwright):
    """The full Chromium a user has (in headless mode), for the test that stands for the main job."""
    b = package_playwright.chromium.launch(executable_path=FULL_CHROMIUM, args=CHROMIUM_ARGS)
    yield b
    b.close()


@pytest.fixture
def context(browser):
    ctx = new_context(browser)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context):
    return context.new_page()
