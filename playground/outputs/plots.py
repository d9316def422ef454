"""PNG plots of the metrics lists, drawn with matplotlib's Agg backend (no display needed).

A plot spec is an entry of `output.plots`: x (a list name; empty means the fractional epochs), x_title, ys
(list names), y_title. `draw_runs` overlays the same spec for several runs (`playground plot`).
"""
from __future__ import annotations

import math
import os
from typing import Any, Collection, Sequence


def draw_runs(spec: dict, runs: Sequence[tuple[str, dict]], path: str, test_metrics: Collection[str] = ()) -> str:
    """Draw `spec` for every (label, metrics lists) in `runs` into `path`; return the path.

    When the lists hold each point's `kind`, a test metric in `test_metrics` is drawn twice: its full test passes
    (kind "epoch") as a line with markers, its interval points (a few test batches each) as small faint dots.
    """
    from matplotlib.figure import Figure   # not pyplot: no backend or figure manager to set up (0.2 s)

    x_name = spec.get("x") or "epochs"
    figure = Figure(figsize=(8, 5), dpi=100)
    axes = figure.subplots()
    for label, lists in runs:
        xs = lists.get(x_name, [])
        kinds = lists.get("kind") or [None] * len(xs)
        for y_name in spec["ys"]:
            points = [(x, y, k) for x, y, k in zip(xs, lists.get(y_name, []), kinds) if _finite(x) and _finite(y)]
            if not points:
                continue
            name = f"{label}: {y_name}" if len(runs) > 1 else y_name
            if y_name in test_metrics and any(k == "epoch" for _, _, k in points):
                _draw_test_series(axes, points, name)
                continue
            axes.plot([p[0] for p in points], [p[1] for p in points], marker="." if len(points) < 50 else None,
                      label=name)
    axes.set_xlabel(spec.get("x_title") or x_name)
    axes.set_ylabel(spec.get("y_title") or ", ".join(spec["ys"]))
    axes.set_title(spec.get("y_title") or ", ".join(spec["ys"]))
    axes.grid(True, alpha=0.3)
    if axes.lines:
        axes.legend(fontsize="small")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, format="png")
    return path


def _draw_test_series(axes: Any, points: list[tuple], name: str) -> None:
    full = [(x, y) for x, y, kind in points if kind == "epoch"]
    line = axes.plot([p[0] for p in full], [p[1] for p in full], marker="o", label=f"{name} (full test pass)")[0]
    interval = [(x, y) for x, y, kind in points if kind != "epoch"]
    if interval:
        axes.plot([p[0] for p in interval], [p[1] for p in interval], linestyle="none", marker=".", markersize=4,
                  alpha=0.35, color=line.get_color(), label=f"{name} (interval: a few test batches)")


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)
