"""mlrMBO's restart file: a CSV with header `y,<param>,...`; each row is an earlier evaluation that becomes a
completed trial before sampling starts, so a search continues from it. Parameters must be keys of the space.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

from playground.options.user_input.user_files import read_text
from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.space import Param


@dataclass(frozen=True)
class PriorPoint:
    y: float
    params: dict[str, Any]


def read_restart_file(path: str, space: list[Param]) -> list[PriorPoint]:
    sampled = {p.key: p for p in space if p.sampled}
    rows = list(csv.reader(io.StringIO(read_text(path, "the restart file", path, SweepError), newline="")))
    if not rows or not rows[0] or rows[0][0].strip() != "y":
        raise SweepError(f"{path}, line 1: the header must start with y, then the parameters (y,<param>,...)")
    header = [h.strip() for h in rows[0]]
    problems = [f"{path}, line 1: {name!r} is not a parameter of the space ({', '.join(sampled) or 'none'})"
                for name in header[1:] if name not in sampled]
    missing = sorted(set(sampled) - set(header[1:]))
    if missing:
        problems.append(f"{path}, line 1: missing parameters {', '.join(missing)}")
    if problems:
        raise SweepError(problems)
    points = []
    for number, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problems.append(f"{path}, line {number}: {len(row)} values for {len(header)} columns")
            continue
        try:
            y = float(row[0])
            params = {name: _value(cell, sampled[name]) for name, cell in zip(header[1:], row[1:])}
        except ValueError as err:
            problems.append(f"{path}, line {number}: {err}")
            continue
        points.append(PriorPoint(y, params))
    if problems:
        raise SweepError(problems)
    return points


def _value(cell: str, param: Param) -> Any:
    text = cell.strip()
    if param.type == "categorical":
        for value in param.vals:
            if str(value) == text or json.dumps(value) == text:
                return value
        raise ValueError(f"{text!r} is not one of {param.key}'s values {list(param.vals)}")
    value = int(text) if param.type == "int" else float(text)
    lo, hi = (param.base ** param.minval, param.base ** param.maxval) if param.type == "log" else (param.minval, param.maxval)
    if not lo <= value <= hi:
        raise ValueError(f"{param.key} = {text} is outside [{lo}, {hi}]")
    return value
