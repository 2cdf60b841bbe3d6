"""A review's rounds: one row per run with size, compression and effective verdict counts."""

from __future__ import annotations

import json

from ...documents import compression_ratio, size_stats
from ...vocab import DIVERGED, EQUIVALENT, JUDGED, REGRESSED
from ..store.rows import DocumentRow
from ..store.store import Store
from .report import build_report


def rounds(store: Store, review_id: int) -> list[dict]:
    """Every run of the review, oldest first (overrides applied to the counts)."""
    out = []
    docs: dict[str, DocumentRow] = {}
    for run in store.log.runs(review_id):
        # the set's score as measured with this round's models when there is one (it depends on them)
        m = store.mutations.latest(
            run["transfer_set_hash"], run["original_hash"], run["runner_model"], run["judge_model"]
        )
        for h in (run["original_hash"], run["candidate_hash"]):
            if h not in docs:
                doc = store.inputs.document(h)
                assert doc is not None  # a run's documents are foreign keys: always stored
                docs[h] = doc
        orig, cand = docs[run["original_hash"]]["content"], docs[run["candidate_hash"]]
        size = size_stats(cand["content"])
        rr = build_report(store, run["id"])
        s = rr.report["summary"]
        judged = [r for r in rr.rows if r.status == JUDGED]
        mean = lambda xs: round(sum(xs) / len(xs), 2) if xs else None
        out.append(
            {
                "run": run["id"],
                "round": run["round"],
                "candidate": cand["name"],
                "status": run["status"],
                "runner": run["runner_model"],
                "judge": run["judge_model"],
                "characters": size.characters,
                "tokens (est.)": size.tokens,
                "lines": size.lines,
                "compression": compression_ratio(orig, cand["content"]),
                EQUIVALENT: s["equivalents"],  # the column is named for the verdict it counts
                "diverged": s["divergences"],
                "regressed": s["regressions"],
                "errored": len(rr.errors),
                "overridden": rr.overridden,
                "pass": s["pass"],
                "directness original": mean([r.original_directness for r in judged]),
                "directness candidate": mean([r.candidate_directness for r in judged]),
                "mutation score": m["score"] if m else None,
                # a score made with a test double or the embedded model says nothing about the set
                "mutation trust figure": bool(json.loads(m["report"] or "{}").get("trust_figure", True))
                if m
                else None,
            }
        )
    return out


def per_round(rows: list[dict]) -> list[dict]:
    """The latest run of each round, for the charts."""
    latest: dict = {}
    for r in rows:
        latest[r["round"]] = r
    return [latest[k] for k in sorted(latest, key=lambda x: (x is None, x))]


def round_reviews(store: Store, chosen: list[dict], rows: list[dict]) -> list[dict]:
    """The chosen run of each round (rows of `rounds`) with its verdict counts read as its round
    reads: a case nobody reviewed in this run takes the latest reviewer action on it in an earlier
    run of the same round, candidate and models (an override made before a re-run still counts).
    Each row says how many it took (`carried reviews`)."""
    out = []
    for row in chosen:
        earlier = [
            r["run"]
            for r in rows
            if r["round"] == row["round"] and r["run"] < row["run"] and r["candidate"] == row["candidate"]
            and (r["runner"], r["judge"]) == (row["runner"], row["judge"])
        ]  # fmt: skip
        taken: dict[str, str] = {}
        for run_id in earlier:  # oldest first: a later run's action wins
            for c in build_report(store, run_id).rows:
                if c.review and c.verdict:
                    taken[c.case_id] = c.verdict
        cases = build_report(store, row["run"]).rows
        verdicts: list[str | None] = []
        carried = 0
        for c in cases:
            if c.status == JUDGED and not c.review and c.case_id in taken:
                verdicts.append(taken[c.case_id])
                carried += 1
            else:
                verdicts.append(c.verdict if c.status == JUDGED else "errored")
        counts = {v: verdicts.count(v) for v in (EQUIVALENT, DIVERGED, REGRESSED)}
        out.append(
            {
                **row,
                EQUIVALENT: counts[EQUIVALENT],
                "diverged": counts[DIVERGED],
                "regressed": counts[REGRESSED],
                "carried reviews": carried,
            }
        )
    return out


def review_history(store: Store, name: str) -> list[dict]:
    """Every run of the named review, oldest first."""
    review = store.inputs.review(name)
    return rounds(store, review["id"]) if review else []


def changed_verdicts(store: Store, run_a: int, run_b: int) -> list[dict]:
    """Cases whose effective verdict (or error state) differs between two runs."""
    a = {r.case_id: r for r in build_report(store, run_a).rows}
    b = {r.case_id: r for r in build_report(store, run_b).rows}
    out = []
    for cid in list(a) + [c for c in b if c not in a]:
        va = a[cid].verdict or a[cid].status if cid in a else "absent"
        vb = b[cid].verdict or b[cid].status if cid in b else "absent"
        if va != vb:
            out.append({"case_id": cid, "before": va, "after": vb})
    return out
