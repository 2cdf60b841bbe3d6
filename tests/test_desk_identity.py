"""Who acts on the desk (issue 40 item 5): the person signed in with st.login, or the one a trusted
proxy names in a header (from its address only); nobody on a desk of one's own. The browser flows
are in tests/e2e/test_e2e_signin.py."""

from __future__ import annotations

import os

import pytest
from conftest import DESK_APP
from streamlit.runtime.context import StreamlitHeaders

from abeq.cli import main
from abeq.desk import access, identity, session
from abeq.errors import InputError

PROXY = {identity.PROXY_ENV: "127.0.0.1", identity.HEADER_ENV: "X-Forwarded-Email", identity.PEER_ENV: ""}


def headers(**values: str) -> StreamlitHeaders:
    return StreamlitHeaders([(k.replace("_", "-"), v) for k, v in values.items()])


NONE = headers()


def test_a_signed_in_person_is_their_email_else_name_else_subject():
    signed = {"is_logged_in": True, "sub": "u-81", "name": "Ada L", "email": "ada@example.org"}
    assert identity.resolve(signed, NONE, None, {}).who == "ada@example.org"
    assert identity.resolve({**signed, "email": ""}, NONE, None, {}).who == "Ada L"
    me = identity.resolve({"is_logged_in": True, "sub": "u-81\n"}, NONE, None, {})
    assert (me.who, me.via, me.required, me.can_log_in) == ("u-81", "sign-in", True, True)


def test_sign_in_is_required_only_when_a_way_to_sign_in_is_configured():
    assert identity.resolve({}, NONE, None, {}) == identity.Identity()  # a desk of one's own: as before
    out = identity.resolve({"is_logged_in": False}, NONE, None, {})  # [auth] configured, not signed in
    assert (out.who, out.required, out.can_log_in) == (None, True, True)
    assert identity.resolve({}, NONE, None, PROXY).required
    assert identity.resolve({}, NONE, None, {identity.REQUIRE_ENV: "1"}).required


def test_the_proxy_header_counts_only_from_the_proxy_address():
    bob = headers(X_Forwarded_Email=" bob@example.org ")
    # Streamlit reports a loopback peer as None
    assert identity.resolve({}, bob, None, PROXY).who == "bob@example.org"
    far = identity.resolve({}, bob, "10.0.0.5", PROXY)
    assert far.who is None and far.required and "10.0.0.5" in far.note and "127.0.0.1" in far.note
    net = {**PROXY, identity.PROXY_ENV: "10.0.0.0/8"}
    assert identity.resolve({}, bob, "10.0.0.5", net).who == "bob@example.org"
    assert identity.resolve({}, bob, None, net).who is None  # loopback is not 10/8
    assert identity.resolve({}, bob, None, {**PROXY, identity.PROXY_ENV: "::1"}).who == "bob@example.org"
    other = identity.resolve({}, headers(X_Other="bob@example.org"), None, PROXY)
    assert other.who is None and not other.note  # no header: just not signed in


def test_a_header_is_not_believed_where_the_peer_address_could_be_forged():
    bob = headers(X_Forwarded_Email="bob@example.org")
    # uvicorn takes the peer from X-Forwarded-For unless abeq app turned that off
    started_elsewhere = {k: v for k, v in PROXY.items() if k != identity.PEER_ENV}
    out = identity.resolve({}, bob, None, started_elsewhere)
    assert out.who is None and "not started by `abeq app`" in out.note
    twice = StreamlitHeaders([("X-Forwarded-Email", "a@x.org"), ("X-Forwarded-Email", "b@x.org")])
    assert "2 times" in identity.resolve({}, twice, None, PROXY).note


def test_a_signed_in_person_outranks_a_header():
    bob = headers(X_Forwarded_Email="bob@example.org")
    me = identity.resolve({"is_logged_in": True, "email": "ada@example.org"}, bob, None, PROXY)
    assert (me.who, me.via) == ("ada@example.org", "sign-in")


def test_bad_proxy_settings_are_named():
    assert identity.parse_networks("127.0.0.1, 10.0.0.0/24")[1].num_addresses == 256
    with pytest.raises(InputError, match="'proxy.lan' is not an IP address"):
        identity.parse_networks("proxy.lan")
    with pytest.raises(InputError, match="not an HTTP header name"):
        identity.check_header_name("X Email:")


