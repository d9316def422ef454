"""`sweep plots`: PNGs in <sweep>/plots with matplotlib: optimisation history, parallel coordinates,
parameter importances (Optuna's evaluator), a timeline of trials per slot, and the learning curves of the
best trials overlaid (from their full test passes). Each plot that cannot be drawn says why instead.
"""
from __future__ import annotations

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
    done = [r for r in rows if r.value is not None]
    keys = [k for k in dict.fromkeys(k for r in done for k in r.params)
            if len({repr(r.params.get(k)) for r in done}) > 1]
    if not done or not keys:
        return "no varying parameter among finished trials"
    import matplotlib.cm as cm
    values = [r.value for r in done]
    lo, hi = min(values), max(values)
    for r in done:
        ys = [_position(r.params.get(k), [d.params.get(k) for d in done]) for k in keys]
        axes.plot(range(len(keys)), ys, color=cm.viridis((r.value - lo) / ((hi - lo) or 1)), alpha=0.8)
    axes.set_xticks(range(len(keys)), [k.rsplit(".", 1)[-1] for k in keys])
    axes.set(ylabel="position in range", title=f"parallel coordinates (colour: {spec.objectives[0].metric})")
    return ""


def _position(value: Any, column: list[Any]) -> float:
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in column):
        lo, hi = min(column), max(column)
        return (value - lo) / ((hi - lo) or 1)
    labels = sorted({repr(v) for v in column})
    return labels.index(repr(value)) / max(len(labels) - 1, 1)


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
        records = [x for x in epoch_records(os.path.join(folder.trial_dir(r.id), "metrics.jsonl"))
                   if x.get(metric) is not None]
        axes.plot([x["epochs"] for x in records], [x[metric] for x in records], marker="o", label=r.id)
    axes.set(xlabel="epochs", ylabel=metric, title=f"learning curves of the {len(best)} best trials")
    axes.legend()
    return ""
