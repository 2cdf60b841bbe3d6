"""The store: its interfaces (backend.py), the parts that implement them in SQL (ledger, cache,
inputs, run log, calibrations, mutations, assignments) over a sqlite or PostgreSQL connection,
migrations, and `abeq db copy`/`merge`.
`Store` and `open_store` are read here too, as the reference names them (abeq.results.store), and
loaded on first use: importing a light part (rows, backend) must not load sqlite_utils, which loads
pandas, numpy and pyarrow when they are installed — the gate's "nothing changed" path and
`abeq --version` open no store (tests/test_startup.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store import Store, open_store

__all__ = ["Store", "open_store"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import store

    return getattr(store, name)
