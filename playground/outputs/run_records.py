"""Reading a run folder back: its opts and the metrics lists rebuilt from metrics.jsonl."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

from playground.outputs.run_folder import RunFolder
from playground.processes.exit_codes import UserError


class RunRecordsError(UserError, ValueError):
    """A folder is not a readable run folder; the message names the file (and line)."""


@dataclass
class RunRecords:
    folder: str
    opts: dict
    records: list[dict]

    @property
    def plots(self) -> list[dict]:
        return self.opts.get("output", {}).get("plots", [])

    @property
    def lists(self) -> dict[str, list]:
        """The original index-aligned lists (epochs, samples_per_sec, secs_per_train, one per metric), each
        point's kind, and every other series recorded in metrics.jsonl (lr, samples, wall_time, ...)."""
        names = [m["name"] for m in self.opts.get("output", {}).get("metrics", [])]
        keys = ["epochs", "samples_per_sec", "secs_per_train", "kind", *names]
        keys += [k for k in dict.fromkeys(k for r in self.records for k in r) if k not in keys]
        return {key: [r.get(key) for r in self.records] for key in keys}

    def series(self) -> list[str]:
        """Names that have at least one numeric value: what `playground plot --ys` can draw."""
        return [k for k, values in self.lists.items()
                if k != "index" and any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)]

    @property
    def test_metrics(self) -> set[str]:
        return {m["name"] for m in self.opts.get("output", {}).get("metrics", []) if not m.get("is_train", True)}


def read_run(folder: str) -> RunRecords:
    layout = RunFolder(folder)
    opts_path, metrics_path = layout.opts, layout.metrics
    for path in (opts_path, metrics_path):
        if not os.path.isfile(path):
            raise RunRecordsError(f"{folder} is not a run folder: {os.path.basename(path)} is missing")
    with open(opts_path, encoding="utf-8") as handle:
        opts = json.load(handle)["opts"]
    records = []
    with open(metrics_path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                raise RunRecordsError(f"{metrics_path}, line {number}: not a JSON record") from None
    return RunRecords(folder, opts, records)
