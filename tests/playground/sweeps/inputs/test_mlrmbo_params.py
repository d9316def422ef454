"""Supervisor's mlrMBO parameter-set files read as a search space (playground/sweeps/inputs/mlrmbo_params.py)."""
from __future__ import annotations

import pytest

from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.mlrmbo_params import param_set_space, read_param_set
from playground.sweeps.inputs.space import parse_space

# Every form Supervisor's workflows/*/data/*.R files use, and the ones ParamHelpers documents that we read.
EVERY_FORM = '''
# see the ParamHelpers manual
param.set <- makeParamSet(
  makeDiscreteParam("model", values=c("ae")),              # one value
  makeDiscreteParam("drop", c(0.0, 0.1, 0.15)),            # values by position
  makeDiscreteParam("dense", values = c("1500 500",
                                        "978 978 978")),   # CANDLE's list form, across lines
  makeDiscreteParam("residual", values=c(1, 0)),
  makeIntegerParam("latent_dim", lower=1, upper=4, trafo = function(x) 2L^x),
  makeIntegerParam("epochs", lower = 2, upper = 5),
  makeNumericParam("learning_rate", lower = 0.00001, upper = 0.1),
  makeNumericParam("weight_decay", lower = -6, upper = -2, trafo = function(x) 10^x),
  makeNumericParam("momentum", lower = 0, upper = 0.9, default = 0.5),
  makeLogicalParam("batch_normalization"),
  makeDiscreteParam("use_bias", values = c(TRUE, FALSE), tunable = TRUE)
  # makeDiscreteParam("conv", values = c("50 50 1"))
)
'''


def test_every_form_becomes_its_space_parameter():
    space = param_set_space(EVERY_FORM)
    assert space == {
        "model": {"type": "categorical", "vals": ["ae"]},
        "drop": {"type": "categorical", "vals": [0.0, 0.1, 0.15]},
        "dense": {"type": "categorical", "vals": ["1500 500", "978 978 978"]},
        "residual": {"type": "categorical", "vals": [1, 0]},
        "latent_dim": {"type": "categorical", "vals": [2, 4, 8, 16]},
        "epochs": {"type": "int", "minval": 2, "maxval": 5},
        "learning_rate": {"type": "double", "minval": 1e-05, "maxval": 0.1},
        "weight_decay": {"type": "log", "base": 10.0, "minval": -6, "maxval": -2},
        "momentum": {"type": "double", "minval": 0, "maxval": 0.9},
        "batch_normalization": {"type": "categorical", "vals": [True, False]},
        "use_bias": {"type": "categorical", "vals": [True, False]},
    }
    params = {p.key: p for p in parse_space(space, dotted=False)}
    assert params["weight_decay"].corner_values() == pytest.approx([1e-6, 1e-2])


def test_a_file_without_assignment_and_a_braced_trafo_are_read(tmp_path):
    path = tmp_path / "p.R"
    path.write_text("makeParamSet(makeNumericParam('lr', lower=-3, upper=-1, trafo=function(x) { 2^x }))\n")
    assert read_param_set(str(path)) == {"lr": {"type": "log", "base": 2.0, "minval": -3, "maxval": -1}}


@pytest.mark.parametrize("text, line, message", [
    ('param.set <- makeParamSet(\n  makeNumericVectorParam("x", len = 2, lower = 0, upper = 1)\n)',
     2, "makeNumericVectorParam is not supported"),
    ('makeParamSet(\n makeNumericParam("lr", lower = 0, upper = 1,\n   trafo = function(x) x^2))',
     3, "trafo function(x) x ^ 2: only B^x"),
    ('makeParamSet(\n makeIntegerParam("e", lower = 5, upper = 2))', 2, "lower 5 is above upper 2"),
    ('makeParamSet(\n makeIntegerParam("e", lower = 1.5, upper = 2))', 2, "lower and upper must be integers"),
    ('makeParamSet(\n makeDiscreteParam("dense", values = c("1500 x")))', 2,
     "'1500 x' is a CANDLE list (it starts with the number 1500), but 'x' is not an integer"),
    ('makeParamSet(\n makeDiscreteParam("a", values = c(1)),\n makeDiscreteParam("a", values = c(2)))', 3,
     "parameter 'a' is defined twice"),
    ('makeParamSet(\n makeIntegerParam("e", lower = 1, upper = 2, special.vals = c(0)))', 2,
     "special.vals not supported"),
    ('makeParamSet(\n makeNumericParam("lr", lower = 0))', 2, "upper missing"),
    ('makeParamSet(\n makeLogicalParam("b", tunable = FALSE))', 2, "tunable = FALSE is not supported"),
    ('x <- 3\nmakeParamSet()', 1, "expected makeParamSet(...)"),
    ('makeParamSet(\n makeIntegerParam("e", lower = 1, upper = 2),\n)', 3, "a comma before ')'"),
    ('makeParamSet(\n makeIntegerParam("e", lower = 1, upper = 2)', 2, "the file ends where ')' was expected"),
    ('ps <- makeParamSet(makeIntegerParam("e", lower = 1, upper = 2))\nps$pars', 2, "unexpected '$'"),
])
def test_anything_else_is_an_error_naming_the_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.R"
    path.write_text(text)
    with pytest.raises(SweepError) as caught:
        read_param_set(str(path))
    assert f"{path}, line {line}: " in str(caught.value) and message in str(caught.value)


def test_a_missing_file_is_named():
    with pytest.raises(SweepError, match="nowhere.R: cannot read the parameter-set file"):
        read_param_set("nowhere.R")
