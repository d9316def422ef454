"""One trial of a sweep as its row and learning curve, kept in step with its folder: trial.json (settings, state,
values, exit), metrics.jsonl followed as it grows (its full test passes are the curve), attempts.jsonl (the wall
time of its attempts). A finished trial's folder no longer changes: its sweep looks at it again only now and then.
"""
from __future__ import annotations

import time
from typing import Any

from playground.outputs.run_folder import RunFolder
from playground.ui.files.followed_file import FollowedRecords, JsonFile

FINISHED = ("complete", "pruned", "fail", "imported")


class TrialWatch:
    def __init__(self, trial_id: str, path: str) -> None:
        self.id, self.path = trial_id, path
        folder = RunFolder(path)
        self.trial = JsonFile(folder.trial)
        self.records = FollowedRecords(folder.metrics)
        self.attempts = FollowedRecords(folder.attempts)
        self.version = 0           # the sweep's change counter when this row last changed
        self.curve_version = 0     # ... when its full test passes last changed
        self._epoch_count = 0
        self._generation = 0

    @property
    def state(self) -> str:
        value = self.trial.value
        return str(value.get("state") or "starting") if isinstance(value, dict) else "starting"

    def poll(self, version: int) -> bool:
        """Read what changed; `version` is the sweep's counter for a change now. Whether the row changed."""
        changed = self.trial.poll()
        if self.records.poll():
            epochs = sum(1 for r in self.records.records if r.get("kind", "epoch") == "epoch")
            if (epochs, self.records.generation) != (self._epoch_count, self._generation):
                self._epoch_count, self._generation = epochs, self.records.generation
                self.curve_version = version
            changed = True
        changed |= self.attempts.poll()
        if changed:
            self.version = version
        return changed

    def row(self, objectives: list[tuple[str, str]]) -> dict[str, Any]:
        """The trials table's row: id, number, state, values (final, else the latest full pass's), best of the
        first objective, epochs trained, wall seconds, exit code and reason, settings."""
        trial = self.trial.value if isinstance(self.trial.value, dict) else {}
        passes = self.full_passes()
        latest = [_last(passes, metric) for metric, _ in objectives]
        values = trial.get("values") if isinstance(trial.get("values"), list) else None
        best = None
        if objectives:
            metric, mode = objectives[0]
            seen = [r[metric] for r in passes if isinstance(r.get(metric), (int, float))]
            best = (min if mode == "min" else max)(seen) if seen else None
        last = self.records.records[-1] if self.records.records else {}
        return {"id": self.id, "number": trial.get("number"), "state": self.state,
                "values": values if values is not None else latest, "final": values is not None, "best": best,
                "epochs": last.get("epochs"), "wall": self.wall_seconds(), "exit": trial.get("exit_code"),
                "reason": trial.get("reason"), "params": trial.get("params") or {}}

    def full_passes(self) -> list[dict]:
        return [r for r in self.records.records if r.get("kind", "epoch") == "epoch"]

    def curve(self, metric: str, x: str) -> dict[str, list]:
        """The full test passes' `metric` against `x` (epochs, iteration or samples)."""
        points = [(r.get(x), r[metric]) for r in self.full_passes() if isinstance(r.get(metric), (int, float))]
        return {"x": [p[0] for p in points], "y": [p[1] for p in points]}

    def wall_seconds(self) -> float | None:
        spans = [a["end"] - a["start"] for a in self.attempts.records
                 if isinstance(a.get("end"), (int, float)) and isinstance(a.get("start"), (int, float))]
        running = [a for a in self.attempts.records[-1:] if "end" not in a and isinstance(a.get("start"), (int, float))]
        if running and self.state == "running":
            spans.append(time.time() - running[0]["start"])
        return round(sum(spans), 3) if spans else None

    def started(self) -> float | None:
        return next((a["start"] for a in self.attempts.records if isinstance(a.get("start"), (int, float))), None)

    def ended(self) -> float | None:
        return max((a["end"] for a in self.attempts.records if isinstance(a.get("end"), (int, float))), default=None)


def _last(records: list[dict], metric: str) -> float | None:
    return next((r[metric] for r in reversed(records) if isinstance(r.get(metric), (int, float))), None)
