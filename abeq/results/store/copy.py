"""`abeq db copy SRC DST`: a whole store moved from one database to the other (a sqlite file into a
team's PostgreSQL, or back), then verified: every run as a reader gets it from the copy is byte for
byte the one from the source. What a reader gets is the caller's to say (`reads_as`:
results.reports.record.run_text, the run's report and run record): the store does not build reports.

Both ends are opened (and so migrated) by this abeq, so they hold the same tables and columns; rows
keep their ids, so runs are named alike on both. The destination must hold no documents or runs yet:
a copy never merges into a store in use (that would renumber what others refer to).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import InputError
from .store import Store

# parents before the rows that refer to them (foreign keys hold on both backends)
ORDER = (
    "documents",
    "document_loads",
    "workspaces",
    "transfer_sets",
    "reviews",
    "runner_results",
    "judgements",
    "gradings",
    "written_mutants",
    "runs",
    "run_cases",
    "overrides",
    "assignments",
    "calls",
    "check_results",
    "calibrations",
    "mutations",
)
TRANSIENT = {"claims"}  # calls being made now: they belong to the processes making them, not copied
_CHUNK = 2000


@dataclass
class Copied:
    """What a copy moved (rows per table) and what it checked (runs whose report and record matched)."""

    rows: dict[str, int] = field(default_factory=dict)
    runs_verified: int = 0
    mismatched: list[int] = field(default_factory=list)


def _tables(src: Store) -> list[str]:
    own = [t for t in src.sql.table_names() if not t.startswith("_") and t not in TRANSIENT]
    unknown = sorted(set(own) - set(ORDER))
    if unknown:  # a table added by a later migration must be placed in ORDER
        raise RuntimeError(f"abeq db copy does not know where to copy {unknown}")
    return [t for t in ORDER if t in own]


def copy_store(
    src: Store,
    dst: Store,
    progress: Callable[[str, int], None] | None = None,
    *,
    reads_as: Callable[[Store, int], str],
) -> Copied:
    """Every row of `src` into the empty store `dst`, in one transaction kept only when every run
    reads the same from both (`reads_as(store, run_id)`; InputError otherwise, nothing written)."""
    used = [(dst.sql.one(f"select count(*) n from {t}") or {}).get("n") for t in ("documents", "runs")]
    if any(used):
        raise InputError(
            "the destination store is not empty",
            path=dst.path,
            hint="Copy into a new sqlite file or an empty PostgreSQL database.",
        )
    out = Copied()
    tables = _tables(src)
    with dst.sql.batch():
        for table in tables:
            cols = src.sql.columns(table)
            order = "id" if "id" in cols else ", ".join(f'"{c}"' for c in cols)  # a total order: pages
            n, offset = 0, 0
            while True:
                rows = src.sql.all(f'select * from "{table}" order by {order} limit {_CHUNK} offset {offset}')
                for row in rows:
                    dst.sql.insert(table, row)
                n, offset = n + len(rows), offset + _CHUNK
                if len(rows) < _CHUNK:
                    break
            if "id" in cols:
                dst.sql.ids_follow(table)
            out.rows[table] = n
            if progress:
                progress(table, n)
        verify(src, dst, out, reads_as)  # inside the transaction: a copy that differs is not kept
        if out.mismatched:
            raise InputError(
                f"the copy's reports differ from the source's for runs {out.mismatched}: nothing was copied",
                path=dst.path,
                hint="Keep using the source store, and report this as a bug.",
            )
    return out


def verify(src: Store, dst: Store, out: Copied, reads_as: Callable[[Store, int], str]) -> None:
    """Every run as a reader gets it from each store; runs that differ are listed."""
    for run in src.log.runs():
        if reads_as(src, run["id"]) == reads_as(dst, run["id"]):
            out.runs_verified += 1
        else:
            out.mismatched.append(run["id"])
