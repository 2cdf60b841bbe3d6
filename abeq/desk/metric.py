"""A metric as a page shows it: computed by a view-model, drawn by `draw` into a row of columns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Metric:
    label: str
    value: str | int
    delta: str | None = None
    help: str | None = None
    # "off": the delta is a figure, not a judgement (uncoloured, no arrow); "inverse": less is better
    delta_color: str = "off"


def draw(cols, metrics: list[Metric]) -> None:
    """Each metric into its column (st.columns' cells)."""
    for col, m in zip(cols, metrics):
        kw = {"delta_color": m.delta_color} if m.delta is not None else {}
        if kw and m.delta_color == "off":
            kw["delta_arrow"] = "off"
        col.metric(m.label, m.value, m.delta, help=m.help, **kw)
