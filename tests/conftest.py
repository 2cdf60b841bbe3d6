import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

ROOT = Path(__file__).resolve().parent.parent
DESK_APP = ROOT / "abeq" / "desk" / "app.py"  # the desk's router, the script `abeq app` serves
EXAMPLE = ROOT / "abeq" / "examples" / "release-notes"


def with_cases(example, cases):
    """The example's set with other cases, confirmed again (a set edited after confirmation is refused)."""
    from abeq import sets

    return sets.confirm(example["ts"].model_copy(update={"cases": list(cases)}), example["original"].hash)


def run_argv(
    *extra: str,
    db,
    original="SKILL.md",
    candidate="candidate-faithful.md",
    transfer_set="transfer-set.json",
    runner_model: str | None = "scripted/rules",
    confirm: bool = True,
    quiet: bool = True,
    **flags,
) -> list[str]:
    """`abeq run` on the bundled example with the scripted model, results in `db`; `extra` follow.

    A document or set name is looked up in the example's folder (a full path stays itself). A
    keyword adds its flag: `judge_model="x"` gives `--judge-model x`, True the bare flag, and None
    leaves it out (`runner_model=None, runner_cmd="..."`)."""
    out = ["run", "--original", str(EXAMPLE / original), "--candidate", str(EXAMPLE / candidate)]
    out += ["--transfer-set", str(EXAMPLE / transfer_set), "--db", str(db)]
    flags = {"runner_model": runner_model, "confirm": confirm or None, "quiet": quiet or None, **flags}
    for name, value in flags.items():
        if value is not None:
            out += [f"--{name.replace('_', '-')}"] + ([] if value is True else [str(value)])
    return out + [str(e) for e in extra]


@pytest.fixture
def run_args(tmp_path):
    """run_argv with the database in the test's tmp_path (tmp_path / "abeq.db") unless `db=` says."""

    def build(*extra, **over):
        return run_argv(*extra, **{"db": tmp_path / "abeq.db", **over})

    return build


