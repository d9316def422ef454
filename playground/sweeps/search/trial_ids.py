"""A trial's id, the name of its folder: the upf line's id (user attr `trial_id`), else t0000, t0001, ... (the
study's trial number); never reused or renumbered."""
from __future__ import annotations

from typing import Any


def trial_id_of(trial: Any) -> str:
    return trial.user_attrs.get("trial_id") or f"t{trial.number:04d}"
