"""The inputs part of the store: what a person brings to a run. Documents (a skill with its
folder's other files), transfer sets (with their confirmation and their cases' workspace files) and
the named reviews that bind an original and a set; implements backend.Inputs."""

from __future__ import annotations

import json
from typing import cast

from ...documents import document_hash
from ...errors import InputError
from ...schemas import TransferSet
from ...sets import workspace
from ...sets.confirmation import as_given, set_hash
from ...timestamps import now
from ...vocab import Variant
from .connection import SqlConnection
from .rows import DocumentRow, ReviewRow, SetConfirmation


class SqlInputs:
    """Documents, transfer sets, workspaces and reviews over the store's one connection."""

    def __init__(self, sql: SqlConnection):
        self.sql = sql

    # -------------------------------------------------------- documents
    def put_document(self, name: str, content: str, files: dict[str, str] | None = None) -> str:
        """Store a document (a skill with its folder's other files) under its hash; the hash."""
        h = document_hash(content, files)
        row = {"hash": h, "name": name, "content": content, "created_at": now()}
        if files:
            row["files"] = self._put_workspace(files)  # content-addressed, as a case's workspace
        self.sql.insert("documents", row, ignore=True)
        return h

    def record_load(self, h: str, name: str, source: str, review: str | None, role: str) -> None:
        """Note that the document `h` was loaded as `name` from `source` (a path, git:REV:PATH,
        "uploaded", "pasted") into `review` as its `role` (original or candidate)."""
        row = {"hash": h, "name": name, "source": source, "review": review, "role": role, "loaded_at": now()}
        self.sql.insert("document_loads", row)

    def loaded_as(self, h: str, review: str | None = None, role: str | None = None) -> dict | None:
        """The latest load of document `h` in this review as this role, else its latest anywhere
        (name, source, loaded_at); None when it was never loaded on the desk (a CLI run stored it)."""
        for where, params in (
            ("hash = ? and review = ? and role = ?", [h, review, role]),
            ("hash = ?", [h]),
        ):
            if "review" in where and review is None:
                continue
            row = self.sql.one(f"select * from document_loads where {where} order by id desc limit 1", params)
            if row:
                return row
        return None

    def document_files(self, row: DocumentRow | dict) -> dict[str, str]:
        """A stored skill's other files ({} for a single file)."""
        digest = row.get("files")
        return self._workspace_files(digest) if digest else {}

    def document(self, h: str) -> DocumentRow | None:
        return cast("DocumentRow | None", self.sql.one("select * from documents where hash = ?", [h]))

    # -------------------------------------------------------- transfer sets
    def put_transfer_set(self, ts: TransferSet, by: str | None = None, review: str | None = None) -> str:
        """Store a set (keyed by its cases); a confirmed one records `by` whom (else the name it
        carries) and in which `review`. A set confirmed for one run only is stored as it was given:
        that confirmation is the run's (runs.set_confirmed_for_run), not the set's."""
        ts = as_given(ts)
        by = by or ts.confirmed_by
        h = set_hash(ts)
        row = {
            "hash": h,
            "document_hash": ts.document_hash,
            "content": ts.model_dump_json(),
            "confirmed": int(ts.user_confirmed),
            "confirmed_at": ts.confirmation_timestamp,
            "created_at": now(),
        }
        if ts.user_confirmed:
            row.update(confirmed_by=by, confirmed_in=review)
        trees = workspace.trees(ts)
        if trees:  # the folders' files travel with the set: a run from the desk needs no folder
            row["workspaces"] = json.dumps({cid: self._put_workspace(files) for cid, files in trees.items()})
        existing = self.sql.one("select confirmed, document_hash from transfer_sets where hash = ?", [h])
        if existing is None:  # another process may insert it between the check and here
            self.sql.insert("transfer_sets", row, ignore=True)
        elif ts.user_confirmed and (
            not existing["confirmed"] or existing["document_hash"] != ts.document_hash
        ):
            # confirmed now, or confirmed again for another original: the newest confirmation holds
            self.sql.update("transfer_sets", {"hash": h}, row)
        return h

    def _put_workspace(self, files: dict[str, str]) -> str:
        d = workspace.digest(files)
        self.sql.insert(
            "workspaces",
            {"digest": d, "files": json.dumps(files, ensure_ascii=False), "created_at": now()},
            ignore=True,
        )
        return d

    def confirmation(self, h: str) -> SetConfirmation:
        """When, by whom and in which review the stored set `h` was confirmed (values may be None)."""
        sql = (
            "select confirmed_at, confirmed_by, confirmed_in from transfer_sets where hash = ? and confirmed"
        )
        return cast(SetConfirmation, dict(self.sql.one(sql, [h]) or {}))

    def transfer_set(self, h: str) -> TransferSet | None:
        row = self.sql.one("select content, confirmed, workspaces from transfer_sets where hash = ?", [h])
        if not row:
            return None
        ts = TransferSet.model_validate_json(row["content"])
        if row["workspaces"]:
            by_case = {cid: self._workspace_files(d) for cid, d in json.loads(row["workspaces"]).items()}
            ts = workspace.reattach(ts, by_case)
        if row["confirmed"] and ts.user_confirmed and not ts.confirmed_hash:
            # confirmed in this database before sets carried their confirmation hash; the row is keyed by it
            ts = ts.model_copy(update={"confirmed_hash": h})
        return ts

    def _workspace_files(self, digest: str) -> dict[str, str]:
        row = self.sql.one("select files from workspaces where digest = ?", [digest])
        if row is None:  # only when the row was deleted by hand: sets never drop their workspaces
            raise InputError(f"workspace {digest} of a stored transfer set is missing", path=self.sql.path)
        return json.loads(row["files"])

    # -------------------------------------------------------- reviews
    def review(self, name: str) -> ReviewRow | None:
        return cast("ReviewRow | None", self.sql.one("select * from reviews where name = ?", [name]))

    def reviews(self) -> list[ReviewRow]:
        return cast("list[ReviewRow]", self.sql.all("select * from reviews order by id desc"))

    def upsert_review(
        self, name: str, original_hash: str | None, transfer_set_hash: str | None, variant: Variant | str
    ) -> int:
        """The review with this name, created or updated to bind this original and set; its id."""

        def go() -> int:
            r = self.review(name)
            if r is None:
                new_id = self.sql.insert(
                    "reviews",
                    {
                        "name": name,
                        "original_hash": original_hash,
                        "transfer_set_hash": transfer_set_hash,
                        "variant": variant,
                        "created_at": now(),
                    },
                    ignore=True,  # another process may make it since: then update that one
                )
                if new_id is not None:
                    return new_id
                r = self.review(name)
                assert r is not None  # the insert was ignored because it exists
            self.sql.update(
                "reviews",
                {"id": r["id"]},
                {"original_hash": original_hash, "transfer_set_hash": transfer_set_hash, "variant": variant},
            )
            return r["id"]

        return self.sql.tx(go)

    def rename_review(self, review_id: int, name: str) -> None:
        """Give a review another name (its runs and reviewers' actions stay with it)."""
        self.sql.update("reviews", {"id": review_id}, {"name": name})

    def set_review_candidate(self, review_id: int, doc_hash: str) -> None:
        self.sql.update("reviews", {"id": review_id}, {"candidate_hash": doc_hash})

    def review_candidate(self, review_id: int) -> str | None:
        """The candidate last loaded into this review (in any session), else its latest run's; never
        a document loaded into another review."""
        row = self.sql.one(
            """select coalesce(
                        nullif(v.candidate_hash, ''),
                        (select candidate_hash from runs where review_id = v.id order by id desc limit 1)
                      ) candidate_hash
               from reviews v where v.id = ?""",
            [review_id],
        )
        return row["candidate_hash"] if row else None

    def review_candidates(self, review_id: int) -> list[dict]:
        """Documents used as candidates in this review's runs, newest first (hash, name, last_run)."""
        return self.sql.all(
            """select d.hash, d.name, max(r.id) last_run from runs r
                           join documents d on d.hash = r.candidate_hash
                           where r.review_id = ? group by d.hash order by last_run desc""",
            [review_id],
        )
