"""A metric as a page shows it: computed by a view-model, drawn by `draw` into a row of columns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Metric:
    label: str
    value: str | int
    delta: str | None = None  # shown uncoloured, without an arrow: a figure, not a judgement
    help: str | None = None


def draw(cols, metrics: list[Metric]) -> None:
    """Each metric into its column (st.columns' cells)."""
    for col, m in zip(cols, metrics):
        off = {"delta_color": "off", "delta_arrow": "off"} if m.delta is not None else {}
        col.metric(m.label, m.value, m.delta, help=m.help, **off)
