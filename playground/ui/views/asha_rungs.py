"""Adaptive ASHA's rungs as the learning-curves chart marks them: where each bracket's rungs lie in the time
metric (the searcher's arithmetic, playground/sweeps/search/asha.py) and which trial reached which rung with
what value (searcher.json, which the agent rewrites as trials report).
"""
from __future__ import annotations

from typing import Any

from playground.sweeps.search.asha import rung_units


def asha_rungs(searcher: dict[str, Any], state: Any) -> dict[str, Any] | None:
    """{time_metric, units: [[rung time per rung] per bracket], reached: {trial: [[bracket, rung], ...]}} of an
    adaptive ASHA sweep; None for other searchers, or before searcher.json exists."""
    if searcher.get("name") != "adaptive_asha" or not isinstance(state, dict):
        return None
    rungs = state.get("rungs")
    divisor, max_time = searcher.get("divisor"), searcher.get("max_time")
    if not isinstance(rungs, list) or not isinstance(divisor, (int, float)) or not isinstance(max_time, int):
        return None
    units = [rung_units(len(bracket), divisor, max_time) for bracket in rungs]
    reached: dict[str, list[list[int]]] = {}
    for b, bracket in enumerate(rungs):
        for r, rung in enumerate(bracket):
            for entry in rung:
                if isinstance(entry, list) and entry:
                    reached.setdefault(str(entry[0]), []).append([b, r])
    return {"time_metric": searcher.get("time_metric", "epochs"), "units": units, "reached": reached}
