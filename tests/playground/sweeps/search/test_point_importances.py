"""Importances from trial folders' points alone (playground ui reads no study): the parameter the value depends
on comes first, a point outside the space is left out, and too few points say why."""
from __future__ import annotations

import random

import pytest

from playground.sweeps.inputs.space import parse_space
from playground.sweeps.search.point_importances import importances_of_points

SPACE = parse_space({"model_param.base_learning_rate": {"type": "log", "base": 10, "minval": -3, "maxval": 0},
                     "model_param.weight_decay": {"type": "double", "minval": 0.0, "maxval": 0.001},
                     "epoch_iter.num_epochs": 4})


def test_the_parameter_the_value_depends_on_is_the_most_important():
    rng = random.Random(0)
    points = []
    for _ in range(40):
        settings = {"model_param.base_learning_rate": 10 ** rng.uniform(-3, 0),
                    "model_param.weight_decay": rng.uniform(0.0, 0.001), "epoch_iter.num_epochs": 4}
        points.append((settings, settings["model_param.weight_decay"] * 1000))
    points.append(({"model_param.base_learning_rate": 5.0, "model_param.weight_decay": 0.0}, 0.0))   # outside: left out
    scores = importances_of_points(SPACE, points, "min")
    assert list(scores) == ["model_param.weight_decay", "model_param.base_learning_rate"]
    assert scores["model_param.weight_decay"] > 0.8


def test_fewer_than_two_points_say_why():
    with pytest.raises(ValueError, match="1 completed trial"):
        importances_of_points(SPACE, [({"model_param.base_learning_rate": 0.1,
                                         "model_param.weight_decay": 0.0}, 1.0)], "min")
