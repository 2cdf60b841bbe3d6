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
