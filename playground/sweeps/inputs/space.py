"""The search space: Determined's parameter types (const, categorical, int, double, log) keyed by dotted opts keys.

A bare value in the spec is a constant. `count` on int/double/log gives the points of a grid. The Optuna
distributions of a space are built where the study is (search/study.py `distributions`), so reading a space
imports nothing heavy.
"""
from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

from playground.sweeps.errors import SweepError

TYPES = ("const", "categorical", "int", "double", "log")


@dataclass(frozen=True)
class Param:
    key: str
    type: str
    val: Any = None            # const
    vals: tuple = ()           # categorical
    minval: float = 0.0
    maxval: float = 0.0
    base: float = 10.0         # log: the value is base ** x for x in [minval, maxval]
    count: int | None = None   # grid points

    @property
    def sampled(self) -> bool:
        return self.type != "const"

    def grid_values(self) -> list[Any]:
        """The grid's values of this parameter, each once (in the order given)."""
        return _distinct(self._grid_values())

    def _grid_values(self) -> list[Any]:
        if self.type == "const":
            return [self.val]
        if self.type == "categorical":
            return list(self.vals)
        if self.count is None:
            raise SweepError(f"space.{self.key}: a grid needs `count` on {self.type} parameters")
        if self.type == "int":
            n = min(self.count, int(self.maxval - self.minval) + 1)
            return sorted({int(round(self.minval + i * (self.maxval - self.minval) / max(n - 1, 1))) for i in range(n)})
        points = [self.minval + i * (self.maxval - self.minval) / max(self.count - 1, 1) for i in range(self.count)]
        return [self.base ** x for x in points] if self.type == "log" else points

    def finite_values(self) -> list[Any] | None:
        """Every value a search can give this parameter, when there are finitely many (None: a real range)."""
        if self.type in ("double", "log"):
            return None
        if self.type == "int":
            return list(range(int(self.minval), int(self.maxval) + 1))
        return _distinct([self.val] if self.type == "const" else list(self.vals))

    def corner_values(self) -> list[Any]:
        """The values that can change which opts are valid: every category, both ends of a range."""
        if self.type == "const":
            return [self.val]
        if self.type == "categorical":
            return list(self.vals)
        ends = [self.minval, self.maxval]
        if self.type == "int":
            return [int(v) for v in ends]
        return [self.base ** v for v in ends] if self.type == "log" else ends


def parse_space(raw: Any, where: str = "space", dotted: bool = True) -> list[Param]:
    """Parse the spec's `space` mapping; every problem is reported at once. Keys are dotted opts keys, or
    (dotted False) a CANDLE script's own param names."""
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise SweepError(f"{where}: expected a mapping of dotted opts keys to parameters")
    params, problems = [], []
    for key, value in raw.items():
        try:
            params.append(_parse_param(str(key), value, f"{where}.{key}", dotted))
        except SweepError as err:
            problems.extend(err.problems)
    if problems:
        raise SweepError(problems)
    return params


