"""How many threads llama.cpp gets: one core fewer than the process may use, 1 to 4, or the number
asked for in ABEQ_LOCAL_THREADS (bench/bench_local_threads.py measures why). No model is loaded."""

import os

import pytest

from abeq.errors import ModelCallError
from abeq.models import local


@pytest.mark.parametrize(("cores", "expected"), [(1, 1), (2, 1), (3, 2), (5, 4), (64, 4)])
def test_one_core_is_left_for_the_rest(monkeypatch, cores, expected):
    monkeypatch.delenv("ABEQ_LOCAL_THREADS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert local.threads() == expected


def test_the_environment_sets_it(monkeypatch):
    monkeypatch.setenv("ABEQ_LOCAL_THREADS", "3")
    assert local.threads() == 3


@pytest.mark.parametrize("bad", ["0", "two", "-1", "1.5", "٣"])
def test_a_bad_value_is_a_clear_error(monkeypatch, bad):
    monkeypatch.setenv("ABEQ_LOCAL_THREADS", bad)
    with pytest.raises(ModelCallError, match="ABEQ_LOCAL_THREADS"):
        local.threads()


def test_a_prompts_batches_take_every_core_unless_asked(monkeypatch):
    """llama-cpp-python's own default (every core) unless ABEQ_LOCAL_BATCH_THREADS names a number;
    a bad one is the same clear error."""
    monkeypatch.delenv("ABEQ_LOCAL_BATCH_THREADS", raising=False)
    assert local.batch_threads() == {}
    monkeypatch.setenv("ABEQ_LOCAL_BATCH_THREADS", "1")
    assert local.batch_threads() == {"n_threads_batch": 1}
    monkeypatch.setenv("ABEQ_LOCAL_BATCH_THREADS", "0")
    with pytest.raises(ModelCallError, match="ABEQ_LOCAL_BATCH_THREADS"):
        local.batch_threads()
