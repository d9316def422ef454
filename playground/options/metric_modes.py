"""Which way each metric improves: `min` or `max`, for "best" in results.json, ckpt_save_best and early stopping.

An entry of output.metrics may say `mode: min|max`; else its meter class may say it with a class attribute
`higher_is_better` (True: max, False: min; torchmetrics' name); else the name decides: names with "loss",
"error", "mse" or "mae" (rmse, val_mae...) are minimised, every other name maximised. The loader writes the
decision into each entry of the resolved opts, so every reader (and a resumed or swept run) sees the same one.
"""
from __future__ import annotations

from typing import Any

_MINIMISED = ("loss", "error", "mse", "mae")


def mode_by_name(name: str) -> str:
    """The last resort: min for names with 'loss', 'error', 'mse' or 'mae' in them, else max."""
    return "min" if any(word in name.lower() for word in _MINIMISED) else "max"


def mode_of_meter(meter_class: Any) -> str | None:
    """The meter class's own direction (`higher_is_better`), or None when it does not say."""
    higher = getattr(meter_class, "higher_is_better", None)
    return None if higher is None else "max" if higher else "min"


def metric_mode(metric: dict, meter_class: Any = None) -> str:
    """The direction of one output.metrics entry: its `mode`, else its meter's, else its name's."""
    return metric.get("mode") or mode_of_meter(meter_class) or mode_by_name(metric["name"])


def mode_of(output: dict, name: str) -> str:
    """The direction of metric `name` in the resolved opts' `output` section (by name when it is not there)."""
    entry = next((m for m in output.get("metrics") or [] if m.get("name") == name), None)
    return metric_mode(entry) if entry is not None else mode_by_name(name)
