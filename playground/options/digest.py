"""A short hash of resolved opts that is the same on every host and for every attempt of one experiment.

Resolved opts written by an older version lack the keys added since (a key it did not know could not change
what it ran): `same_experiment` fills those in from today's opts where today's value is the built-in default,
and each metric's `mode` (derived from the meter or the name when not written), before comparing hashes, so
`--resume` finds run folders made before a key existed.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from playground.options.builtin import BUILTIN_OPTS

# Keys that differ between the hosts or attempts of one experiment: the host's index, and what the input
# component reports about its data when the run starts.
VARYING = (("distributed", "shard_id"), ("input", "datasets"))
_DEFAULTS = {decl.path: decl.default for decl in BUILTIN_OPTS}


def opts_digest(opts: dict) -> str:
    same = json.loads(json.dumps(opts))
    for section, key in VARYING:
        if isinstance(same.get(section), dict):
            same[section].pop(key, None)
    return hashlib.sha256(json.dumps(same, sort_keys=True).encode()).hexdigest()[:16]


def same_experiment(ours: dict, theirs: dict) -> bool:
    """Whether `theirs` (a run folder's resolved opts, maybe from an older version) are these opts."""
    return opts_digest(_with_added_keys(json.loads(json.dumps(theirs)), ours, "")) == opts_digest(ours)


def _with_added_keys(theirs: Any, ours: Any, path: str) -> Any:
    if isinstance(theirs, dict) and isinstance(ours, dict):
        for key, value in ours.items():
            here = f"{path}.{key}" if path else key
            if key in theirs:
                theirs[key] = _with_added_keys(theirs[key], value, here)
            elif _DEFAULTS.get(here, object()) == value or (path.startswith("output.metrics") and key == "mode"):
                theirs[key] = value
    elif isinstance(theirs, list) and isinstance(ours, list) and len(theirs) == len(ours):
        return [_with_added_keys(t, o, path) for t, o in zip(theirs, ours)]
    return theirs


def changed_keys(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Dotted paths whose values differ between two opts trees, with `old -> new` for leaves."""
    changed = []
    for key in sorted(set(old) | set(new)):
        a, b, path = old.get(key), new.get(key), f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            changed += changed_keys(a, b, path + ".")
        elif a != b:
            changed.append(f"{path} ({a!r} -> {b!r})")
    return changed
