"""The store: its interfaces (backend.py), the sqlite and PostgreSQL backends and their parts (ledger,
cache, inputs, run log, calibrations, mutations, reviews, assignments), migrations, and
`abeq db copy`/`merge`.
`Store` and `open_store` are read here too, as the reference names them (abeq.results.store)."""

from .store import Store, open_store

__all__ = ["Store", "open_store"]
