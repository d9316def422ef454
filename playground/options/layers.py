"""Reads the user's opts layers into nested dicts: the JSON blob, a CANDLE-style defaults file, --set items.

Each loader raises `OptsError` naming the source and the place (line and column of malformed JSON, the
section and key of a defaults file). `merge` layers them (later wins) and remembers which layer set each key,
so that validation errors can say where a bad value came from.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from playground.options.opts_error import OptsError
from playground.options.user_input.set_items import parse_value, split_sets
from playground.options.user_input.set_items import split_set as parse_set  # noqa: F401 - the name callers import
from playground.options.user_input.user_files import read_ini, read_text


def load_blob(text: str, origin: str) -> dict:
    """Parse `{"opts": {...}}` from JSON text; `origin` names where it came from."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        lines = text.splitlines() or [""]
        line = lines[err.lineno - 1] if 0 < err.lineno <= len(lines) else ""
        pointer = " " * (err.colno - 1) + "^"
        raise OptsError(f"{origin}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}\n"
                        f"    {line}\n    {pointer}") from None
    if not isinstance(data, dict) or "opts" not in data:
        keys = ", ".join(sorted(data)) if isinstance(data, dict) else type(data).__name__
        raise OptsError(f'{origin}: expected a JSON object of the form {{"opts": {{...}}}}, got {keys or "{}"}')
    if not isinstance(data["opts"], dict):
        raise OptsError(f"{origin}: opts must be a JSON object (a dictionary of sections)")
    return data["opts"]


def load_blob_file(path: str) -> dict:
    """`{"opts": {...}}` from a file given as --parameters-file (read by the one reader of user files)."""
    return load_blob(read_text(path, "the opts file", f"--parameters-file {path}", OptsError), path)


def load_defaults_file(path: str, sections: tuple[str, ...], known_paths: list[str] | Callable[[], list[str]]) -> dict:
    """Read a CANDLE-style INI file into nested opts.

    `[Global_Params]` takes dotted keys (`epoch_iter.num_epochs = 20`) or bare keys that name exactly one known
    key (`batch_per_device = 32`; `known_paths` may be a function, called only when a bare key needs it, since
    listing the components' keys imports them); a section named like an opts section (`[epoch_iter]`) takes its
    own keys. Values are JSON literals as with --set (`null`, `true`, `3`, `[8, 16]`), else Python literals
    (`None`, `True`, `'step'`), else the plain string.
    """
    parser = read_ini(path, "the defaults file", f"--defaults-file {path}", OptsError)
    out: dict = {}
    problems = []
    for section in parser.sections():
        for key, text in parser.items(section):
            where = f"--defaults-file {path}, [{section}] {key}"
            if section in sections:
                dotted = f"{section}.{key}"
            elif section == "Global_Params":
                if not isinstance(known_paths, list) and "." not in key:
                    known_paths = known_paths()
                dotted = key if "." in key else _unique_path(key, known_paths)
                if dotted is None:
                    problems.append(f"{where}: a bare key must name exactly one known opts key; write it dotted "
                                    f"(section.{key})")
                    continue
            else:
                problems.append(f"{where}: unknown section [{section}]; use [Global_Params] or one of "
                                + ", ".join(f"[{s}]" for s in sections))
                continue
            set_path(out, dotted, literal_value(text))
    if problems:
        raise OptsError(problems)
    return out


def sets_layer(items: list[str]) -> dict:
    """`section.key=value` items as the nested `--set` layer (set_items.py reads them); all bad items at once."""
    layer: dict = {}
    for path, value in split_sets(items):
        set_path(layer, path, value)
    return layer


def set_path(tree: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = tree
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


def merge(layers: list[tuple[str, dict]]) -> tuple[dict, dict[str, str]]:
    """Deep-merge `(layer name, nested dict)` pairs, later layers winning; also return path -> layer name."""
    merged: dict = {}
    origin: dict[str, str] = {}

    def walk(target: dict, source: dict, prefix: str, layer: str) -> None:
        for key, value in source.items():
            path = f"{prefix}{key}"
            if isinstance(value, dict) and isinstance(target.get(key), dict):
                walk(target[key], value, path + ".", layer)
            else:
                target[key] = _copy(value)
                for stale in [p for p in origin if p.startswith(path + ".")]:
                    del origin[stale]
                _mark(origin, path, value, layer)

    for name, layer in layers:
        walk(merged, layer, "", name)
    return merged, origin


def describe_origin(origin: dict[str, str], path: str) -> str:
    layer = origin.get(path)
    return f" (from {layer})" if layer else ""


def _mark(origin: dict[str, str], path: str, value: Any, layer: str) -> None:
    origin[path] = layer
    if isinstance(value, dict):
        for key, child in value.items():
            _mark(origin, f"{path}.{key}", child, layer)


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value)) if isinstance(value, (dict, list)) else value


def literal_value(text: str) -> Any:
    """A defaults file's value, read as a --set value is (set_items.parse_value)."""
    return parse_value(text.strip())


def _unique_path(key: str, known_paths: list[str]) -> str | None:
    matches = {p for p in known_paths if p.rsplit(".", 1)[-1] == key}
    return matches.pop() if len(matches) == 1 else None

