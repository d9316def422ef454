"""Parameter importances of finished trials given as points (their settings and value), without opening their
study: an in-memory study made of them, then `param_importances` (study.py). For readers of the trial folders
alone (`playground ui`), which must not open a study that agents are writing.
"""
from __future__ import annotations

from typing import Any

from playground.sweeps.inputs.space import Param
from playground.sweeps.search.study import distributions, encoded, param_importances, quiet_optuna


def importances_of_points(space: list[Param], points: list[tuple[dict[str, Any], float]], mode: str,
                          grid: bool = False) -> dict[str, float]:
    """Importance of each sampled parameter of `space` over `points` ((settings, value) pairs); a point whose
    settings lack a parameter or fall outside its range (a trial warm-started with other settings) is left out.
    RuntimeError/ValueError as param_importances when it cannot tell."""
    import optuna
    quiet_optuna()
    known = distributions(space, grid=grid)
    study = optuna.create_study(direction="minimize" if mode == "min" else "maximize")
    for settings, value in points:
        params = {key: encoded(settings[key]) for key in known if key in settings}
        if len(params) != len(known):
            continue
        try:
            trial = optuna.trial.create_trial(params=params, distributions=known, value=value)
        except ValueError:
            continue
        study.add_trial(trial)
    return param_importances(study)
