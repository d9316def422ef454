"""`sweep plots`: PNGs in <sweep>/plots with matplotlib: optimisation history, parallel coordinates,
parameter importances (Optuna's evaluator), a timeline of trials per slot, and the learning curves of the
best trials overlaid (from their full test passes). Each plot that cannot be drawn says why instead.
"""
from __future__ import annotations

import math
import os
from typing import Any

from playground.sweeps.files.metrics_tail import epoch_records
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.spec import SweepSpec
from playground.sweeps.results.summary import collect, ranked
from playground.sweeps.search.study import param_importances

BEST_CURVES = 5


def draw_all(study: Any, folder: SweepFolder, spec: SweepSpec) -> list[tuple[str, str]]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(folder.plots, exist_ok=True)
    rows = collect(study, folder, spec.objectives)
    out = []
    for name, draw in (("history", _history), ("parallel_coordinates", _parallel), ("importances", _importances),
                       ("timeline", _timeline), ("learning_curves", _curves)):
        path = os.path.join(folder.plots, f"{name}.png")
        figure, axes = plt.subplots(figsize=(8, 4.5))
        try:
            note = draw(axes, rows, study, folder, spec) or ""
            if not note:
                figure.tight_layout()
                figure.savefig(path, dpi=90)
        finally:
            plt.close(figure)
        out.append((path, note))
    return out


def _history(axes, rows, study, folder, spec) -> str:
    metric, mode = spec.objectives[0].metric, spec.objectives[0].mode
    done = sorted((r for r in rows if r.value is not None), key=lambda r: r.number)
    if not done:
        return "no finished trial yet"
    best, running = [], None
    for r in done:
        running = r.value if running is None else (min if mode == "min" else max)(running, r.value)
        best.append(running)
    axes.scatter([r.number for r in done], [r.value for r in done], s=14, label="trial")
    axes.plot([r.number for r in done], best, color="tab:red", label="best so far")
    axes.set(xlabel="trial number", ylabel=metric, title="optimisation history")
    axes.legend()
    return ""


def _parallel(axes, rows, study, folder, spec) -> str:
    """One vertical axis per varying parameter, labelled with its values (a range's ends and between, or every
    category), a line per finished trial coloured by the objective, and the colour bar that reads it."""
    done = [r for r in rows if r.value is not None]
    keys = [k for k in dict.fromkeys(k for r in done for k in r.params)
            if len({repr(r.params.get(k)) for r in done}) > 1]
    if not done or not keys:
        return "no varying parameter among finished trials"
    from matplotlib import cm, colors
    metric = spec.objectives[0].metric
    norm = colors.Normalize(min(r.value for r in done), max(r.value for r in done))
    logs = {p.key for p in spec.space if p.type == "log"}
    scales = [_Scale([d.params.get(k) for d in done], k in logs) for k in keys]
    for r in sorted(done, key=lambda r: r.value):
        axes.plot(range(len(keys)), [s.position(r.params.get(k)) for s, k in zip(scales, keys)],
                  color=cm.viridis(norm(r.value)), alpha=0.8)
    span = max(len(keys) - 1, 1)
    axes.set_xlim(0, span)
    axes.set_ylim(-0.05, 1.05)
    axes.set_yticks([])
    axes.set_xticks(range(len(keys)), [k.rsplit(".", 1)[-1] for k in keys])
    for index, scale in enumerate(scales):
        axis = axes.secondary_yaxis(index / span)
        positions, labels = scale.ticks()
        axis.set_yticks(positions, labels, fontsize=7)
    axes.figure.colorbar(cm.ScalarMappable(norm=norm, cmap="viridis"), ax=axes, label=metric, pad=0.08)
    axes.set(title=f"parallel coordinates (colour: {metric})")
    return ""


class _Scale:
    """Where a parameter's values sit on its axis (0 to 1), and its tick labels: numbers on a linear (or, for a
    log parameter, logarithmic) range, anything else as evenly spaced categories."""

    def __init__(self, column: list[Any], log: bool) -> None:
        self.numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in column)
        self.log = self.numeric and log and min(column) > 0
        if self.numeric:
            self.lo, self.hi = (self._x(min(column)), self._x(max(column)))
        else:
            self.labels = sorted({repr(v) for v in column})

    def _x(self, value: float) -> float:
        return math.log10(value) if self.log else float(value)

    def position(self, value: Any) -> float:
        if self.numeric:
            return (self._x(value) - self.lo) / ((self.hi - self.lo) or 1)
        return self.labels.index(repr(value)) / max(len(self.labels) - 1, 1)

    def ticks(self) -> tuple[list[float], list[str]]:
        if not self.numeric:
            return [i / max(len(self.labels) - 1, 1) for i in range(len(self.labels))], self.labels
        positions = [i / 4 for i in range(5)]
        values = [self.lo + p * (self.hi - self.lo) for p in positions]
        return positions, [f"{10 ** v if self.log else v:.3g}" for v in values]


def _importances(axes, rows, study, folder, spec) -> str:
    try:
        scores = param_importances(study)
    except (RuntimeError, ValueError) as err:
        return f"no importances: {err}"
    if not scores:
        return "no importances: no sampled parameter"
    names = list(scores)
    axes.barh([n.rsplit(".", 1)[-1] for n in names], [scores[n] for n in names])
    axes.set(xlabel="importance", title="parameter importances")
    return ""


def _timeline(axes, rows, study, folder, spec) -> str:
    bars = [(a.get("slot", 0), a["start"], a["end"], r.id) for r in rows for a in folder.read_attempts(r.id)
            if "end" in a]
    if not bars:
        return "no finished attempt yet"
    origin = min(b[1] for b in bars)
    for slot, start, end, trial_id in bars:
        axes.barh(slot, end - start, left=start - origin, height=0.6, edgecolor="black")
        axes.text(start - origin, slot, trial_id, va="center", fontsize=7)
    axes.set_yticks(sorted({b[0] for b in bars}))
    axes.set(xlabel="seconds since the first trial started", ylabel="slot", title="trials per slot")
    return ""


def _curves(axes, rows, study, folder, spec) -> str:
    metric = spec.objectives[0].metric
    best = [r for r in ranked(rows, spec.objectives[0]) if r.value is not None][:BEST_CURVES]
    if not best:
        return "no finished trial yet"
    for r in best:
        records = [x for x in epoch_records(folder.run_folder(r.id).metrics)
                   if x.get(metric) is not None]
        axes.plot([x["epochs"] for x in records], [x[metric] for x in records], marker="o", label=r.id)
    axes.set(xlabel="epochs", ylabel=metric, title=f"learning curves of the {len(best)} best trials")
    axes.legend()
    return ""
