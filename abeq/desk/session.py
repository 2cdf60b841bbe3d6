"""Where a desk session's state lives: the session holds ids and choices, sqlite holds the data.

`state` is any mutable mapping (st.session_state in the app, a dict in tests).
"""

from __future__ import annotations

import functools
import threading
import time
import uuid
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from .. import sets
from ..documents import (
    check_document_text,
    detect_variant,
    document_hash,
    load_document,
    normalize_newlines,
)
from ..errors import InputError
from ..execution.preflight import review_refusal
from ..models import DEFAULT_MODEL
from ..models.bootstrap import settle_heap
from ..models.registry import PROVIDERS
from ..results.store.liveness import ACTIVE, live_status
from ..results.store.rows import DocumentRow, ReviewRow
from ..results.store.store import Store, db_path
from ..sets.confirmation import confirmer as confirmation_author
from ..sets.confirmation import set_hash
from ..vocab import CANCELLING, FINISHED, JUDGED, RUNNING
from . import links
from .render import md

FAVICON = Path(__file__).with_name("favicon.png")

EXAMPLE_DIR = Path(__file__).resolve().parent.parent / "examples" / "release-notes"
EXAMPLE_REVIEW = "example"
EXAMPLE_CANDIDATES = {"lossy": "candidate-lossy.md", "faithful": "candidate-faithful.md"}

EMBEDDED_NOTE = (
    f"The preselected model (`local/smollm2`): {PROVIDERS['local'].caution} For real reviews put any litellm "
    "model string "
    "in the model fields (`openai/<model>`, `anthropic/<model>`, …) with its API key in "
    "the environment the desk was started from (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, …), or point "
    "**API base** at a local server: Ollama (`ollama_chat/llama3.1`, `http://localhost:11434`), "
    "vLLM or any OpenAI-compatible server (`openai/<model>`, `http://localhost:8000/v1`)."
)


def open_store() -> Store:
    """A fresh connection for this rerun or thread (a shared one fails across sessions)."""
    return Store(db_path())


# ---------------------------------------------------------------- first start
def load_example(store: Store, candidate: str = "lossy") -> int:
    """The bundled release-notes example as review 'example': its transfer set stays unconfirmed."""
    original = load_document(EXAMPLE_DIR / "SKILL.md", "original")
    ts = sets.load(EXAMPLE_DIR / "transfer-set.json")
    oh = store.inputs.put_document(original.name, original.text)
    tsh = store.inputs.put_transfer_set(ts)
    rid = store.inputs.upsert_review(EXAMPLE_REVIEW, oh, tsh, detect_variant(original.name))
    store.inputs.set_review_candidate(rid, example_candidate(store, candidate))
    return rid


def example_candidate(store: Store, which: str) -> str:
    doc = load_document(EXAMPLE_DIR / EXAMPLE_CANDIDATES[which], "candidate")
    return store.inputs.put_document(doc.name, doc.text)


def bootstrap(store: Store) -> int | None:
    """On a database with no review yet, load the example; returns its id when it did."""
    if store.inputs.reviews():
        return None
    return load_example(store)  # another browser session loading it at the same moment loads the same


# ---------------------------------------------------------------- reviews
def create_review(store: Store, name: str) -> int:
    """A new, empty review: its original and transfer set are loaded on the desk pages."""
    name = name.strip()
    if not name:
        raise InputError("a review needs a name")
    if store.inputs.review(name):
        raise InputError(
            f"a review named '{name}' already exists", hint="Pick it in the list, or choose another name."
        )
    return store.inputs.upsert_review(name, None, None, "skill")


def current_review(store: Store, state: MutableMapping) -> ReviewRow | None:
    """The review this session works on: its pick, else the newest review."""
    reviews = store.inputs.reviews()
    for r in reviews:
        if r["id"] == state.get("review_id"):
            return r
    return reviews[0] if reviews else None


def _cand_key(review_id: int) -> str:
    return f"candidate:{review_id}"


def current_candidate(store: Store, review: ReviewRow, state: MutableMapping) -> DocumentRow | None:
    """The candidate document: this session's choice, else the review's latest one."""
    h = state.get(_cand_key(review["id"]))
    doc = store.inputs.document(h) if h else None
    if doc is None:
        h = store.inputs.review_candidate(review["id"])
        doc = store.inputs.document(h) if h else None
    return doc