def _parse_param(key: str, value: Any, where: str, dotted: bool) -> Param:
    if dotted and ("." not in key or not all(key.split("."))):
        raise SweepError(f"{where}: keys are dotted opts keys (section.key), e.g. model_param.base_learning_rate")
    if not (isinstance(value, dict) and "type" in value):
        return Param(key, "const", val=value)
    kind = value["type"]
    if kind not in TYPES:
        raise SweepError(f"{where}.type: {kind!r} is not a parameter type; use one of {', '.join(TYPES)}")
    allowed = {"const": {"val"}, "categorical": {"vals"}, "int": {"minval", "maxval", "count"},
               "double": {"minval", "maxval", "count"}, "log": {"minval", "maxval", "base", "count"}}[kind]
    extra = sorted(set(value) - allowed - {"type"})
    if extra:
        raise SweepError(f"{where}: {', '.join(extra)} not allowed for type {kind} (allowed: {', '.join(sorted(allowed))})")
    if kind == "const":
        return Param(key, kind, val=value.get("val"))
    if kind == "categorical":
        vals = value.get("vals")
        if not isinstance(vals, list) or not vals:
            raise SweepError(f"{where}.vals: expected a non-empty list")
        for index, choice in enumerate(vals):
            _check_finite(choice, f"{where}.vals[{index}]")
        return Param(key, kind, vals=tuple(vals))
    lo, hi = value.get("minval"), value.get("maxval")
    numbers = (int,) if kind == "int" else (int, float)
    if not all(isinstance(v, numbers) and not isinstance(v, bool) for v in (lo, hi)):
        raise SweepError(f"{where}: minval and maxval must be {'integers' if kind == 'int' else 'numbers'}")
    _check_finite(lo, f"{where}.minval")
    _check_finite(hi, f"{where}.maxval")
    if lo > hi:
        raise SweepError(f"{where}: minval {lo} is above maxval {hi}")
    count = value.get("count")
    if count is not None and (not isinstance(count, int) or count < 1):
        raise SweepError(f"{where}.count: expected a positive integer")
    base = value.get("base", 10.0)
    if kind == "log" and (not isinstance(base, (int, float)) or isinstance(base, bool) or not base > 1):
        raise SweepError(f"{where}.base: expected a number above 1")
    if kind == "log":
        _check_finite(base, f"{where}.base")
        for end, name in ((lo, "minval"), (hi, "maxval")):
            _check_power(base, end, f"{where}.{name}")
    return Param(key, kind, minval=lo, maxval=hi, base=float(base), count=count)


def _distinct(values: list[Any]) -> list[Any]:
    """Each value once, the first of equal ones kept in place (a repeated choice is no second point)."""
    return list({json.dumps(v, sort_keys=True, default=repr): v for v in values}.values())


def _check_finite(value: Any, where: str) -> None:
    """NaN and the infinities are no bound and no choice (a sampler cannot draw from them): refused by key path."""
    if isinstance(value, float) and not math.isfinite(value):
        raise SweepError(f"{where}: {value} is not a finite number; give a finite one")
    for index, item in enumerate(value if isinstance(value, (list, tuple)) else []):
        _check_finite(item, f"{where}[{index}]")
    for key, item in (value.items() if isinstance(value, dict) else []):
        _check_finite(item, f"{where}.{key}")


def _check_power(base: float, exponent: float, where: str) -> None:
    """A log range's end is base**exponent: it must be a finite number above 0."""
    try:
        value = float(base) ** exponent
    except OverflowError:
        value = math.inf
    if not (math.isfinite(value) and value > 0):
        raise SweepError(f"{where}: {base:g}**{exponent} is {value}, not a finite number above 0; "
                         f"give a smaller exponent (the value is base**x)")


def space_size(params: list[Param]) -> int | None:
    """How many distinct points the space has (constants count once); None when a real range makes it endless."""
    size = 1
    for p in params:
        values = p.finite_values()
        if values is None:
            return None
        size *= len(values)
    return size


def constants(params: list[Param]) -> dict[str, Any]:
    return {p.key: p.val for p in params if not p.sampled}


def grid_points(params: list[Param]) -> list[dict[str, Any]]:
    """Every combination of the sampled parameters' grid values, in a stable order (first key slowest)."""
    sampled = [p for p in params if p.sampled]
    values = [p.grid_values() for p in sampled]
    return [dict(zip([p.key for p in sampled], combo)) for combo in itertools.product(*values)]


def corner_points(params: list[Param]) -> list[dict[str, Any]]:
    """A few points that together use every category and both ends of every range (for validating opts)."""
    sampled = [p for p in params if p.sampled]
    if not sampled:
        return [{}]
    columns = [p.corner_values() for p in sampled]
    longest = max(len(c) for c in columns)
    return [{p.key: c[i % len(c)] for p, c in zip(sampled, columns)} for i in range(longest)]
