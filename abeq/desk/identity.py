"""Who acts on the desk: a person signed in with Streamlit's `st.login` (OpenID Connect, the `[auth]`
section of the secrets Streamlit reads), or the person a team's proxy vouches for in a header, but
only when the connection comes from the proxy's address. With neither configured, nobody signs in
and the name typed on Review is kept, as on a desk of one's own.

Plain Python: the router hands in `st.user`, the WebSocket's headers and the peer address.

How the peer address reaches us matters. Streamlit serves through uvicorn, which by default
replaces the peer of a connection from 127.0.0.1 or ::1 with the address in its X-Forwarded-For
header: behind a proxy on loopback the peer would read as the browser's address, and a local
process could claim any address it liked. `abeq app` turns that off (FORWARDED_ALLOW_IPS set to
nothing), and a header is honoured only in a server started that way. Streamlit then reports a
loopback peer as no address at all (`st.context.ip_address` is None for 127.0.0.1 and ::1), which
is read here as loopback.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol
from urllib.parse import urlsplit

from ..errors import InputError
from .access import is_loopback

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found]  # only where Python is 3.10

PROXY_ENV = "ABEQ_TRUSTED_PROXY"  # the proxy's addresses or networks, comma-separated
HEADER_ENV = "ABEQ_IDENTITY_HEADER"  # the header it puts the signed-in person in
REQUIRE_ENV = "ABEQ_REQUIRE_SIGN_IN"  # "1": refuse everyone who is not signed in
PEER_ENV = "FORWARDED_ALLOW_IPS"  # uvicorn's list of proxies it rewrites the peer for ("" = none)
DEFAULT_HEADER = "X-Forwarded-Email"
MAX_NAME = 200
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_LOOPBACK = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))


class Headers(Protocol):
    def get_all(self, key: str) -> list[str]: ...


@dataclass(frozen=True)
class Proxy:
    """The proxy abeq was told about: where it connects from and the header it sets."""

    networks: tuple[Network, ...]
    header: str = DEFAULT_HEADER

    def shown(self) -> str:
        return ", ".join(str(n.network_address) if n.num_addresses == 1 else str(n) for n in self.networks)


@dataclass(frozen=True)
class Identity:
    """Who this session acts as, and what the desk must say about it."""

    who: str | None = None  # the person; None when nobody is signed in
    via: Literal["sign-in", "proxy", ""] = ""
    required: bool = False  # sign-in is required here: a session without `who` sees only how to sign in
    can_log_in: bool = False  # st.login is configured (the [auth] section): offer its button
    note: str = ""  # a header that was not honoured, and why


def parse_networks(text: str, where: str = "--trusted-proxy") -> tuple[Network, ...]:
    """'127.0.0.1, 10.0.0.0/8' as networks; a word that is not an address is refused."""
    out: list[Network] = []
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        try:
            out.append(ipaddress.ip_network(word.strip("[]"), strict=False))
        except ValueError:
            raise InputError(
                f"{where}: '{word}' is not an IP address or network",
                hint="Give the address the proxy connects from, e.g. 127.0.0.1 or 10.0.0.0/24 "
                "(not a host name: the desk compares the connection's address).",
            ) from None
    return tuple(out)


def check_header_name(name: str) -> str:
    """A header name as HTTP allows it (letters, digits, dashes); InputError otherwise."""
    name = name.strip()
    if not name or not all(c.isalnum() or c in "-_" for c in name):
        raise InputError(
            f"--identity-header: '{name}' is not an HTTP header name",
            hint=f"Name the header your proxy sets, e.g. {DEFAULT_HEADER} (oauth2-proxy with "
            "--pass-user-headers) or X-Auth-Request-Email.",
        )
    return name


def proxy_from(env: Mapping[str, str]) -> Proxy | None:
    """The trusted proxy `abeq app` was told about, from the environment it hands the desk."""
    raw = env.get(PROXY_ENV, "").strip()
    if not raw:
        return None
    return Proxy(parse_networks(raw), check_header_name(env.get(HEADER_ENV) or DEFAULT_HEADER))


def user_name(user: Mapping) -> str | None:
    """The name a signed-in person acts under: their email, else their name, else the provider's
    subject id (present in every ID token)."""
    for key in ("email", "name", "sub"):
        value = user.get(key)
        if isinstance(value, str) and (clean := _clean(value)):
            return clean
    return None


def _clean(value: str) -> str:
    """One line of printable text, at most MAX_NAME characters."""
    return "".join(c for c in value if c.isprintable()).strip()[:MAX_NAME]


def peer_trusted(peer: str | None, networks: tuple[Network, ...]) -> bool:
    """Whether the connection's address is the proxy's. None is how Streamlit reports a loopback
    peer (127.0.0.1 or ::1)."""
    try:
        addresses = _LOOPBACK if peer is None else (ipaddress.ip_address(peer.strip("[]")),)
    except ValueError:
        return False
    return any(a in n for a in addresses for n in networks)


def resolve(
    user: Mapping, headers: Headers, peer: str | None, env: Mapping[str, str] | None = None
) -> Identity:
    """Who this session is. `user` is `st.user.to_dict()` (it holds `is_logged_in` only when the
    `[auth]` section is configured), `headers` the WebSocket's (`st.context.headers`), `peer` the
    connection's address (`st.context.ip_address`)."""
    env = os.environ if env is None else env
    can_log_in = "is_logged_in" in user
    proxy = proxy_from(env)
    required = can_log_in or proxy is not None or env.get(REQUIRE_ENV) == "1"
    base = Identity(required=required, can_log_in=can_log_in)
    if user.get("is_logged_in") and (name := user_name(user)):
        return Identity(name, "sign-in", required, can_log_in)
    if proxy is None:
        return base
    values = [v for v in headers.get_all(proxy.header) if v.strip()]
    if not values:
        return base
    shown = "this computer (loopback)" if peer is None else peer
    if env.get(PEER_ENV) != "":
        note = (
            f"The {proxy.header} header was ignored: this server was not started by `abeq app`, "
            "so the address a connection comes from cannot be trusted (uvicorn rewrites it from "
            "X-Forwarded-For)."
        )
    elif not peer_trusted(peer, proxy.networks):
        note = (
            f"The {proxy.header} header was ignored: this connection comes from {shown}, not from "
            f"the trusted proxy ({proxy.shown()})."
        )
    elif len(values) > 1:
        note = f"The {proxy.header} header was ignored: it was sent {len(values)} times."
    elif not (name := _clean(values[0])):
        note = f"The {proxy.header} header was ignored: it holds no printable name."
    else:
        return Identity(name, "proxy", required, can_log_in)
    return Identity(required=required, can_log_in=can_log_in, note=note)


