"""The clone's top-level app.py: `streamlit run app.py` serves the packaged desk behind the locks
`abeq app` sets (AppTest runs it as Streamlit does; a real `streamlit run app.py` in Chromium was checked
by hand when it was written: refused without the token, the link printed in its terminal)."""

import os
import re

import pytest
from conftest import ROOT

from abeq.cli import app as cli_app
from abeq.desk import access

APP = str(ROOT / "app.py")


@pytest.fixture
def clean_env(db, monkeypatch):
    """No launch of `abeq app` in the environment; whatever app.py sets is undone afterwards."""
    saved = dict(os.environ)
    for key in (access.TOKEN_ENV, cli_app.LAUNCHED_ENV):
        os.environ.pop(key, None)
    yield
    os.environ.clear()
    os.environ.update(saved)


def run(token: str | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=60)
    if token is not None:
        at.query_params["token"] = token
    return at.run()


def test_streamlit_run_app_py_serves_the_desk_only_with_the_token_it_prints(clean_env, capfd):
    at = run()
    assert not at.exception and [e.value for e in at.error] == [access.REFUSED]
    assert not at.sidebar.selectbox  # nothing of the desk
    printed = capfd.readouterr().err
    token = re.search(r"abeq review desk: open http://127\.0\.0\.1:\d+/\?token=(\S+)", printed).group(1)
    assert [e.value for e in run("guess").error] == [access.REFUSED]
    at = run(token)
    assert not at.exception and not at.error
    assert at.sidebar.selectbox(key="review_id").value is not None  # the packaged desk, its pages
    assert "abeq review desk: open" not in capfd.readouterr().err  # one token per server, said once


@pytest.mark.parametrize(
    "option, value, said",
    [
        ("server.address", "0.0.0.0", "not a loopback address"),
        ("server.allowedHosts", [], "any Host"),
        ("server.allowedHosts", ["localhost", "evil.example"], "evil.example"),
    ],
)
def test_a_server_others_could_reach_is_refused_naming_abeq_app(clean_env, option, value, said):
    from streamlit import config

    before = config.get_option(option)
    config.set_option(option, value)
    try:
        at = run()
    finally:
        config.set_option(option, before)
    assert not at.exception and len(at.error) == 1
    assert said in at.error[0].value and "abeq app" in at.error[0].value
    assert access.TOKEN_ENV not in os.environ and not at.sidebar.selectbox
