"""The `searcher` of a Determined experiment and its lengths, checked as Determined's schema does.

Lengths are `{batches|records|epochs: n}` (max_length of 0.2x, min_validation_period, min_checkpoint_period)
or, for 0.38's adaptive_asha, `max_time` in units of `time_metric`. `searcher_length` gives either as one
`(unit, n)`; `SWEEP_TIME_METRIC` names the metrics.jsonl field a sweep ranks a trial by for that unit.
"""
from __future__ import annotations

from typing import Any


UNITS = ("batches", "records", "epochs")
SWEEP_TIME_METRIC = {"batches": "iteration", "records": "samples", "epochs": "epochs"}
SEARCHERS = ("single", "random", "grid", "adaptive_asha")
LEGACY = {"async_halving": "adaptive_asha", "adaptive": "adaptive_asha", "adaptive_simple": "adaptive_asha",
          "sync_halving": "adaptive_asha", "pbt": "random or adaptive_asha", "custom": None}
ASHA_MODES = ("aggressive", "standard", "conservative")
_COMMON = {"name", "metric", "smaller_is_better", "max_length", "source_trial_id", "source_checkpoint_uuid"}
KEYS = {"single": _COMMON, "grid": _COMMON | {"max_concurrent_trials"},
        "random": _COMMON | {"max_trials", "max_concurrent_trials"},
        "adaptive_asha": _COMMON | {"max_trials", "max_concurrent_trials", "time_metric", "max_time", "mode",
                                    "divisor", "max_rungs", "bracket_rungs", "stop_once"}}
DEFAULTS = {"smaller_is_better": True, "max_concurrent_trials": 16, "mode": "standard", "divisor": 4,
            "max_rungs": 5, "bracket_rungs": []}


def check_length(raw: Any, where: str, problems: list[str], positive: bool = False) -> tuple[str, int] | None:
    """`{batches|records|epochs: n}` as (unit, n); None (with a problem appended) when malformed."""
    if not (isinstance(raw, dict) and len(raw) == 1 and next(iter(raw)) in UNITS):
        problems.append(f"{where}: a length is one of {{batches: N}}, {{records: N}}, {{epochs: N}}, got {raw!r}")
        return None
    unit, n = next(iter(raw.items()))
    least = 1 if positive else 0
    if isinstance(n, bool) or not isinstance(n, int) or n < least:
        problems.append(f"{where}.{unit}: expected a whole number >= {least}, got {n!r}")
        return None
    return unit, n


def check_searcher(raw: Any, problems: list[str]) -> dict:
    """The searcher with Determined's defaults filled; every problem appended as `searcher.<key>: ...`."""
    if not isinstance(raw, dict):
        problems.append("searcher: required, a mapping with name (single, random, grid, adaptive_asha) and metric")
        return {}
    name = raw.get("name")
    if not isinstance(name, str) or name not in SEARCHERS:   # a list or a mapping is no name (nor hashable)
        hint = ""
        if isinstance(name, str) and name in LEGACY:
            hint = (f"; {name} was removed from Determined, use {LEGACY[name]}" if LEGACY[name] else
                    "; a custom searcher runs on Determined's master, which a local run does not have")
        problems.append(f"searcher.name: {name!r} is not supported{hint} (supported: {', '.join(SEARCHERS)})")
        return {}
    out = {**{k: v for k, v in DEFAULTS.items() if k in KEYS[name]}, **raw}
    for key in sorted(set(raw) - KEYS[name]):
        problems.append(f"searcher.{key}: not a key of the {name} searcher (keys: {', '.join(sorted(KEYS[name]))})")
    if not isinstance(out.get("metric"), str) or not out["metric"]:
        problems.append("searcher.metric: required, the name of the validation metric to rank trials by")
    if not isinstance(out["smaller_is_better"], bool):
        problems.append(f"searcher.smaller_is_better: expected true or false, got {out['smaller_is_better']!r}")
    for key in ("source_trial_id", "source_checkpoint_uuid"):
        if out.get(key) is not None:
            problems.append(f"searcher.{key}: starting from another trial's checkpoint needs Determined's "
                            "checkpoint registry; use `playground sweep continue DIR ID` for a sweep's trial")
    _check_counts(out, name, problems)
    if out.get("max_length") is not None:
        check_length(out["max_length"], "searcher.max_length", problems, positive=True)
    if name == "adaptive_asha":
        _check_asha(out, problems)
    return out


def _check_counts(out: dict, name: str, problems: list[str]) -> None:
    for key, least in (("max_trials", 1), ("max_concurrent_trials", 0), ("max_rungs", 1)):
        value = out.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
            problems.append(f"searcher.{key}: expected a whole number >= {least}, got {value!r}")
    if name in ("random", "adaptive_asha") and out.get("max_trials") is None:
        problems.append(f"searcher.max_trials: required for {name} (the number of trials)")


def _check_asha(out: dict, problems: list[str]) -> None:
    if out["mode"] not in ASHA_MODES:
        problems.append(f"searcher.mode: {out['mode']!r}; use one of {', '.join(ASHA_MODES)}")
    divisor = out["divisor"]
    if isinstance(divisor, bool) or not isinstance(divisor, (int, float)) or divisor <= 1:
        problems.append(f"searcher.divisor: expected a number above 1, got {divisor!r}")
    rungs = out["bracket_rungs"]
    if not isinstance(rungs, list) or not all(isinstance(r, int) and r >= 1 for r in rungs):
        problems.append(f"searcher.bracket_rungs: expected a list of positive integers, got {rungs!r}")
    new = [k for k in ("time_metric", "max_time") if out.get(k) is not None]
    if out.get("max_length") is not None and new:
        problems.append("searcher: give max_length (Determined 0.2x) or time_metric and max_time (0.38), not both")
    elif out.get("max_length") is None:
        if len(new) < 2:
            problems.append("searcher: adaptive_asha needs max_length: {batches|records|epochs: N}, or "
                            "time_metric and max_time")
        else:
            if out["time_metric"] not in UNITS:
                problems.append(f"searcher.time_metric: {out['time_metric']!r} cannot be ranked on locally; use "
                                f"one of {', '.join(UNITS)} (the trial's progress playground records)")
            max_time = out["max_time"]
            if isinstance(max_time, bool) or not isinstance(max_time, int) or max_time < 1:
                problems.append(f"searcher.max_time: expected a whole number >= 1, got {max_time!r}")


def searcher_length(searcher: dict) -> tuple[str, int] | None:
    """(unit, n) the trial trains for: max_length, or time_metric + max_time; None when neither is given."""
    length = searcher.get("max_length")
    if isinstance(length, dict) and len(length) == 1:
        return next(iter(length.items()))
    if searcher.get("time_metric") in UNITS and isinstance(searcher.get("max_time"), int):
        return searcher["time_metric"], searcher["max_time"]
    return None
