"""Who may drive the desk: the hosts it answers to and the per-launch token `abeq app` prints.

The desk can run commands on this machine (a runner command, paths it reads), so a web page must
not be able to drive it. Two locks, both set by `abeq app`:
- the Host allow-list (Streamlit's `server.allowedHosts`): a page on another domain that resolves
  to 127.0.0.1 (DNS rebinding) opens the desk's WebSocket with its own Host and is refused (403);
- a token made at each launch, in the link `abeq app` prints (as Jupyter does): a session that did
  not arrive with it sees nothing, so another local user, or a page that guessed the port, cannot
  drive the desk either. The token stays in the URL (a reload or a copied link keeps working).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Mapping, MutableMapping

TOKEN_ENV = "ABEQ_DESK_TOKEN"
TOKEN_PARAM = "token"
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
_OK = "desk:token-ok"


def is_loopback(address: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost: the addresses no other machine can reach."""
    if address.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(address: str, extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The Host names the desk answers to: loopback, the bound address (unless a wildcard), `extra`."""
    hosts = list(LOOPBACK_HOSTS)
    bound = address.strip().strip("[]")
    if bound and bound not in ("0.0.0.0", "::") and bound not in hosts:
        hosts.append(bound)
    hosts += [h for h in extra if h and h not in hosts]
    return hosts


def expected_token(env: Mapping[str, str] | None = None) -> str | None:
    """The token this server was launched with (None: started without one: `abeq app --no-token`, or
    `streamlit run` on the packaged abeq/desk/app.py itself; the clone's app.py makes one)."""
    token = (os.environ if env is None else env).get(TOKEN_ENV, "")
    return token or None


def admitted(params: MutableMapping, state: MutableMapping, env: Mapping[str, str] | None = None) -> bool:
    """Whether this session may see the desk; keeps the token in the URL once it was shown."""
    token = expected_token(env)
    if token is None:
        return True
    given = params.get(TOKEN_PARAM)
    if isinstance(given, str) and hmac.compare_digest(given.encode(), token.encode()):
        state[_OK] = True
    if not state.get(_OK):
        return False
    if params.get(TOKEN_PARAM) != token:  # a page switch drops query parameters: put it back
        params[TOKEN_PARAM] = token
    return True


REFUSED = (
    "This desk was started by `abeq app` (or `streamlit run app.py` in a clone), which prints a link "
    "with a token for this launch in its terminal. Open that link (it ends in `?token=…`); a page or "
    "a person without it cannot use the desk."
)
