"""The sweep's reports, each written atomically: summary.csv, summary.md (sorted by the objective: each trial's
params, state, best and last value, wall time), best.json (the runnable opts of the best trial), CANDLE's
output.csv (one row per trial) and result.txt in each finished trial's folder (its value, whatever its rank).

Incremental with a ReportCache (a running agent keeps one): a finished trial's folder no longer changes, so its
row is read once; a report file is rewritten only when its content changed or another writer replaced it;
result.txt only when the trial's value appears or changes. The content is always what a writer without a
cache (`sweep summary`, `--rebuild`) gives.
"""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from playground.outputs.atomic_files import atomic_open, write_json
from playground.outputs.run_folder import RunFolder
from playground.sweeps.files.metrics_tail import epoch_records, objective_value
from playground.sweeps.files.sweep_folder import SweepFolder, file_stamp
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


@dataclass
class ReportCache:
    """What one writing process knows: rows of trials that are not running (a finished trial's files no longer
    change), and the files it wrote, each with its content key and the file_stamp it left."""
    rows: dict[int, tuple[tuple, TrialRow]] = field(default_factory=dict)    # trial number -> (signature, row)
    written: dict[str, tuple[Any, tuple[int, int, int] | None]] = field(default_factory=dict)
    epochs: dict[str, list[dict]] = field(default_factory=dict)   # trial id -> full test passes already read
    lines: dict[int, tuple] = field(default_factory=dict)   # trial number -> (row, keys, its formatted lines)
    pace: Callable[[], None] | None = None   # called after each trial folder read (LiveReports spreads the work)
    # take finished trials' best, last and wall time from the summary.csv an earlier writer left, where its row
    # has the study's id, state and value (an agent joining a sweep of thousands then reads no folder of them)
    seed_from_summary: bool = False
    folders_read: int = 0        # trial folders read for rows: the work done, which tests count


def collect(study: Any, folder: SweepFolder, objectives: list[Objective],
            cache: ReportCache | None = None) -> list[TrialRow]:
    """Every trial's row; with `cache`, only running trials and trials that changed since are read again."""
    cache = cache if cache is not None else ReportCache()
    earlier = _summary_cells(folder, objectives[0]) if cache.seed_from_summary else {}
    cache.seed_from_summary = False
    rows = []
    for trial in study.get_trials(deepcopy=False):
        signature = _signature(trial)
        known = cache.rows.get(trial.number)
        if known is not None and known[0] == signature:
            rows.append(known[1])
            continue
        row = _row_from_cells(trial, earlier.get(trial.number)) if trial.state.name != "RUNNING" else None
        if row is None:
            row = _row(trial, folder, objectives[0], cache.epochs)
            cache.folders_read += 1
            if cache.pace is not None:
                cache.pace()
        if trial.state.name != "RUNNING":
            cache.rows[trial.number] = (signature, row)
        rows.append(row)
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


def _signature(trial: Any) -> tuple:
    """What a cached row depends on besides the trial's files (`sets` are stored before a trial first runs)."""
    attrs = trial.user_attrs
    return trial.state.name, tuple(trial.values or ()), attrs.get("trial_id"), attrs.get("imported")


def study_rows(study: Any, objectives: list[Objective]) -> list[TrialRow]:
    """Every trial's row from the study alone, without best, last and wall time (no trial folder is read)."""
    rows = [_row(trial, None, None) for trial in study.get_trials(deepcopy=False)]
    if len(objectives) > 1:
        mark_pareto(rows, objectives)
    return rows


def _row(trial: Any, folder: SweepFolder | None, objective: Objective | None,
         known: dict[str, list[dict]] | None = None) -> TrialRow:
    from playground.sweeps.search.study import trial_id_of
    trial_id = trial_id_of(trial)
    records = (known or {}).pop(trial_id, None)
    if records is None:
        records = [] if folder is None else epoch_records(folder.run_folder(trial_id).metrics)
    attempts = [] if folder is None else [a for a in folder.read_attempts(trial_id) if "end" in a]
    state = "imported" if trial.user_attrs.get("imported") else trial.state.name.lower()
    return TrialRow(
        id=trial_id, number=trial.number, state=state,
        value=trial.values[0] if trial.values else None,
        best=None if objective is None else objective_value(records, objective.metric, objective.mode, "best"),
        last=None if objective is None else objective_value(records, objective.metric, objective.mode, "last"),
        wall_seconds=round(sum(a["end"] - a["start"] for a in attempts), 3),
        params=trial.user_attrs.get("sets", {}), values=list(trial.values) if trial.values else None)


