"""The search space's checks: non-finite bounds and choices are refused when the spec is read (exit 2, the key
path named), before anything runs; the count of distinct points of a space that has finitely many."""
from __future__ import annotations

import math

import pytest

from playground.cli import main
from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.space import parse_space, space_size


@pytest.mark.parametrize("param, where", [
    ({"type": "double", "minval": 0.0, "maxval": math.inf}, "space.model_param.weight_decay.maxval"),
    ({"type": "double", "minval": math.nan, "maxval": 0.1}, "space.model_param.weight_decay.minval"),
    ({"type": "log", "minval": -math.inf, "maxval": 0}, "space.model_param.weight_decay.minval"),
    ({"type": "log", "minval": -3, "maxval": 400}, "space.model_param.weight_decay.maxval"),
    ({"type": "log", "minval": -3, "maxval": 0, "base": math.inf}, "space.model_param.weight_decay.base"),
    ({"type": "categorical", "vals": [0.0, math.nan]}, "space.model_param.weight_decay.vals[1]"),
    ({"type": "categorical", "vals": [[1, -math.inf]]}, "space.model_param.weight_decay.vals[0]"),
])
def test_a_non_finite_bound_or_choice_exits_2_naming_its_key_before_anything_runs(write_spec, tmp_path, capsys,
                                                                                 param, where):
    spec = write_spec({"name": "random", "max_trials": 2},
                      {"model_param.weight_decay": param, "epoch_iter.num_epochs": 1})
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep)]) == 2
    err = capsys.readouterr().err
    assert where in err and "finite" in err and "Traceback" not in err, err
    assert not sweep.exists()


def test_yaml_infinities_are_refused_too(tmp_path):
    import yaml
    raw = yaml.safe_load("model_param.weight_decay: {type: double, minval: 0, maxval: .inf}")
    with pytest.raises(SweepError, match=r"space.model_param.weight_decay.maxval: inf is not a finite number"):
        parse_space(raw)


def test_space_size_counts_distinct_points_and_is_none_for_a_continuous_range():
    finite = parse_space({"a.b": {"type": "categorical", "vals": [1, 2, 2]}, "a.c": {"type": "int", "minval": 3,
                                                                                   "maxval": 5}, "a.d": 7})
    assert space_size(finite) == 6
    assert space_size(parse_space({"a.b": {"type": "double", "minval": 0, "maxval": 1}})) is None


def test_a_repeated_choice_or_a_range_of_one_value_is_one_grid_point():
    space = parse_space({"a.b": {"type": "categorical", "vals": [0.1, 0.01, 0.1]},
                         "a.c": {"type": "double", "minval": 0.5, "maxval": 0.5, "count": 3}})
    assert [p.grid_values() for p in space] == [[0.1, 0.01], [0.5]]
    assert space_size(space) is None and [p.finite_values() for p in space][0] == [0.1, 0.01]
