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
    values: list[float] | None = None   # every objective's, in the spec's order
    pareto: bool = False                # on the Pareto front (multi-objective sweeps)


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
            params=trial.user_attrs.get("sets", {}), values=list(trial.values) if trial.values else None))
    if len(objectives) > 1:
        mark_pareto(rows, objectives)
    return rows


def mark_pareto(rows: list[TrialRow], objectives: list[Objective]) -> None:
    """Set `pareto` on the finished rows no other row dominates over every objective."""
    from playground.sweeps.results.pareto import FRONT_STATES, front
    points = {r.id: r.values for r in rows
              if r.state in FRONT_STATES and r.values is not None and len(r.values) == len(objectives)}
    on_front = set(front(points, objectives))
    for row in rows:
        row.pareto = row.id in on_front


def ranked(rows: list[TrialRow], objective: Objective) -> list[TrialRow]:
    """Complete trials by value, then pruned ones by value, then the rest by number."""
    order = {"complete": 0, "imported": 1, "pruned": 2}
    sign = 1 if objective.mode == "min" else -1

    def key(row: TrialRow) -> tuple:   # a multi-objective sweep's Pareto front first (only it sets pareto)
        has = row.value is not None and row.state in order
        return (not row.pareto, order.get(row.state, 3), 0 if has else 1, sign * row.value if has else 0.0,
                row.number)
    return sorted(rows, key=key)


def write_summary(study: Any, folder: SweepFolder, objectives: list[Objective]) -> list[TrialRow]:
    objective = objectives[0]
    rows = ranked(collect(study, folder, objectives), objective)
    keys = list(dict.fromkeys(k for row in rows for k in row.params))
    header = ["id", "number", "state", objective.metric, "best", "last", "wall_seconds", *keys]
    table = [[r.id, r.number, r.state, _num(r.value), _num(r.best), _num(r.last), r.wall_seconds,
              *[json.dumps(r.params[k]) if k in r.params else "" for k in keys]] for r in rows]
    if len(objectives) > 1:   # every objective's value and the front, after the first objective's columns
        header[4:4] = [o.metric for o in objectives[1:]] + ["pareto"]
        for row, line in zip(rows, table):
            others = (row.values or [])[1:] + [None] * (len(objectives) - len(row.values or [None]))
            line[4:4] = [_num(v) for v in others] + ["yes" if row.pareto else ""]
    _write_csv(os.path.join(folder.root, "summary.csv"), header, table)
    _write_markdown(os.path.join(folder.root, "summary.md"), header, table, objectives, len(rows))
    _write_candle(folder, rows, objective, keys)
    if len(objectives) > 1:
        _write_front(folder, [r for r in rows if r.pareto], objectives)
        return rows
    best = next((r for r in rows if r.state == "complete" and r.value is not None), None)
    if best is not None:
        opts = _trial_opts(folder, best.id)
        if opts is not None:
            write_json(os.path.join(folder.root, "best.json"), opts, durable=False)
    return rows


def _trial_opts(folder: SweepFolder, trial_id: str) -> dict | None:
    opts_path = os.path.join(folder.trial_dir(trial_id), "opts.json")
    if not os.path.isfile(opts_path):
        return None
    with open(opts_path, encoding="utf-8") as handle:
        return json.load(handle)


def _write_front(folder: SweepFolder, front: list[TrialRow], objectives: list[Objective]) -> None:
    """best.json of a multi-objective sweep: its Pareto front, each trial with its values, settings and opts
    (retrain one with `--parameters-file <sweep>/trials/<id>/opts.json`)."""
    if not front:
        return
    write_json(os.path.join(folder.root, "best.json"), {
        "objectives": [{"metric": o.metric, "mode": o.mode} for o in objectives],
        "pareto_front": [{"id": r.id, "number": r.number, "values": dict(zip((o.metric for o in objectives), r.values)),
                          "params": r.params, "opts_file": os.path.join("trials", r.id, "opts.json")}
                         for r in front]}, durable=False)


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


def _write_markdown(path: str, header: list[str], table: list[list], objectives: list[Objective], count: int) -> None:
    order = (f"sorted by {objectives[0].metric} ({objectives[0].mode})" if len(objectives) == 1 else
             f"the Pareto front over {', '.join(f'{o.metric} ({o.mode})' for o in objectives)} first, then by "
             f"{objectives[0].metric}")
    lines = [f"# Sweep summary: {count} trials, {order}", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in table]
    with atomic_open(path, durable=False) as handle:
        handle.write("\n".join(lines) + "\n")


def _num(value: float | None) -> str:
    return "" if value is None else repr(value)