def pick_candidate(state: MutableMapping, review_id: int, doc_hash: str) -> None:
    """Make an already stored document this session's candidate for the review."""
    state[_cand_key(review_id)] = doc_hash


def set_candidate(
    store: Store,
    review: dict,
    state: MutableMapping,
    name: str,
    text: str,
    files: dict | None = None,
    source: str = "pasted",
) -> str:
    """Load a candidate (from `source`: a path, git:REV:PATH, "uploaded", "pasted"). A skill's
    candidate with no folder of its own (pasted, uploaded, a lone file) is tested with the
    original's other files, as on the command line."""
    text = normalize_newlines(text)  # a pasted CRLF copy is the same document as the file
    check_document_text(text, name)
    original = store.inputs.document(review["original_hash"]) if review.get("original_hash") else None
    if not files and original and review.get("variant") == "skill":
        files = store.inputs.document_files(original)
    h = store.inputs.put_document(name, text, files)
    store.inputs.record_load(h, name, source, review["name"], "candidate")
    store.inputs.set_review_candidate(review["id"], h)
    pick_candidate(state, review["id"], h)
    return h


def refuse_own_database(path: str) -> None:
    """Never open the desk's own database (or its -wal/-shm) as a document: closing any other
    handle on that file drops this process's sqlite locks, and a concurrent reader can then
    remove the shared-memory file under the desk's connections (disk I/O error until a restart)."""
    own = Path(db_path()).resolve()
    try:
        target = Path(path).expanduser().resolve()
    except OSError:
        return
    if target in {own, own.with_name(own.name + "-wal"), own.with_name(own.name + "-shm")}:
        raise InputError(
            "this is the desk's own database, not a document",
            path=path,
            hint="Give the path of a Markdown or text file.",
        )


def set_original(
    store: Store, review: dict, name: str, text: str, files: dict | None = None, source: str = "pasted"
) -> str:
    """Load the review's original (a skill with its folder's files, when loaded by path) from
    `source`; refused once runs exist (they were judged against the old one)."""
    text = normalize_newlines(text)
    check_document_text(text, name)
    refused = review_refusal(store, review["name"], original_hash=document_hash(text, files), desk=True)
    if refused:
        raise refused
    h = store.inputs.put_document(name, text, files)
    store.inputs.record_load(h, name, source, review["name"], "original")
    store.inputs.upsert_review(review["name"], h, review["transfer_set_hash"], detect_variant(name))
    return h


def who(state: MutableMapping) -> str:
    """Who acts from this desk: the signed-in person, else the reviewer name typed on Review, else
    this computer's account."""
    import getpass

    return (
        state.get(SIGNED_IN_KEY)
        or state.get(REVIEWER_KEY)
        or f"{getpass.getuser()} (account on this computer)"
    )


def confirmer(state: Mapping) -> str:
    """Who a Confirm on this desk is recorded under: the signed-in person, else `git config
    user.name`, else "unknown" (a typed reviewer name is not an identity)."""
    return confirmation_author(state.get(SIGNED_IN_KEY))


def acting_reviewer(state: MutableMapping) -> str:
    """The name Agree and Override record: the signed-in person's (never a typed one when someone
    is signed in), else the name in the Review form."""
    return state.get(SIGNED_IN_KEY) or state.get("ov_reviewer", "")


REVIEWER_KEY = "keep:ov_reviewer"  # the reviewer's name for this session (the Review form's copy)
SIGNED_IN_KEY = "desk:signed_in"  # who signed in (abeq.desk.identity), set by the router each rerun


def reviewer(state: Mapping) -> str:
    """Whose queue this session works through, and who assigns cases from it: the signed-in person,
    else the name the Review form acts under (kept by keep_reviewer), as acting_reviewer records."""
    return str(state.get(SIGNED_IN_KEY) or state.get(REVIEWER_KEY) or "").strip()


