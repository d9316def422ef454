"""A short hash of resolved opts that is the same on every host and for every attempt of one experiment."""
from __future__ import annotations

import hashlib
import json

# Keys that differ between the hosts or attempts of one experiment: the host's index, and what the input
# component reports about its data when the run starts.
VARYING = (("distributed", "shard_id"), ("input", "datasets"))


def opts_digest(opts: dict) -> str:
    same = json.loads(json.dumps(opts))
    for section, key in VARYING:
        if isinstance(same.get(section), dict):
            same[section].pop(key, None)
    return hashlib.sha256(json.dumps(same, sort_keys=True).encode()).hexdigest()[:16]
