"""The calibrations part of the store: a judge model's measured figures on a labelled suite, one row
per measurement, read back per judge model and judge-prompt version (abeq.calibration writes them)."""

from __future__ import annotations

from typing import cast

from ...timestamps import now
from .connection import SqlConnection
from .rows import CalibrationRow


class SqlCalibrations:
    """Calibrations over the store's one connection: implements backend.Calibrations."""

    def __init__(self, sql: SqlConnection):
        self.sql = sql

    def put(self, row: CalibrationRow) -> int:
        """Store one calibration; its id."""
        new_id = self.sql.insert("calibrations", {**row, "created_at": now()})
        assert new_id is not None  # set by every insert that is not ignored
        return new_id

    def all(self, judge_model: str | None = None) -> list[CalibrationRow]:
        """Every calibration, newest first (of one judge model when given)."""
        where, params = ("where judge_model = ?", [judge_model]) if judge_model else ("", [])
        return cast(
            list[CalibrationRow], self.sql.all(f"select * from calibrations {where} order by id desc", params)
        )

    def latest(
        self, judge_model: str, prompt: str | None = None, suite: str | None = None
    ) -> CalibrationRow | None:
        """The newest calibration of this judge model (with this judge prompt, on this suite, when given)."""
        where, params = "judge_model = ?", [judge_model]
        for col, value in (("prompt", prompt), ("suite", suite)):
            if value:
                where, params = f"{where} and {col} = ?", [*params, value]
        row = self.sql.one(f"select * from calibrations where {where} order by id desc limit 1", params)
        return cast("CalibrationRow | None", row)
