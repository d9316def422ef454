"""The opts of several runs side by side: every dotted key whose value is not the same in all of them."""
from __future__ import annotations

from typing import Any

ABSENT = "(absent)"


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    """{"a.b": value} for each leaf of nested dicts (a list is a leaf)."""
    if not isinstance(tree, dict) or not tree:
        return {prefix: tree} if prefix else {}
    out: dict[str, Any] = {}
    for key, value in tree.items():
        out.update(flatten(value, f"{prefix}{key}." if isinstance(value, dict) and value else f"{prefix}{key}"))
    return {k.rstrip("."): v for k, v in out.items()}


def opts_diff(opts: list[dict]) -> tuple[list[dict[str, Any]], int]:
    """([{key, values: [one per run, ABSENT where a run lacks it]}], count of keys that are the same in all)."""
    flat = [flatten(o) for o in opts]
    keys = list(dict.fromkeys(k for f in flat for k in f))
    rows, same = [], 0
    for key in keys:
        values = [f.get(key, ABSENT) for f in flat]
        if all(v == values[0] for v in values[1:]):
            same += 1
        else:
            rows.append({"key": key, "values": values})
    return rows, same