def test_signed_in_the_name_is_the_persons_and_a_url_cannot_change_it():
    state = {session.SIGNED_IN_KEY: "ada@example.org"}
    params = {"reviewer": "mallory"}
    session.keep_reviewer(params, state)
    assert state[session.REVIEWER_KEY] == state["ov_reviewer"] == "ada@example.org"
    assert "reviewer" not in params and session.reviewer_param(state) is None
    state["ov_reviewer"] = "mallory"  # whatever a form left behind
    assert session.acting_reviewer(state) == session.who(state) == "ada@example.org"
    alone = {"ov_reviewer": "ana", session.REVIEWER_KEY: "ana"}  # nobody signed in: as before
    assert session.acting_reviewer(alone) == session.who(alone) == "ana"


AUTH = (
    "[auth]\n"
    'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
    'cookie_secret = "cookie-S3CRET-value"\n'
    'client_id = "desk"\n'
    'client_secret = "client-S3CRET-value"\n'
    'server_metadata_url = "http://127.0.0.1:9/.well-known/openid-configuration"\n'
)


def test_the_auth_section_is_checked_before_the_desk_starts(tmp_path):
    f = tmp_path / "secrets.toml"
    assert identity.sign_in_config(8501, [f]) is None  # no file, no sign-in
    f.write_text(AUTH)
    got = identity.sign_in_config(8600, [f])
    assert got == identity.SignIn(str(f), "http://127.0.0.1:8600/oauth2callback", "127.0.0.1")
    f.write_text(AUTH.replace("{port}", "8501"))
    with pytest.raises(InputError, match="names port 8501, but the desk listens on 8600"):
        identity.sign_in_config(8600, [f])
    f.write_text("\n".join(line for line in AUTH.splitlines() if not line.startswith("client_secret")))
    with pytest.raises(InputError, match=r"\[auth\] lacks client_secret") as e:
        identity.sign_in_config(8600, [f])
    assert e.value.path == str(f) and "S3CRET" not in str(e.value)
    f.write_text(AUTH.replace("/oauth2callback", "/back"))
    with pytest.raises(InputError, match="not the desk's callback address"):
        identity.sign_in_config(8600, [f])
    f.write_text("[auth\n")
    with pytest.raises(InputError, match="cannot read it as TOML"):
        identity.sign_in_config(8600, [f])


@pytest.fixture
def launched(tmp_path, monkeypatch):
    """`abeq app` in tmp_path up to the moment it would become Streamlit: (argv, env) it would exec."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    seen: list = []
    monkeypatch.setattr(os, "execve", lambda exe, argv, env: seen.append((argv, env)))
    return seen


def _hosts(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--server.allowedHosts"]


def test_with_auth_configured_sign_in_replaces_the_token(launched, tmp_path, capsys):
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(AUTH.replace("127.0.0.1:{port}", "desk.lan:{port}"))
    assert main(["app", "--port", "8600", "--db", str(tmp_path / "a.db")]) == 0
    argv, env = launched[0]
    out = capsys.readouterr().out
    assert "open http://desk.lan:8600/\n" in out  # where the provider sends the browser back
    assert "token=" not in out and "Sign-in required (st.login" in out and "S3CRET" not in out
    assert access.TOKEN_ENV not in env and "desk.lan" in _hosts(argv)  # the callback's host is served
    assert env[identity.PEER_ENV] == ""  # the peer address as the connection gives it


def test_a_trusted_proxy_is_handed_to_the_desk(launched, tmp_path):
    db = str(tmp_path / "a.db")
    assert (
        main(["app", "--trusted-proxy", "127.0.0.1", "--identity-header", "X-Auth-Request-Email", "--db", db])
        == 0
    )
    _, env = launched[0]
    assert env[identity.PROXY_ENV] == "127.0.0.1/32" and env[identity.HEADER_ENV] == "X-Auth-Request-Email"
    assert env[access.TOKEN_ENV] and env[identity.PEER_ENV] == ""  # the token still applies
    # sign-in required: dropping the token on a network address is then allowed
    assert (
        main(["app", "--address", "0.0.0.0", "--allow-remote", "--no-token", "--trusted-proxy", "10.0.0.2"])
        == 0
    )


@pytest.mark.parametrize(
    "args, says",
    [
        (["--require-sign-in"], "no way to sign in is configured"),
        (["--identity-header", "X-Email"], "honoured only from a trusted proxy"),
        (["--trusted-proxy", "proxy.lan"], "'proxy.lan' is not an IP address"),
    ],
)
def test_sign_in_settings_that_cannot_work_are_refused(launched, capsys, args, says):
    assert main(["app", *args]) == 2
    assert says in capsys.readouterr().err and not launched


def test_the_desk_shows_nothing_when_sign_in_is_required_and_impossible(db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(identity.REQUIRE_ENV, "1")
    at = AppTest.from_file(str(DESK_APP), default_timeout=60).run()
    assert not at.exception
    assert [e.value for e in at.error] == [identity.NO_WAY_IN]
    assert not at.sidebar.selectbox
