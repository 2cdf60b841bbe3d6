"""The desk's state in the URL: review, run and case are query parameters
(`review?review=NAME&run=ID&case=CASE`), so a reload, a fresh tab or a shared link opens exactly
that review, run and case; every link the desk draws is built here.

The session keeps working state; the URL mirrors it. A parameter is *adopted* into the session only
when it differs from what this session last read or wrote (a deep link, a reload, a link the desk
drew); otherwise the session's own choice stands and is *published* back to the URL. What was read
is remembered per page (`scope`): a link from Compare to Review must open its run on Review even
though Compare showed that run last. `params` is st.query_params in the app, a dict in tests;
`state` is st.session_state or a dict.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from urllib.parse import urlencode

from .access import TOKEN_PARAM, expected_token

REVIEW_PAGE = "desk_pages/4_review.py"
COMPARE_PAGE = "desk_pages/6_compare.py"
NAMES = ("review", "run", "case")
REVIEWER = "reviewer"  # the reviewer's name, when it is not this machine's default


def run_id(text: str | None) -> int | None:
    """A run id read from a URL: ASCII digits that fit sqlite's integer, else None (`isdigit` takes
    "²" and int() a 5,000-digit id, and both then fail far from here)."""
    if text and len(text) <= 18 and text.isascii() and text.isdigit():
        return int(text)
    return None


def review_params(review: str | None, run: int | None = None, case: str | None = None) -> dict[str, str]:
    """The query parameters that open a review (and a run of it, and a case of that run)."""
    values = {"review": review, "run": None if run is None else str(run), "case": case}
    return {k: v for k, v in values.items() if v is not None and v != ""}


def review_url(
    review: str | None,
    run: int | None = None,
    case: str | None = None,
    page: str = "review",
    reviewer: str | None = None,
) -> str:
    """A link relative to the desk's root (it works under any base path): `review?review=…&run=…`.

    Under `abeq app` the link carries the launch token, so opening it in a new tab works; a
    `reviewer` name typed on this desk (not the machine's default) travels with it too."""
    params = review_params(review, run, case)
    if reviewer:
        params[REVIEWER] = reviewer
    if token := expected_token():
        params[TOKEN_PARAM] = token
    q = urlencode(params)
    return f"{page}?{q}" if q else page


def _seen(name: str, scope: str) -> str:
    return f"url:{scope}:{name}"


def fresh(params: Mapping, state: Mapping, name: str, scope: str = "app") -> str | None:
    """The URL's value of `name` when this session (on this page) has not read or written it yet."""
    value = params.get(name)
    return value if value is not None and value != state.get(_seen(name, scope)) else None


def adopt(params: Mapping, state: MutableMapping, name: str, scope: str = "app") -> str | None:
    """Like `fresh`, and marks the value read: the caller applies it to the session once."""
    value = fresh(params, state, name, scope)
    if value is not None:
        state[_seen(name, scope)] = value
    return value


def publish(params: MutableMapping, state: MutableMapping, name: str, value, scope: str = "app") -> None:
    """Show the session's choice in the URL (nothing for None), and remember it as read."""
    value = None if value is None or value == "" else str(value)
    if value is None:
        if name in params:
            del params[name]
    elif params.get(name) != value:
        params[name] = value
    state[_seen(name, scope)] = value
