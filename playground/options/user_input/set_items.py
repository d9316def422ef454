"""`--set KEY=VALUE`: the one grammar of a setting given on the command line, for an opts run (`section.key`), a
CANDLE script (its params' names), a Determined experiment's hyperparameters and `sweep continue`.

The item is split at its first `=`. KEY is a dotted name whose parts are not empty; how many parts it needs
is the caller's (`SetForm`: two for an opts key, one or more elsewhere). VALUE is read by `parse_value`, the
same reading as a defaults file's values: a JSON literal (`3`, `1e-4`, `true`, `null`, `[8, 16]`, `"text"`),
else a Python literal (`True`, `None`, `'relu'`; a tuple becomes a list; complex numbers, bytes and sets stay
text), else `true`/`false` in any case as a boolean, else the text as written. Before this module an opts run
kept `True`, `None` and `'relu'` as those strings while a CANDLE run read them as Python does (docs: README.md).
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any, Callable

from playground.options.opts_error import OptsError


@dataclass(frozen=True)
class SetForm:
    """What KEY must look like in one context, and the example its error message gives."""

    least_parts: int      # dotted parts KEY must have
    expected: str         # the message's `expected ...`


OPTS_KEY = SetForm(2, "section.key=value, e.g. --set epoch_iter.num_epochs=20")
PARAM_KEY = SetForm(1, "key=value, e.g. --set epochs=20")
HPARAM_KEY = SetForm(1, "HPARAM=VALUE (dotted for a nested group: optimizer.lr=0.1)")


def split_set(item: str, form: SetForm = OPTS_KEY, error: Callable[[str], Exception] = OptsError) -> tuple[str, Any]:
    """`KEY=VALUE` -> (KEY, its value); a malformed item raises `error` naming it."""
    key, sep, text = item.partition("=")
    key = key.strip()
    parts = key.split(".")
    if not sep or len(parts) < form.least_parts or not all(parts):
        raise error(f"--set {item!r}: expected {form.expected}")
    return key, parse_value(text)


def split_sets(items: list[str], form: SetForm = OPTS_KEY,
               error: Callable[[list[str]], Exception] = OptsError) -> list[tuple[str, Any]]:
    """Every item split (later ones win when a mapping is made of them); every malformed item in one error."""
    pairs, problems = [], []
    for item in items:
        try:
            pairs.append(split_set(item, form))
        except OptsError as err:
            problems.extend(err.problems)
    if problems:
        raise error(problems)
    return pairs


def parse_value(text: str) -> Any:
    """A value as written on the command line or in a defaults file (the module doc says how it is read)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    stripped = text.strip()
    try:
        value = _plain(ast.literal_eval(stripped))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = _NOT_PLAIN
    if value is not _NOT_PLAIN:
        return value
    if stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    return text


_NOT_PLAIN = object()


def _plain(value: Any) -> Any:
    """A Python literal as JSON data (tuples as lists); _NOT_PLAIN when it holds anything JSON has not."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        items = [_plain(item) for item in value]
        return _NOT_PLAIN if any(item is _NOT_PLAIN for item in items) else items
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        items = {key: _plain(item) for key, item in value.items()}
        return _NOT_PLAIN if any(item is _NOT_PLAIN for item in items.values()) else items
    return _NOT_PLAIN
