"""Checks of the output section that need more than each key's type: metric names, plots and the best metric
name real metrics, each metric's meter resolves and builds, and each metric gets its `mode` (min or max)."""
from __future__ import annotations

from typing import Any

from playground.options.metric_modes import metric_mode
from playground.options.registry import Component, ComponentError, resolve
from playground.options.unknown_keys import closest_hint

BUILTIN_LISTS = ("epochs", "samples_per_sec", "secs_per_train")


def resolve_meters(opts: dict, problems: list[str]) -> dict[str, Component]:
    """Each metric's meter component, by metric name; each entry's `mode` decided once (metric_modes.py)."""
    meters: dict[str, Component] = {}
    metrics = _output(opts, "metrics")
    if not isinstance(metrics, list):
        return meters
    for index, metric in enumerate(metrics):
        if not isinstance(metric, dict) or not isinstance(metric.get("meter_py"), str):
            continue
        where = f"opts.output.metrics[{index}].meter_py"
        try:
            meters[metric["name"]] = resolve(metric["meter_py"], "meter", where=where)
        except ComponentError as err:
            problems.append(str(err))
    _fill_metric_modes(opts, meters)
    return meters


def _fill_metric_modes(opts: dict, meters: dict[str, Component]) -> None:
    """Each output.metrics entry's `mode`, decided once here (metric_modes.py) for every reader of the opts."""
    for metric in _output(opts, "metrics") or []:
        if isinstance(metric, dict) and isinstance(metric.get("name"), str):
            meter = meters.get(metric["name"])
            metric["mode"] = metric_mode(metric, meter.meter_class() if meter else None)


def check_meters_build(opts: dict, meters: dict[str, Component], problems: list[str]) -> None:
    """Construct each meter once with its meter_kargs, so a refusal surfaces before any process starts."""
    for index, metric in enumerate(opts["output"]["metrics"]):
        meter = meters.get(metric["name"])
        cls = meter.meter_class() if meter else None
        if cls is None:
            continue
        try:
            cls(opts=opts, **metric["meter_kargs"])
        except (TypeError, ValueError) as err:
            problems.append(f"opts.output.metrics[{index}].meter_kargs: {metric['meter_py']} refused them: {err}")
        except Exception as err:  # noqa: BLE001 - a user's meter may raise anything while being built
            problems.append(f"opts.output.metrics[{index}]: {metric['meter_py']} raised {type(err).__name__} while "
                            f"being built with meter_kargs {metric['meter_kargs']}: {err}")


def check_metrics_and_plots(opts: dict, problems: list[str]) -> None:
    """Metric names are unique and not built-in lists; plots and ckpt_save_best_metric name real metrics."""
    metrics = _output(opts, "metrics") or []
    names = [m["name"] for m in metrics if isinstance(m, dict) and isinstance(m.get("name"), str)]
    for index, name in enumerate(names):
        if name in BUILTIN_LISTS:
            problems.append(f"opts.output.metrics[{index}].name: {name!r} is a built-in list; choose another name")
        elif name in names[:index]:
            problems.append(f"opts.output.metrics[{index}].name: {name!r} is used twice")
    known = names + list(BUILTIN_LISTS)
    for index, plot in enumerate(_output(opts, "plots") or []):
        if not isinstance(plot, dict):
            continue
        for pos, y in enumerate(plot.get("ys") or []):
            if isinstance(y, str) and y not in known:
                problems.append(f"opts.output.plots[{index}].ys[{pos}]: {y!r} is not a metric. {closest_hint(y, known)}")
        x = plot.get("x")
        if isinstance(x, str) and x and x not in known:
            problems.append(f"opts.output.plots[{index}].x: {x!r} is not a metric (empty means epochs). "
                            f"{closest_hint(x, known)}")
    _check_early_stopping(opts, names, problems)
    best = _output(opts, "ckpt_save_best_metric")
    if isinstance(best, str) and best and best not in names:
        problems.append(f"opts.output.ckpt_save_best_metric: {best!r} is not a metric. {closest_hint(best, names)}")


def _output(opts: dict, key: str) -> Any:
    section = opts.get("output")
    return section.get(key) if isinstance(section, dict) else None


def _check_early_stopping(opts: dict, names: list[str], problems: list[str]) -> None:
    """output.early_stopping.metric names a recorded metric; a null mode becomes that metric's mode."""
    stopping = _output(opts, "early_stopping")
    if not isinstance(stopping, dict) or not isinstance(stopping.get("metric"), str):
        return
    known = names or ["train_loss"]      # with no output.metrics the run records train_loss alone
    metric = stopping["metric"]
    if metric not in known:
        problems.append(f"opts.output.early_stopping.metric: {metric!r} is not a metric; the metrics are "
                        f"{', '.join(known)}. {closest_hint(metric, known)}".rstrip())
        return
    if stopping.get("mode") is None:
        entry = next((m for m in _output(opts, "metrics") or [] if m.get("name") == metric), {"name": metric})
        stopping["mode"] = metric_mode(entry)
