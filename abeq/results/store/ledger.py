"""The ledger part of the store: what reviewers said about the judge's verdicts (overrides and
agreements, the latest per case in effect, the older ones kept as the audit trail), and the sums the
judge-trust figures read; implements backend.Ledger."""

from __future__ import annotations

from typing import cast

from ...errors import InputError, ReviewConflict
from ...timestamps import now
from ...vocab import AA_NOISY, JUDGED, OVERRIDE, REGRESSED, ReviewAction, Verdict
from .connection import SqlConnection
from .rows import OverrideRow


class SqlLedger:
    """Reviewer actions and the trust sums over the store's one connection (writes hold its lock)."""

    def __init__(self, sql: SqlConnection):
        self.sql = sql
        self.one, self.all = sql.one, sql.all

    def check_witness_counts(self) -> list[dict]:
        """Per judge model: judged cases where a check was lost on the candidate, and how many of
        those the judge itself called regressed. One count per judgement: an identical re-run (all
        from the cache) must not count it twice."""
        return self.all(
            """select judge_model, count(*) n,
                      sum(case when verdict = ? then 1 else 0 end) agreed
               from (select distinct r.judge_model, c.teacher_key, c.candidate_key, c.judge_keys, c.verdict
                     from run_cases c join runs r on r.id = c.run_id
                     where c.status = ? and c.checks_lost > 0) judged
               group by judge_model order by judge_model""",
            [REGRESSED, JUDGED],
        )

    # -------------------------------------------------------- reviewer actions (override or agree)
    def add_override(
        self,
        run_id: int,
        case_id: str,
        verdict: Verdict,
        reason: str,
        reviewer: str,
        judge_verdict: Verdict | None,
        *,
        action: ReviewAction = OVERRIDE,
        check_seen: bool = False,
        seen_id: int | None = None,
    ) -> int:
        """Record a reviewer's action on a case (abeq.results.review.reviewing.record checks it first); the
        latest one per case is in effect, older ones stay as the audit trail.

        The row keeps what it replaced (the action in effect, and the verdict then in effect). With
        `check_seen`, an action in effect other than `seen_id` (another reviewer's, saved since this
        one read the case) raises ReviewConflict and nothing is written: checked and written in one
        write transaction, so two reviewers saving at once cannot both pass the check.
        """
        if action == OVERRIDE and not reason.strip():
            raise InputError("an override needs a reason")
        with self.sql.exclusive():
            current = self.action_in_effect(run_id, case_id)
            current_id = current["id"] if current else None
            if check_seen and current is not None and current_id != seen_id:
                raise ReviewConflict(current)
            row = {
                "run_id": run_id,
                "case_id": case_id,
                "verdict": verdict,
                "judge_verdict": judge_verdict,
                "reason": reason.strip(),
                "reviewer": reviewer,
                "created_at": now(),
                "action": action,
                "seen_id": current_id,
                "seen_verdict": current["verdict"] if current else judge_verdict,
            }
            new_id = self.sql.insert("overrides", row)
        assert new_id is not None  # set by every insert that is not ignored
        return new_id

    def action_in_effect(self, run_id: int, case_id: str) -> OverrideRow | None:
        """The reviewer action in effect on one case: its latest in this run, else the latest one
        carried from an identical judgement in another run (see carried_overrides)."""
        own = self.one(
            "select * from overrides where run_id = ? and case_id = ? order by id desc limit 1",
            [run_id, case_id],
        )
        return cast("OverrideRow | None", own) or self.carried_overrides(run_id, case_id).get(case_id)

    def reviewed(self, run_id: int) -> dict[str, OverrideRow]:
        """The reviewer action in effect (the latest) per case of a run: an override or an agreement."""
        out: dict[str, OverrideRow] = {}
        for r in self.all("select * from overrides where run_id = ? order by id", [run_id]):
            out[r["case_id"]] = cast(OverrideRow, r)
        return out

    def overrides(self, run_id: int) -> dict[str, OverrideRow]:
        """The effective override per case: cases whose latest reviewer action overrode the judge."""
        return {k: r for k, r in self.reviewed(run_id).items() if r["action"] == OVERRIDE}

    def carried_overrides(self, run_id: int, case_id: str | None = None) -> dict[str, OverrideRow]:
        """Reviewer actions (overrides and agreements) made in other runs on exactly this judgement
        (same teacher and candidate transcripts, same judge replies), so an identical re-run keeps
        the reviewer's verdict. Each row says where it was made (`carried_from`); the latest one per
        case wins."""
        out: dict[str, OverrideRow] = {}
        for r in self.all(
            """select o.*, o.run_id as carried_from from overrides o
                             join run_cases src on src.run_id = o.run_id and src.case_id = o.case_id
                             join run_cases cur on cur.run_id = ? and cur.case_id = src.case_id
                             where o.run_id != ? and cur.status = ? and src.status = ?
                               and cur.teacher_key = src.teacher_key and cur.candidate_key = src.candidate_key
                               and cur.judge_keys = src.judge_keys and (? is null or o.case_id = ?)
                             order by o.id""",
            [run_id, run_id, JUDGED, JUDGED, case_id, case_id],
        ):
            out[r["case_id"]] = cast(OverrideRow, r)
        return out

    def all_overrides(self) -> list[OverrideRow]:
        return cast("list[OverrideRow]", self.all("select * from overrides order by id"))

    def override_history(self, run_id: int, case_id: str) -> list[OverrideRow]:
        """Every reviewer action on one case, oldest first: the audit trail (the latest is in effect)."""
        return cast(
            "list[OverrideRow]",
            self.all(
                "select * from overrides where run_id = ? and case_id = ? order by id", [run_id, case_id]
            ),
        )

    def reviewed_pairs(self) -> list[dict]:
        """Judge model, run, case, judge verdict, reviewer verdict and action of every reviewer
        action, oldest first (an agreement's verdict is the judge's)."""
        return self.all("""select r.judge_model, o.run_id, o.case_id, o.judge_verdict, o.verdict, o.action
                           from overrides o join runs r on r.id = o.run_id order by o.id""")

    def aa_counts(self, run_id: int | None = None) -> list[dict]:
        """Per runner/judge pair: A/A measurements, how many were called regressed, how many noisy
        (vocab.AA_NOISY). One measurement per teacher run and verdict: an identical re-run (all from the
        cache) repeats the same A/A judgement and must not count it twice."""
        where, params = ("and r.id = ?", [run_id]) if run_id else ("", [])
        noisy = ", ".join("?" * len(AA_NOISY))  # the rule is vocab.AA_NOISY, as in report.case_rows
        return self.all(
            f"""select runner_model, judge_model, count(*) n,
                                   sum(case when aa_verdict = ? then 1 else 0 end) regressed,
                                   sum(case when aa_verdict in ({noisy}) then 1 else 0 end) noisy
                            from (select distinct r.runner_model, r.judge_model, c.case_id, c.teacher_key,
                                                  c.aa_verdict
                                  from run_cases c join runs r on r.id = c.run_id
                                  where c.aa_verdict is not null {where}) measured
                            group by runner_model, judge_model""",
            [REGRESSED, *AA_NOISY, *params],
        )
