"""CANDLE's list values written as one string (`dense: "1500 500"` in a upf or mlrMBO file), split as
Supervisor's model runner splits them before a benchmark sees them.

A string of two or more space-separated parts whose first part is a number is a list: of floats when that
first part has a '.', else of integers. Any other string is not a list. A list whose other parts do not
convert is an error (Supervisor's runner crashes on it at the trial's start; here it is found before any
trial starts).
"""
from __future__ import annotations

from typing import Any


class ListValueError(ValueError):
    """A value that CANDLE reads as a list has a part that is not a number of the list's kind."""


def split_candle_list(value: Any) -> list[int] | list[float] | None:
    """The list `value` stands for, or None when it is not a CANDLE list string. Raises ListValueError."""
    if not isinstance(value, str):
        return None
    parts = value.split()
    if len(parts) < 2 or not _is_number(parts[0]):
        return None
    kind = float if "." in parts[0] else int
    try:
        return [kind(part) for part in parts]
    except ValueError:
        bad = next(p for p in parts if not _converts(kind, p))
        raise ListValueError(f"{value!r} is a CANDLE list (it starts with the number {parts[0]}), but {bad!r} is "
                             f"not {'a number' if kind is float else 'an integer'}; write every item as "
                             f"{'a number' if kind is float else 'an integer'}, separated by spaces") from None


def _is_number(text: str) -> bool:
    return _converts(float, text)


def _converts(kind: type, text: str) -> bool:
    try:
        kind(text)
        return True
    except ValueError:
        return False


def list_value_problems(points: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """For (where, params) pairs (a upf line, a point of a space): one line per value that CANDLE reads as a
    list but that does not split, naming where and the key. Empty when every value is usable."""
    problems = []
    for where, params in points:
        for key, value in params.items():
            try:
                split_candle_list(value)
            except ListValueError as err:
                problems.append(f"{where}: {key}: {err}")
    return problems
