"""The objective a sweep optimises when its spec names none: the base's first test metric, in that metric's own
direction (the one results.json's "best" and ckpt_save_best use), not by whether its name says "loss"."""
from __future__ import annotations

import pytest

from playground.sweeps.inputs.opts_check import BaseOpts, check_objectives
from playground.sweeps.inputs.spec import SweepSpec


def spec_without_objective() -> SweepSpec:
    return SweepSpec(raw={}, name="s", base="base.json", defaults_file=None, script=None, objectives=[],
                     reduce="last", searcher={"name": "random"}, space=[])


@pytest.mark.parametrize("metric, expected", [
    ({"name": "test_mse", "mode": "min"}, "minimize"),       # lower is better, no "loss" in the name
    ({"name": "test_r2", "mode": "max"}, "maximize"),
    ({"name": "test_loss", "mode": "min"}, "minimize"),
])
def test_the_default_objective_goes_the_way_its_metric_improves(metric, expected):
    base = BaseOpts(opts={"output": {"metrics": [metric]}}, known=[], test_metrics=[metric["name"]], layers=[])
    [objective] = check_objectives(spec_without_objective(), base)
    assert (objective.metric, objective.direction) == (metric["name"], expected)
