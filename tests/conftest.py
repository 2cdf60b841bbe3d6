import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "abeq" / "examples" / "release-notes"


def with_cases(example, cases):
    """The example's set with other cases, confirmed again (a set edited after confirmation is refused)."""
    from abeq import sets

    return sets.confirm(example["ts"].model_copy(update={"cases": list(cases)}), example["original"].hash)


@pytest.fixture(autouse=True)
def _scripted_clean():
    from abeq.models import scripted

    scripted.reset()
    yield
    scripted.reset()


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
    from abeq.results.store import Store

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

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    return at