# ---------------------------------------------------------------- st.login's settings, for `abeq app`
AUTH_KEYS = ("redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url")


@dataclass(frozen=True)
class SignIn:
    """Where st.login is configured and the address the provider sends the browser back to (the
    values themselves are secrets and stay in the file)."""

    path: str
    redirect_uri: str
    host: str

    @property
    def origin(self) -> str:
        """Where people open the desk: the callback's own origin (a sign-in begun on 127.0.0.1 and
        returning to localhost would find no state cookie there, and fail)."""
        parts = urlsplit(self.redirect_uri)
        return f"{parts.scheme}://{parts.netloc}"


def secrets_files(cwd: Path | None = None, home: Path | None = None) -> list[Path]:
    """The secrets files Streamlit reads for the desk, the later winning: the user's and the
    working directory's `.streamlit/secrets.toml`."""
    return [
        (home or Path.home()) / ".streamlit" / "secrets.toml",
        (cwd or Path.cwd()) / ".streamlit" / "secrets.toml",
    ]


def sign_in_config(port: int, files: list[Path] | None = None) -> SignIn | None:
    """The `[auth]` section st.login would use, checked before the desk starts: a missing key or a
    callback address the desk does not serve is named here, not found by a failed sign-in. None when
    no secrets file has an `[auth]` section."""
    found: tuple[Path, dict] | None = None
    for path in files if files is not None else secrets_files():
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise InputError(
                f"cannot read it as TOML ({e})", path=str(path), hint="Fix the file: Streamlit reads it too."
            ) from None
        if "auth" in data:
            found = (path, data["auth"])
    if found is None:
        return None
    path, auth = found
    where = str(path)
    if not isinstance(auth, dict):
        raise InputError("'auth' must be a table ([auth])", path=where)
    missing = [k for k in AUTH_KEYS if not (isinstance(auth.get(k), str) and auth[k].strip())]
    if missing:
        raise InputError(
            f"[auth] lacks {', '.join(missing)}: the desk signs people in with st.login, which needs "
            f"all of {', '.join(AUTH_KEYS)}",
            path=where,
            hint="Register the desk with your OpenID provider and copy its settings there "
            "(the guide: docs/guides/team-store.md, Sign-in).",
        )
    uri = auth["redirect_uri"].replace("{port}", str(port))
    parts = urlsplit(uri)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or not parts.path.endswith("/oauth2callback")
    ):
        raise InputError(
            f"[auth] redirect_uri '{uri}' is not the desk's callback address",
            path=where,
            hint=f"Use the desk's own address ending in /oauth2callback, e.g. http://127.0.0.1:{port}/oauth2callback.",
        )
    if is_loopback(parts.hostname) and (parts.port or 80) != port:
        raise InputError(
            f"[auth] redirect_uri '{uri}' names port {parts.port or 80}, but the desk listens on {port}",
            path=where,
            hint="The provider sends the browser back there after sign-in: use the same port, or "
            "write {port} in redirect_uri.",
        )
    if not auth["server_metadata_url"].startswith(("http://", "https://")):
        raise InputError("[auth] server_metadata_url must be an http(s) URL", path=where)
    return SignIn(where, uri, parts.hostname)


NO_WAY_IN = (
    "This desk requires sign-in, and offers no way to sign in here: sign in through your team's "
    "proxy (the link it gives), or ask whoever started the desk to configure [auth] in "
    ".streamlit/secrets.toml."
)
