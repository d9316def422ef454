"""What a sweep's header says of its trials, worked out once per change of the sweep (not per request): the
trials by state, the best complete trial, when the first attempt started and the last ended, whether all have
finished; and which trials the learning-curves chart draws when there are more than it can show.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playground.ui.views.trial_watch import FINISHED, TrialWatch

MAX_CURVES = 200     # more trials than this: the running ones and the best finished ones get a curve


@dataclass
class SweepSummary:
    counts: dict[str, int]
    best: dict[str, Any] | None
    started: float | None
    ended: float | None
    all_finished: bool


def summarize(rows: dict[str, dict], trials: dict[str, TrialWatch], objectives: list[tuple[str, str]]) -> SweepSummary:
    counts: dict[str, int] = {}
    for row in rows.values():
        counts[row["state"]] = counts.get(row["state"], 0) + 1
    starts = [s for s in (t.started() for t in trials.values()) if s is not None]
    ends = [e for e in (t.ended() for t in trials.values()) if e is not None]
    return SweepSummary(counts, _best(rows, objectives), min(starts, default=None), max(ends, default=None),
                        bool(rows) and all(r["state"] in FINISHED for r in rows.values()))


def _best(rows: dict[str, dict], objectives: list[tuple[str, str]]) -> dict[str, Any] | None:
    """The best complete trial by the first objective: {trial, metric, mode, value, params}."""
    if not objectives:
        return None
    metric, mode = objectives[0]
    done = [r for r in rows.values() if r["state"] in ("complete", "imported") and r["final"]
            and r["values"] and isinstance(r["values"][0], (int, float))]
    if not done:
        return None
    row = (min if mode == "min" else max)(done, key=lambda r: r["values"][0])
    return {"trial": row["id"], "metric": metric, "mode": mode, "value": row["values"][0], "params": row["params"]}


def curve_selection(rows: dict[str, dict], mode: str | None, limit: int = MAX_CURVES) -> list[str]:
    """The trials whose curves are drawn: all of them up to `limit`, else the running ones first, then the rest by
    their first objective's value, best first (`mode`), those without a value last."""
    if len(rows) <= limit:
        return list(rows)
    sign = -1.0 if mode == "max" else 1.0

    def rank(row: dict) -> tuple:
        value = row["values"][0] if row["values"] and isinstance(row["values"][0], (int, float)) else None
        return (row["state"] != "running", value is None, sign * value if value is not None else 0.0)
    return [r["id"] for r in sorted(rows.values(), key=rank)[:limit]]
