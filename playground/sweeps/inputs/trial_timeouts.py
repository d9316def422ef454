"""The spec's limits on one attempt of a trial: `trial_stall_timeout` (no progress for this long: stopped),
`trial_timeout` (running longer than this: stopped) and `trial_stop_grace` (after the SIGTERM of any stop, SIGKILL
this much later). Each is seconds, or a string with a unit (`90s`, `30m`, `2h`); `null` turns a timeout off.

Like max_restarts they say how trials are run, not what runs, so they may change when a sweep is resumed. Checked
by parse_spec; read by the agent (agents/progress_watch.py).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

DEFAULT_STALL_SECONDS = 1800.0     # 30 min: far above a record interval or a checkpoint of any usual run
DEFAULT_STOP_GRACE_SECONDS = 60.0  # time to write a checkpoint after SIGTERM before SIGKILL
KEYS = {"trial_stall_timeout": DEFAULT_STALL_SECONDS, "trial_timeout": None,
        "trial_stop_grace": DEFAULT_STOP_GRACE_SECONDS}
UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class TrialTimeouts:
    stall: float | None     # seconds without progress; None: never stopped for that
    total: float | None     # seconds of one attempt; None: no limit
    grace: float            # seconds from SIGTERM to SIGKILL


def duration(value: Any) -> float | None:
    """Seconds from a number or `90s` / `30m` / `2h`; None for None; ValueError otherwise."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(s|m|min|h)\s*", str(value))
        if match is None:
            raise ValueError(value)
        seconds = float(match.group(1)) * UNITS[match.group(2)]
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(value)
    return seconds


def check_timeouts(raw: dict, origin: str, problems: list[str]) -> None:
    for key in KEYS:
        if key not in raw:
            continue
        try:
            if duration(raw[key]) is None and key == "trial_stop_grace":
                raise ValueError(None)
        except ValueError:
            problems.append(f"{origin}: {key} must be a positive number of seconds or a duration such as 90s, "
                            f"30m, 2h{'' if key == 'trial_stop_grace' else ' (null: none)'}; got {raw[key]!r}")


def trial_timeouts(raw: dict) -> TrialTimeouts:
    """The limits of a spec that check_timeouts passed."""
    values = {key: duration(raw[key]) if key in raw else default for key, default in KEYS.items()}
    return TrialTimeouts(values["trial_stall_timeout"], values["trial_timeout"], values["trial_stop_grace"])


def in_words(seconds: float) -> str:
    """12 min, 45 s, 2.5 h."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
