"""The environment variables a sweep reads, each a number of seconds: parsed in one place, and all checked when a
sweep command starts, so a bad value is one message naming it (exit 2) before anything runs, not a traceback
minutes later at the first storage call or journal append.

`seconds(name)` is the value (its default when unset or empty); `check()` raises the SweepError of the first bad one.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from playground.sweeps.errors import SweepError


@dataclass(frozen=True)
class _Knob:
    default: float
    floor: float          # the smallest value that works (inclusive)
    whole: bool           # whole seconds only (what the library behind it takes)
    meaning: str


KNOBS = {
    "PLAYGROUND_STORAGE_RETRY_S": _Knob(
        120.0, 0.0, False, "how long an agent retries a study storage that does not answer, then stops"),
    "PLAYGROUND_STORAGE_CALL_S": _Knob(
        30.0, 0.1, False, "the deadline of each call to a `sweep serve` proxy"),
    "PLAYGROUND_STORAGE_CONNECT_S": _Knob(
        10.0, 0.1, False, "how long an agent waits for a `sweep serve` proxy to answer when it opens the study"),
    "PLAYGROUND_JOURNAL_LOCK_GRACE_S": _Knob(
        30.0, 3.0, True, "how long the journal lock may stay unchanged before a waiting writer breaks it"),
}


def seconds(name: str) -> float:
    """The value of `name` (one of KNOBS) in seconds; SweepError naming it and what it takes when malformed."""
    knob = KNOBS[name]
    given = os.environ.get(name, "").strip()
    if not given:
        return knob.default
    try:
        value = int(given) if knob.whole else float(given)
    except ValueError:
        value = None
    if value is None or not (math.isfinite(value) and value >= knob.floor):
        kind = "whole seconds" if knob.whole else "seconds"
        raise SweepError(f"{name}={given!r}: it sets {knob.meaning}, in {kind}, at least {knob.floor:g} "
                         f"(default {knob.default:g}); set such a value or unset it")
    return float(value)


def check() -> None:
    """Every knob parsed once: the first malformed one is a SweepError."""
    for name in KNOBS:
        seconds(name)
