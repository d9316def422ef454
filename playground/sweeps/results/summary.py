"""The sweep's reports, rewritten whole and atomically by one writer: summary.csv, summary.md (sorted by the
objective: each trial's params, state, best and last value, wall time), best.json (the runnable opts of the
best trial), CANDLE's output.csv (one row per trial) and result.txt in each finished trial's folder.
"""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass
from typing import Any

from playground.outputs.atomic_files import atomic_open, write_json
from playground.sweeps.files.metrics_tail import epoch_records, objective_value
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.spec import Objective

TERMINAL = ("complete", "pruned", "fail")


@dataclass
class TrialRow:
    id: str
    number: int
    state: str
    value: float | None
    best: float | None
    last: float | None
    wall_seconds: float
    params: dict[str, Any]


def collect(study: Any, folder: SweepFolder, objectives: list[Objective]) -> list[TrialRow]:
    from playground.sweeps.search.study import trial_id_of
    rows = []
    objective = objectives[0]
    for trial in study.get_trials(deepcopy=False):
        trial_id = trial_id_of(trial)
        records = epoch_records(os.path.join(folder.trial_dir(trial_id), "metrics.jsonl"))
        attempts = [a for a in folder.read_attempts(trial_id) if "end" in a]
        state = "imported" if trial.user_attrs.get("imported") else trial.state.name.lower()
        rows.append(TrialRow(
            id=trial_id, number=trial.number, state=state,
            value=trial.values[0] if trial.values else None,
            best=objective_value(records, objective.metric, objective.mode, "best"),
            last=objective_value(records, objective.metric, objective.mode, "last"),
            wall_seconds=round(sum(a["end"] - a["start"] for a in attempts), 3),
            params=trial.user_attrs.get("sets", {})))
    return rows


def ranked(rows: list[TrialRow], objective: Objective) -> list[TrialRow]:
    """Complete trials by value, then pruned ones by value, then the rest by number."""
    order = {"complete": 0, "imported": 1, "pruned": 2}
    sign = 1 if objective.mode == "min" else -1

    def key(row: TrialRow) -> tuple:
        has = row.value is not None and row.state in order
        return (order.get(row.state, 3), 0 if has else 1, sign * row.value if has else 0.0, row.number)
    return sorted(rows, key=key)


def write_summary(study: Any, folder: SweepFolder, objectives: list[Objective]) -> list[TrialRow]:
    objective = objectives[0]
    rows = ranked(collect(study, folder, objectives), objective)
    keys = list(dict.fromkeys(k for row in rows for k in row.params))
    header = ["id", "number", "state", objective.metric, "best", "last", "wall_seconds", *keys]
    table = [[r.id, r.number, r.state, _num(r.value), _num(r.best), _num(r.last), r.wall_seconds,
              *[json.dumps(r.params[k]) if k in r.params else "" for k in keys]] for r in rows]
    _write_csv(os.path.join(folder.root, "summary.csv"), header, table)
    _write_markdown(os.path.join(folder.root, "summary.md"), header, table, objective, len(rows))
    _write_candle(folder, rows, objective, keys)
    best = next((r for r in rows if r.state == "complete" and r.value is not None), None)
    if best is not None:
        opts_path = os.path.join(folder.trial_dir(best.id), "opts.json")
        if os.path.isfile(opts_path):
            with open(opts_path, encoding="utf-8") as handle:
                opts = json.load(handle)
            write_json(os.path.join(folder.root, "best.json"), opts, durable=False)
    return rows


def _write_candle(folder: SweepFolder, rows: list[TrialRow], objective: Objective, keys: list[str]) -> None:
    finished = sorted((r for r in rows if r.state in ("complete", "pruned") and r.value is not None),
                      key=lambda r: r.number)
    for row in finished:
        with atomic_open(os.path.join(folder.trial_dir(row.id), "result.txt"), durable=False) as handle:
            handle.write(f"{row.value!r}\n")
    header = ["run_id", *keys, objective.metric]
    _write_csv(os.path.join(folder.root, "output.csv"), header,
               [[r.id, *[json.dumps(r.params.get(k)) if k in r.params else "" for k in keys], repr(r.value)]
                for r in finished])


def _write_csv(path: str, header: list[str], table: list[list]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(table)
    with atomic_open(path, durable=False) as handle:
        handle.write(buffer.getvalue())


def _write_markdown(path: str, header: list[str], table: list[list], objective: Objective, count: int) -> None:
    lines = [f"# Sweep summary: {count} trials, sorted by {objective.metric} ({objective.mode})", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in table]
    with atomic_open(path, durable=False) as handle:
        handle.write("\n".join(lines) + "\n")


def _num(value: float | None) -> str:
    return "" if value is None else repr(value)