def _summary_cells(folder: SweepFolder, objective: Objective) -> dict[int, list[str]]:
    """summary.csv's rows by trial number, when its leading columns are this sweep's ({} otherwise)."""
    try:
        with open(os.path.join(folder.root, "summary.csv"), encoding="utf-8", newline="") as handle:
            table = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error):
        return {}
    if not table or table[0][:7] != ["id", "number", "state", objective.metric, "best", "last", "wall_seconds"]:
        return {}
    return {int(r[1]): r for r in table[1:] if len(r) == len(table[0]) and r[1].isdigit()}


def _row_from_cells(trial: Any, cells: list[str] | None) -> TrialRow | None:
    """The row of a trial that is not running from its summary.csv cells, if they are this trial's as the study
    has it now (id, state, value); None otherwise (its folder is read)."""
    if cells is None:
        return None
    from playground.sweeps.search.study import trial_id_of
    state = "imported" if trial.user_attrs.get("imported") else trial.state.name.lower()
    value = trial.values[0] if trial.values else None
    if cells[0] != trial_id_of(trial) or cells[2] != state or cells[3] != _num(value):
        return None
    try:
        best, last, wall = (None if c == "" else json.loads(c) for c in cells[4:7])
    except ValueError:      # inf or nan: read the folder
        return None
    return TrialRow(id=cells[0], number=trial.number, state=state, value=value, best=best, last=last,
                    wall_seconds=wall, params=trial.user_attrs.get("sets", {}),
                    values=list(trial.values) if trial.values else None)


def ranked(rows: list[TrialRow], objective: Objective) -> list[TrialRow]:
    """Complete trials by value, then pruned ones by value, then the rest by number."""
    order = {"complete": 0, "imported": 1, "pruned": 2}
    sign = 1 if objective.mode == "min" else -1

    def key(row: TrialRow) -> tuple:   # a multi-objective sweep's Pareto front first (only it sets pareto)
        has = row.value is not None and row.state in order
        return (not row.pareto, order.get(row.state, 3), 0 if has else 1, sign * row.value if has else 0.0,
                row.number)
    return sorted(rows, key=key)


def write_summary(study: Any, folder: SweepFolder, objectives: list[Objective],
                  cache: ReportCache | None = None) -> list[TrialRow]:
    cache = cache if cache is not None else ReportCache()
    objective = objectives[0]
    rows = ranked(collect(study, folder, objectives, cache), objective)
    keys = tuple(dict.fromkeys(k for row in rows for k in row.params))
    header = ["id", "number", "state", objective.metric, "best", "last", "wall_seconds", *keys]
    if len(objectives) > 1:   # every objective's value and the front, after the first objective's columns
        header[4:4] = [o.metric for o in objectives[1:]] + ["pareto"]
    lines = [_lines(cache, row, keys, len(objectives)) for row in rows]
    _write_text(cache, os.path.join(folder.root, "summary.csv"), _csv([header]) + "".join(x[0] for x in lines))
    order = (f"sorted by {objective.metric} ({objective.mode})" if len(objectives) == 1 else
             f"the Pareto front over {', '.join(f'{o.metric} ({o.mode})' for o in objectives)} first, then by "
             f"{objective.metric}")
    _write_text(cache, os.path.join(folder.root, "summary.md"), f"# Sweep summary: {len(rows)} trials, {order}\n\n"
                f"{_markdown(header)}|{'---|' * len(header)}\n" + "".join(x[1] for x in lines))
    _write_candle(cache, folder, rows, objective, keys)
    if len(objectives) > 1:
        _write_front(folder, [r for r in rows if r.pareto], objectives)
        return rows
    best = next((r for r in rows if r.state == "complete" and r.value is not None), None)
    if best is not None:
        opts_path = folder.run_folder(best.id).opts
        path = os.path.join(folder.root, "best.json")
        key = (best.id, file_stamp(opts_path))
        if key[1] is not None and not _unchanged(cache, path, key):
            with open(opts_path, encoding="utf-8") as handle:
                opts = json.load(handle)
            write_json(path, opts, durable=False)
            cache.written[path] = (key, file_stamp(path))
    return rows


