"""A run split across processes or machines (`abeq run --shard K/N`): each shard runs every N-th case
of the set from its K-th into the one run the shards share (on a shared store); the shard that
lands last finds every case done and ends the run, with its whole report."""

from __future__ import annotations

from ..results.store.liveness import owner_id
from ..schemas import Case
from ..vocab import FINISHED, RunStatus
from .engine import Engine
from .preflight import Preflight


class Shard(Engine):
    """An Engine that runs its share of the cases; `shard` is (K, N), 1 <= K <= N."""

    def __init__(self, *args, shard: tuple[int, int], **kwargs):
        super().__init__(*args, **kwargs)
        self.shard = shard

    def prepare(self, checked: Preflight | None = None) -> int:
        """The run its shards share: found, or made by the first shard (one at a time, so shards that
        start at once make one run). It is this process's while it runs: another shard running it is
        no reason to refuse, as it is for a run started twice."""
        with self.store.log.exclusive():
            existing = self.store.log.unfinished_run(self.config_key())
            if existing:
                self.store.log.claim_run(existing["id"], owner_id())
            return super().prepare(checked)

    def ordered_cases(self) -> list[tuple[int, Case]]:
        k, n = self.shard
        return [(i, c) for i, c in super().ordered_cases() if i % n == k - 1]

    def _end(self, status: RunStatus) -> None:
        """A share done while others' are not leaves the run to them (the last one ends it)."""
        c = self.store.log.case_counts(self.run_id)
        if status == FINISHED and c["done"] < c["total"]:
            return
        super()._end(status)
