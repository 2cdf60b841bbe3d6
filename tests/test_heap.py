"""The heap a long-lived abeq process carries is out of the garbage collector's way: Streamlit collects
fully after every script and fragment run of the desk, several times a second while a run's progress
redraws, and with litellm's ~375,000 objects each collection cost ~0.23 s of CPU (bench/bench_desk_gc.py:
the desk's CPU over a 40-s run, 24.7 s before, 9.1 s settled)."""

from __future__ import annotations

import gc

from abeq.desk import session
from abeq.models import bootstrap, registry


def test_importing_litellm_leaves_a_full_collection_little_to_walk(monkeypatch):
    bootstrap.litellm()  # imported once per process; taken again below as a first import is
    monkeypatch.setattr(bootstrap, "_litellm", None)
    monkeypatch.setattr(registry, "register_all", lambda ll: None)  # registered once already
    bootstrap.litellm()
    # every object alive after the import is frozen: a full collection walks only newer ones
    assert gc.get_freeze_count() > 100_000
    assert len(gc.get_objects()) < 5_000


def test_the_desk_settles_its_heap_once(monkeypatch):
    calls = []
    monkeypatch.setattr(session, "settle_heap", lambda: calls.append(1))
    monkeypatch.setattr(session, "_HEAP_SETTLED", type(session._HEAP_SETTLED)())
    for _ in range(3):  # the router calls it on every script run
        session.settle_heap_once()
    assert calls == [1]