def _lines(cache: ReportCache, row: TrialRow, keys: tuple[str, ...], count: int = 1) -> tuple[str, str, str]:
    """The row's line of summary.csv, of summary.md and of output.csv (`count` objectives), formatted once per
    row, set of keys and place on the Pareto front."""
    known = cache.lines.get(row.number)
    if known is not None and known[0] is row and known[1] == (keys, row.pareto):
        return known[2]
    params = [json.dumps(row.params[k]) if k in row.params else "" for k in keys]
    cells = [row.id, row.number, row.state, _num(row.value), _num(row.best), _num(row.last), row.wall_seconds, *params]
    if count > 1:
        others = (row.values or [])[1:] + [None] * (count - len(row.values or [None]))
        cells[4:4] = [_num(v) for v in others] + ["yes" if row.pareto else ""]
    out = [row.id, *[json.dumps(row.params.get(k)) if k in row.params else "" for k in keys], repr(row.value)]
    made = (_csv([cells]), _markdown(cells), _csv([out]))
    cache.lines[row.number] = (row, (keys, row.pareto), made)
    return made


def _write_front(folder: SweepFolder, front: list[TrialRow], objectives: list[Objective]) -> None:
    """best.json of a multi-objective sweep: its Pareto front, each trial with its values, settings and opts
    (retrain one with `--parameters-file <sweep>/trials/<id>/opts.json`)."""
    if not front:
        return
    write_json(os.path.join(folder.root, "best.json"), {
        "objectives": [{"metric": o.metric, "mode": o.mode} for o in objectives],
        "pareto_front": [{"id": r.id, "number": r.number, "values": dict(zip((o.metric for o in objectives), r.values)),
                          "params": r.params, "opts_file": RunFolder(os.path.join("trials", r.id)).opts}
                         for r in front]}, durable=False)


def _write_candle(cache: ReportCache, folder: SweepFolder, rows: list[TrialRow], objective: Objective,
                  keys: tuple[str, ...]) -> None:
    finished = sorted((r for r in rows if r.state in ("complete", "pruned") and r.value is not None),
                      key=lambda r: r.number)
    for row in finished:   # the value alone: a trial's result.txt is written when its value appears, not per end
        _write_result(cache, os.path.join(folder.trial_dir(row.id), "result.txt"), f"{row.value!r}\n")
    _write_text(cache, os.path.join(folder.root, "output.csv"),
                _csv([["run_id", *keys, objective.metric]]) + "".join(_lines(cache, r, keys)[2] for r in finished))


def _write_text(cache: ReportCache, path: str, text: str) -> None:
    """Replace `path` with `text` unless it holds it as this cache last wrote it and no other writer replaced
    it since (each atomic write makes a new inode)."""
    if _unchanged(cache, path, text):
        return
    with atomic_open(path, durable=False) as handle:
        handle.write(text)
    cache.written[path] = (text, file_stamp(path))


def _write_result(cache: ReportCache, path: str, text: str) -> None:
    """A trial's result.txt: written unless it already holds `text` (as this cache knows, or as read once);
    every writer writes the same value there, so no stat is needed while the cache knows it."""
    known = cache.written.get(path)
    if known is not None and known[0] == text:
        return
    if known is None:
        found = _read(path)
        if cache.pace is not None:
            cache.pace()
        if found == text:
            cache.written[path] = (text, None)
            return
    with atomic_open(path, durable=False) as handle:
        handle.write(text)
    cache.written[path] = (text, None)


def _unchanged(cache: ReportCache, path: str, key: Any) -> bool:
    known = cache.written.get(path)
    return known is not None and known[0] == key and known[1] is not None and known[1] == file_stamp(path)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _csv(table: list[list]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(table)
    return buffer.getvalue()


def _markdown(cells: list) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |\n"


def _num(value: float | None) -> str:
    return "" if value is None else repr(value)