@functools.cache
def default_reviewer() -> str:
    """The name a reviewer acts under until they type another: `git config user.name`, else the
    login name of this computer's account ('' when neither can be read)."""
    import getpass

    from ..sets.confirmation import git_user

    name = git_user()
    if not name:
        try:
            name = getpass.getuser()
        except (OSError, KeyError):  # no login name in the environment nor the password database
            name = ""
    return name[:100]


def keep_reviewer(params: MutableMapping, state: MutableMapping) -> None:
    """The reviewer's name survives a reload, a deep link and a new tab: a name in the URL is
    adopted; else this session's; else the machine's default. A name other than the default is
    written to the URL (and the links the desk draws for new tabs), so it travels with them.
    Signed in, the name is the person's own: a name in the URL is dropped, none is published."""
    if signed_in := state.get(SIGNED_IN_KEY):
        links.adopt(params, state, links.REVIEWER)  # read and forgotten: who acts is who signed in
        state[REVIEWER_KEY] = state["ov_reviewer"] = signed_in
        links.publish(params, state, links.REVIEWER, None)
        return
    asked = links.adopt(params, state, links.REVIEWER)
    if asked is not None and asked.strip():
        state[REVIEWER_KEY] = state["ov_reviewer"] = asked.strip()[:100]
    if REVIEWER_KEY not in state:
        state[REVIEWER_KEY] = default_reviewer()
    links.publish(params, state, links.REVIEWER, reviewer_param(state))


def name_typed(state: MutableMapping) -> None:
    """The sidebar's Reviewer field changed: this session acts under that name from now on (and the
    router puts it in the URL on this rerun, so a reload keeps it before any action)."""
    state[REVIEWER_KEY] = str(state.get("ov_reviewer") or "").strip()[:100]


_HEAP_SETTLED = threading.Event()


def settle_heap_once() -> None:
    """Once per desk process, after its first script has imported Streamlit, pandas and abeq: out of
    the way of the full collection Streamlit makes after every script and fragment run (litellm's
    objects are moved when a run first imports it; abeq.models.bootstrap.settle_heap says why)."""
    if not _HEAP_SETTLED.is_set():
        _HEAP_SETTLED.set()
        settle_heap()


# Every desk session open now, per database: its name, so two desks acting under the machine's
# default name (two browsers of one person, or two people on one token link) are told.
_DESKS: dict[str, tuple[str, str, str, float]] = {}  # token -> (database, streamlit session, name, seen)
_DESKS_LOCK = threading.Lock()
DESK_SEEN_S = 900  # a desk not heard from for this long is gone (without a live Streamlit runtime)


def _session_alive(session_id: str) -> bool:
    from streamlit import runtime

    return not runtime.exists() or runtime.get_instance().is_active_session(session_id)


def same_name_elsewhere(state: MutableMapping) -> str:
    """A warning ('' for none) when another desk open now on this database acts under the same name
    as this one and that name is the machine's default (`git config user.name`, nobody typed it):
    their actions and these would read as one person's."""
    if state.get(SIGNED_IN_KEY):
        return ""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    token = state.setdefault("desk:token", uuid.uuid4().hex)
    name, db, now = reviewer(state), db_path(), time.time()
    with _DESKS_LOCK:
        _DESKS[token] = (db, ctx.session_id if ctx else "", name, now)
        for t, (_, sid, _, seen) in list(_DESKS.items()):
            if now - seen > DESK_SEEN_S or (sid and t != token and not _session_alive(sid)):
                del _DESKS[t]
        others = [t for t, (d, _, n, _) in _DESKS.items() if t != token and d == db and n == name]
    if not others or not name or name != default_reviewer():
        return ""
    return (
        f"Another desk open now also acts as **{md(name)}**, this machine's default name: its actions and "
        "yours would read as one person's. Type your own name here."
    )


def reviewer_param(state: MutableMapping) -> str | None:
    """The name to carry in a link: None when it is the machine's default (it comes back anyway)
    or the signed-in person's (a sign-in is not passed on by a link)."""
    if state.get(SIGNED_IN_KEY):
        return None
    name = state.get(REVIEWER_KEY) or ""
    return name if name and name != default_reviewer() else None


