"""The learning rate as a pure function of the fractional epoch (playground/trainer/lr_schedule.py)."""
from __future__ import annotations

import math

import pytest

from playground.trainer.lr_schedule import LRSchedule, schedule_from_opts
from tests.conftest import tiny_opts


def test_fixed_step_multistep_and_cosine_values():
    assert LRSchedule(0.1)(7.3) == 0.1
    step = LRSchedule(0.1, "step", step_epochs=30, gamma=0.1)
    assert [step(e) for e in (0, 29.99, 30, 61)] == pytest.approx([0.1, 0.1, 0.01, 0.001])
    multi = LRSchedule(1.0, "multistep", step_epochs=(3, 5), gamma=0.5)
    assert [multi(e) for e in (2.9, 3.0, 4.5, 5.0, 9)] == [1.0, 0.5, 0.5, 0.25, 0.25]
    cosine = LRSchedule(2.0, "cosine", total_epochs=10)
    assert cosine(0) == 2.0 and cosine(5) == pytest.approx(1.0) and cosine(10) == pytest.approx(0.0)


def test_linear_warmup_then_the_policy():
    schedule = LRSchedule(0.4, "cosine", warmup_epochs=2, total_epochs=10)
    assert schedule(0) == 0.0
    assert schedule(0.5) == pytest.approx(0.4 * 0.25)
    assert schedule(2) == pytest.approx(0.4)
    assert schedule(6) == pytest.approx(0.4 * 0.5 * (1 + math.cos(math.pi * 0.5)))


def test_from_opts_with_batch_scaling():
    opts = tiny_opts(model_param={"base_learning_rate": 0.1, "lr_scale_by_batch": True, "lr_policy": "step",
                                  "lr_step_epochs": 2, "lr_gamma": 0.5})
    opts["model_param"].setdefault("warmup_epochs", 0.0)
    opts["epoch_iter"]["num_epochs"] = 4
    schedule = schedule_from_opts(opts, global_batch=512)
    assert schedule(0) == pytest.approx(0.2) and schedule(2.5) == pytest.approx(0.1)
