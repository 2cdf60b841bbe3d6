"""The store's interfaces (abeq/results/backend.py): the sqlite Store implements them, and the
engine runs against whatever ResultCache it is given."""

from abeq.execution.engine import Engine
from abeq.models import scripted
from abeq.results.backend import ResultCache, RunLog


class SpyCache:
    """A ResultCache over another one (the report reads results from the store) that tells what it
    was asked to store."""

    def __init__(self, inner):
        self.inner, self.puts = inner, []

    def runner_result(self, key):
        return self.inner.runner_result(key)

    def first_runner_result(self, keys):
        return self.inner.first_runner_result(keys)

    def put_runner_result(self, row):
        self.puts.append("runner")
        self.inner.put_runner_result(row)

    def judgement(self, key):
        return self.inner.judgement(key)

    def judgements(self, keys):
        return self.inner.judgements(keys)

    def put_judgement(self, row):
        self.puts.append("judge")
        self.inner.put_judgement(row)

    def grading(self, key):
        return self.inner.grading(key)

    def put_grading(self, row):
        self.puts.append("grading")
        self.inner.put_grading(row)

    def gate_section(self, runner_key):
        return self.inner.gate_section(runner_key)


def test_the_sqlite_store_implements_the_interfaces(store):
    assert isinstance(store, ResultCache) and isinstance(store, RunLog)
    assert isinstance(store.cache, ResultCache)
    assert isinstance(SpyCache(store.cache), ResultCache)


def test_the_engine_caches_in_the_result_cache_it_is_given(store, example, scripted_cfg):
    cache = SpyCache(store.cache)
    ex = example
    Engine(store, ex["original"], ex["lossy"], ex["ts"], scripted_cfg(), cache=cache).run()
    assert sorted(cache.puts) == ["judge"] * 7 + ["runner"] * 14  # every result made went through it
    n = len(scripted.HISTORY)
    run_id = Engine(store, ex["original"], ex["lossy"], ex["ts"], scripted_cfg(), cache=cache).run()
    assert len(scripted.HISTORY) == n and len(cache.puts) == 21  # the rerun is served by the spy
    assert store.call_stats(run_id)["cached"] == 21