# The main job's browser test took 230-264 s in three runs on 2 cores and the other embedded-model
# tests 269-302 s on their worker: these (17-23 s and 6-7 s, the worker's first litellm import) run
# after the main job, on its worker, so the two workers end closer together. (CI of 4dc19b5: the main
# job 254 s with its tab closed during the run, the other worker's tests 310 s.)
BESIDE_THE_MAIN_JOB = (
    "test_the_embedded_model_grades_every_check_through_the_real_path",
    "test_unknown_local_model_is_a_clear_error",
)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (tests/e2e's own hook runs first)
def pytest_collection_modifyitems(items):
    """The embedded-model part of `make test` on its two workers (each process's llama.cpp runs on
    one core, see the Makefile): the main job's browser test (the one `slow` test tests/e2e marks
    `e2e`) with the tests of BESIDE_THE_MAIN_JOB after it on one, every other `slow` test on the
    other, so that worker loads the embedded model once for them."""
    for item in items:
        if not item.get_closest_marker("slow") or item.get_closest_marker("xdist_group"):
            continue
        main_job = item.get_closest_marker("e2e") or item.name in BESIDE_THE_MAIN_JOB
        item.add_marker(pytest.mark.xdist_group("embedded-browser" if main_job else "embedded"))


def pytest_runtest_setup(item):
    """On an xdist worker under `--dist loadgroup`, a test with an `xdist_group` mark carries its group
    in its node id (xdist's channel to the scheduler). Under pytest 9.2, xdist 3.8's suffix no longer
    takes (pytest-xdist#1386): the groups were silently ignored and every test went where load sent
    it. Such a test now fails instead, saying why."""
    lost = "@" not in item.nodeid.rsplit("]", 1)[-1]
    if getattr(item.config.option, "loadgroup", False) and item.get_closest_marker("xdist_group") and lost:
        pytest.fail(
            "--dist loadgroup lost this test's xdist group: this pytest and pytest-xdist do not "
            "group (pytest-xdist#1386); install the versions pyproject.toml pins",
            pytrace=False,
        )


_NICED: list[bool] = []


def _yield_to_the_main_job(request) -> None:
    """In `make test`'s embedded-model part (two xdist workers), the worker of the ordinary
    embedded-model tests lowers its priority once: the main job's browser test on the other worker
    (the desk, Chromium and a model: the part's long pole) gets the cores first, the short tests
    fill what it leaves. Outside xdist it does nothing."""
    if _NICED or not os.environ.get("PYTEST_XDIST_WORKER") or "e2e" in request.node.keywords:
        return
    _NICED.append(True)
    os.nice(5)


@pytest.fixture(autouse=True)
def _embedded_model_only_when_slow(request, monkeypatch):
    """A test that loads the embedded model must be marked `slow` (`make test-fast` skips it)."""
    if request.node.get_closest_marker("slow"):
        _yield_to_the_main_job(request)
        return
    from abeq.models import local

    def refuse(model):
        pytest.fail(f"this test loads the embedded model local/{model}: mark it @pytest.mark.slow")

    monkeypatch.setattr(local, "_contexts", refuse)


@pytest.fixture(autouse=True)
def _own_trust_file(tmp_path, monkeypatch):
    """Code trusted in a test is remembered in the test's own trust file, never the user's."""
    monkeypatch.setenv("ABEQ_TRUST_FILE", str(tmp_path / "trusted-code.json"))


@pytest.fixture(autouse=True)
def _own_scripted_models():
    """Each test gets new scripted model instances (as each inspect_ai test builds its own mockllm):
    what one test queued or read is never another's."""
    from abeq.models import scripted

    scripted.forget()
    yield
    scripted.forget()


@pytest.fixture
def scripted_model():
    """This test's `scripted/rules` (abeq/models/scripted/). Replies per purpose of call, whatever
    else is asked meanwhile: `scripted_model.judge.enqueue(reply, ...)` for the next judge calls,
    `.runner.always(reply)`, `.grader.handle(fn)` (None falls through to the rules); `.judge.calls`
    are the judge's calls so far (also runner, grader, drafter, comparator, mutator); `.history`
    every call, `.enqueue(...)` and `.handler` for any purpose."""
    from abeq.models import scripted

    return scripted.model("rules")


@pytest.fixture
def example():
    """The bundled release-notes example: original, candidates and a confirmed transfer set."""
    from abeq import sets
    from abeq.documents import load_document

    original = load_document(EXAMPLE / "SKILL.md")
    ts = sets.confirm(sets.load(EXAMPLE / "transfer-set.json"), original.hash)
    return {
        "original": original,
        "faithful": load_document(EXAMPLE / "candidate-faithful.md"),
        "lossy": load_document(EXAMPLE / "candidate-lossy.md"),
        "ts": ts,
        "dir": EXAMPLE,
    }


@pytest.fixture
def store(tmp_path):
    from abeq.results.store.store import Store

    s = Store(str(tmp_path / "abeq.db"))
    yield s
    s.close()


@pytest.fixture
def scripted_cfg():
    from abeq.execution.engine import RunConfig
    from abeq.models import ModelSpec

    def make(**kw):
        spec = ModelSpec(name="scripted/rules")
        return RunConfig(runner=kw.pop("runner", spec), judge=kw.pop("judge", spec), **kw)

    return make


# ---------------------------------------------------------------- the review desk (AppTest)
@pytest.fixture
def db(tmp_path, monkeypatch):
    """The desk's database: a fresh sqlite file the app opens through ABEQ_DB."""
    path = str(tmp_path / "desk.db")
    monkeypatch.setenv("ABEQ_DB", path)
    return path


@pytest.fixture
def app(db):
    """The desk on its home page over `db` (a test file may build on it: a fixture `app(app)`)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(DESK_APP), default_timeout=60)
    at.run()
    assert not at.exception
    return at


# ---------------------------------------------------------------- abeq as a user installs it
@pytest.fixture(scope="session")
def installed_wheel(tmp_path_factory):
    """The wheel built from a clean copy of this tree, in a fresh venv outside the checkout (once per
    test process: a few seconds)."""
    from installed import build_and_install

    return build_and_install(tmp_path_factory.mktemp("wheel"))


# ---------------------------------------------------------------- PostgreSQL (a team's shared store)
# One real server for the whole test session, shared by the xdist workers (the first starts it, the
# last stops it); each test gets a database of its own, copied from a migrated template (fast).
PG_TEMPLATE = "abeq_template"


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory):
    """The session's PostgreSQL server (abeq.testing.pg_server). Skipped with the reason where it
    cannot run; under CI=true that fails instead: CI installs it and never skips these tests."""
    from abeq.testing import pg_server as pg

    why = pg.unavailable()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL tests cannot run in CI: {why}")
        pytest.skip(why)
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "postgres"
    me = os.environ.get("PYTEST_XDIST_WORKER", "main")
    server = pg.shared(shared, me)
    try:
        pg.wait_ready(server)
        with pg._locked(shared / "lock"):
            if not (shared / "template-ready").exists():
                _make_template(server)
                (shared / "template-ready").touch()
        yield server
    finally:
        from abeq.results.store import postgres

        postgres.close_pools()
        pg.release(shared, me)


def _make_template(server) -> None:
    """A database migrated to the current schema, the template of each test's own."""
    import psycopg
    from psycopg.rows import dict_row

    from abeq.results.store import postgres

    postgres.create_database(server.url(), PG_TEMPLATE)
    with psycopg.connect(server.url(PG_TEMPLATE), autocommit=True, row_factory=dict_row) as conn:
        postgres.migrate(conn)


@pytest.fixture
def pg_db(pg_server, request):
    """A fresh PostgreSQL database for this test, already migrated; its URL (with the password)."""
    import uuid

    from abeq.results.store import postgres

    return postgres.create_database(pg_server.url(), f"t_{uuid.uuid4().hex[:16]}", template=PG_TEMPLATE)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_db(request, tmp_path):
    """Where a test's store lives, once per backend: a sqlite file in tmp_path, then a PostgreSQL
    database of its own on the session's server."""
    if request.param == "sqlite":
        return str(tmp_path / "abeq.db")
    return request.getfixturevalue("pg_db")


@pytest.fixture
def backend_store(store_db):
    """A Store on each backend in turn (a module that runs its tests on both names it `store`)."""
    from abeq.results.store.store import Store

    s = Store(store_db)
    yield s
    s.close()
