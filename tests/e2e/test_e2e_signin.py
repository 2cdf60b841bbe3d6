"""Reviewers are people (issue 40 item 5): `abeq app` with sign-in, in a real Chromium.

- st.login against a real OpenID provider on loopback (npm's oauth2-mock-server, installed pinned
  into a cache outside the repository, as the agent CLIs are): the browser goes through the
  provider's redirect flow, comes back signed in, agrees a case on Review, and the row in the
  sqlite file names the signed-in person; no secret reaches the database or the desk's log.
- a trusted proxy's identity header: honoured from the proxy's address, ignored (and said so) from
  any other.

Skipped, with the reason, only where npm cannot reach its registry, and never under CI=true.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
import zygote
from playwright.sync_api import expect

from abeq.results.store.store import Store
from abeq.testing.npm import install_once
from abeq.testing.process import free_port, stop, wait_healthy
from abeq.testing.synthetic import synthetic_run

from .helpers import new_context, settle
from .test_e2e_queue import wait_case

MOCK = {"oauth2-mock-server": "9.3.0"}
NPM_DIR = Path(os.environ.get("ABEQ_NPM_CACHE") or Path.home() / ".cache" / "abeq" / "npm").with_name(
    "npm-oidc"
)
PROVIDER = Path(__file__).with_name("oidc_provider.mjs")
ADA = "ada@example.org"
CLIENT_SECRET = "client-secret-" + "s3" * 12
COOKIE_SECRET = "cookie-secret-" + "c0" * 16


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the sign-in test)")
    pytest.skip(reason)


def _installed() -> Path | None:
    pkg = NPM_DIR / "node_modules" / "oauth2-mock-server"
    manifest = pkg / "package.json"
    if manifest.is_file() and json.loads(manifest.read_text()).get("version") == MOCK["oauth2-mock-server"]:
        return pkg
    return None


@pytest.fixture(scope="session")
def mock_server_package() -> Path:
    """oauth2-mock-server, installed from npm once (a lock keeps two test workers from installing at once)."""
    install_once(NPM_DIR, MOCK, _installed, _unavailable, timeout=300)
    pkg = _installed()
    assert pkg is not None
    return pkg


@pytest.fixture(scope="session")
def oidc_issuer(mock_server_package) -> str:
    """A real OpenID provider on 127.0.0.1 for the whole session: its issuer URL."""
    proc = subprocess.Popen(
        ["node", str(PROVIDER), str(mock_server_package), ADA, "Ada Lovelace"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            raise RuntimeError(
                f"the OpenID provider did not start: {proc.stderr.read() if proc.stderr else ''}"
            )
        yield json.loads(line)["issuer"]
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def judged_run(tmp_path):
    db = tmp_path / "desk.db"
    store = Store(str(db))
    run_id = synthetic_run(store, 4, review="first", error_every=0, seed=1)
    store.close()
    return db, run_id


@contextmanager
def abeq_app(cwd: Path, db: Path, *flags: str):
    """`abeq app` in `cwd` (where it reads .streamlit/secrets.toml) until the test ends: its link."""
    port = free_port()
    home = cwd / "home"
    home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_OFFLINE_MODE": "true",
    }
    secrets = cwd / ".streamlit" / "secrets.toml"
    if secrets.exists():  # the desk's port, now that it is known
        secrets.write_text(secrets.read_text().replace("{PORT}", str(port)))
    log_path = cwd / "desk.log"
    log = open(log_path, "w")
    proc = zygote.popen(
        [sys.executable, "-m", "abeq", "app", "--port", str(port), "--db", str(db), *flags],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        m = re.search(r"open (\S+)", first)
        assert m, f"abeq app printed {first!r}: {log_path.read_text()[-2000:]}"
        try:
            wait_healthy(f"http://127.0.0.1:{port}", proc)
        except RuntimeError as e:
            raise RuntimeError(f"{e}: {log_path.read_text()[-2000:]}") from None
        yield m.group(1), log_path
    finally:
        stop(proc)
        log.close()


def shown(text: str) -> re.Pattern:
    """`text` as the desk draws it: Markdown gets a word joiner after '@' (no e-mail autolink)."""
    return re.compile(re.escape(text).replace("@", "@\u2060?"))


def agree_first_case(page, link: str, run_id: int) -> None:
    """Open the run on Review (a new session: the launch token, if any, goes too) and agree its first case."""
    parts = urlsplit(link)
    query = urlencode({"review": "first", "run": run_id, **dict(parse_qsl(parts.query))})
    page.goto(f"{parts.scheme}://{parts.netloc}/review?{query}")
    wait_case(page, "case-0002")
    settle(page)
    expect(page.get_by_label("Reviewer (your name, kept with every action)")).to_have_count(0)
    page.get_by_role("button", name=re.compile("^Agree with the judge")).click()
    page.get_by_text("Agreed with the judge: case-0002").wait_for()


def test_sign_in_through_a_real_provider_records_the_person(browser, oidc_issuer, judged_run, tmp_path):
    db, run_id = judged_run
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(
        "[auth]\n"
        'redirect_uri = "http://127.0.0.1:{PORT}/oauth2callback"\n'
        f'cookie_secret = "{COOKIE_SECRET}"\n'
        'client_id = "abeq-desk"\n'
        f'client_secret = "{CLIENT_SECRET}"\n'
        f'server_metadata_url = "{oidc_issuer}/.well-known/openid-configuration"\n'
    )
    ctx = new_context(browser)
    page = ctx.new_page()
    with abeq_app(tmp_path, db) as (link, log):
        assert "token=" not in link  # signing in is the lock: the provider's callback drops a token
        page.goto(link)
        sign_in = page.get_by_role("button", name="Sign in")
        sign_in.wait_for()
        expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)  # nothing of the desk before it
        sign_in.click()  # to the provider's /authorize, which redirects back to /oauth2callback with a code
        page.get_by_text(shown(f"Signed in as {ADA}")).wait_for()
        agree_first_case(page, link, run_id)
        expect(page.get_by_text(shown(f"Recorded as {ADA} (signed in)."))).to_be_visible()
        page.get_by_role("button", name="Log out").click()  # through the provider's end-session endpoint
        page.get_by_role("button", name="Sign in").wait_for()
        desk_log = log.read_text()
    ctx.close()
    con = sqlite3.connect(db)
    assert con.execute("select case_id, action, reviewer from overrides").fetchall() == [
        ("case-0002", "agree", ADA)
    ]
    con.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("desk.db*"))
    for secret in (CLIENT_SECRET, COOKIE_SECRET):
        assert secret.encode() not in raw and secret not in desk_log


def test_a_proxy_header_counts_only_from_the_trusted_address(browser, judged_run, tmp_path):
    db, run_id = judged_run
    forged = {"X-Forwarded-Email": "bob@example.org"}
    # the browser connects from 127.0.0.1: the proxy's address for the first desk, not for the second
    for trusted, honoured in (("127.0.0.1", True), ("10.9.8.7", False)):
        ctx = browser.new_context(viewport={"width": 1440, "height": 1000}, extra_http_headers=forged)
        ctx.set_default_timeout(60_000)
        page = ctx.new_page()
        with abeq_app(tmp_path, db, "--trusted-proxy", trusted, "--identity-header", "X-Forwarded-Email") as (
            link,
            _,
        ):
            page.goto(link)
            if honoured:
                page.get_by_text(shown("Signed in as bob@example.org (through the team's proxy)")).wait_for()
                agree_first_case(page, link, run_id)
            else:
                page.get_by_text("header was ignored: this connection comes from this computer").wait_for()
                expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)
                expect(page.get_by_text("Signed in as")).to_have_count(0)
        ctx.close()
    con = sqlite3.connect(db)
    assert con.execute("select case_id, action, reviewer from overrides").fetchall() == [
        ("case-0002", "agree", "bob@example.org")
    ]