def set_transfer_set(store: Store, review: dict, ts, by: str | None = None) -> str:
    """The review's cases; once it has runs, only a confirmation of the same cases (rounds must compare).
    A confirmation records `by` whom and in this review."""
    refused = review_refusal(store, review["name"], ts_hash=set_hash(ts), desk=True)
    if refused:
        raise refused
    h = store.inputs.put_transfer_set(ts, by, review["name"])
    store.inputs.upsert_review(review["name"], review["original_hash"], h, review["variant"])
    return h


# ---------------------------------------------------------------- models
def tiny_model_chosen(state: MutableMapping, *names: str | None) -> bool:
    """Whether a model this session runs with (the Run page's, or `names` given) is the embedded
    one: EMBEDDED_NOTE is about it, and is shown only then (not for scripted/… nor a hosted model)."""
    from ..models.registry import provider_for

    if not names:
        names = tuple(state.get(f"keep:{k}") or DEFAULT_MODEL for k in ("runner_model", "judge_model"))
    return any(provider_for((n or "").strip() or DEFAULT_MODEL) is PROVIDERS["local"] for n in names)


def run_caution(run: Mapping) -> str:
    """The embedded model's caution for a run made with it ('' for any other run): said beside
    that run, never beside runs of other models."""
    models = (run.get("runner_model"), run.get("judge_model"))
    if not tiny_model_chosen({}, *(m or "-" for m in models)):
        return ""
    return f"Run {run.get('id')} was made with the embedded model: {PROVIDERS['local'].caution}"


def review_running(store: Store, review: ReviewRow) -> bool:
    """Whether a run of the review is running or cancelling now (its process alive)."""
    return any(live_status(r) in ACTIVE for r in store.log.runs(review["id"]))


def next_step(store: Store, review: ReviewRow | None, state: MutableMapping) -> str:
    """One line telling the reviewer what to do next on this review, from where it stands: nothing
    loaded, set not confirmed, no run, a run going or stopped, cases left to review, all reviewed."""
    if review is None:
        return "Create a review in the sidebar."
    if not review["original_hash"]:
        return "Load the original document on **Documents**."
    candidate = current_candidate(store, review, state)
    if candidate is None:
        return "Load a candidate (the rewritten document) on **Documents**."
    ts = store.inputs.transfer_set(review["transfer_set_hash"]) if review["transfer_set_hash"] else None
    if ts is None:
        return "Add or import cases on **Transfer set**."
    if sets.confirmation_problem(ts, review["original_hash"]):
        return "Read the cases on **Transfer set**, then press **Confirm**; runs are refused until you do."
    runs = store.log.runs(review["id"])
    if not runs:  # (the tiny model's caution is the sidebar's, or the Run page's, said once)
        return "Start a run on **Run**."
    run = runs[-1]
    c = store.log.case_counts(run["id"])
    status = live_status(run)  # a run whose process died reads as interrupted, not running
    if status in ACTIVE:
        return (
            f"Run {run['id']} is {CANCELLING if status == CANCELLING else RUNNING}: {c['done']} of "
            f"{c['total']} cases done. Follow it on **Run**; cases appear on **Review** as they are judged."
        )
    if status != FINISHED:
        return (
            f"Run {run['id']} stopped ({status}) after {c['done']} of {c['total']} cases: "
            f"**Resume run {run['id']}** on **Run** (with its own settings)."
        )
    if candidate["hash"] not in {r["candidate_hash"] for r in runs}:
        name = md(candidate["name"])  # the file name is the uploader's: shown as text, not Markdown
        return f"This candidate ({name}) has no run yet: start one on **Run** (the next round)."
    judged = {r["case_id"] for r in store.log.run_cases(run["id"]) if r["status"] == JUDGED}
    acted = set(store.ledger.reviewed(run["id"])) | set(store.ledger.carried_overrides(run["id"]))
    todo = len(judged - acted)
    if todo:
        return (
            f"Run {run['id']}: {todo} of {c['judged']} judged cases await a reviewer on **Review**; "
            "**Agree** or **Override** each (uncertain and regressed cases come first)."
        )
    return (
        f"Every judged case of run {run['id']} is reviewed: export the report on **Review**, or load the "
        "next candidate on **Documents**."
    )
