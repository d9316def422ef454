"""The one did-you-mean (playground/options/did_you_mean.py): which names a mistyped name is offered."""
from __future__ import annotations

from playground.options.did_you_mean import closest, did_you_mean


def test_a_name_equal_but_for_case_is_offered_alone_before_any_close_one():
    assert closest("ResNet", ["resnet", "resnext", "ResNets"], n=3) == ["resnet"]


def test_close_names_are_offered_best_first_and_the_name_itself_never():
    assert closest("num_epoch", ["num_epochs", "num_epoch", "seed"]) == ["num_epochs"]
    assert closest("lr", ["batch_size"]) == []


def test_a_dotted_name_falls_back_to_its_last_part():
    assert closest("opts.solver.base_lr", ["model_param.base_lr", "input.seed"]) == ["model_param.base_lr"]


def test_the_hint_lists_what_is_close_or_says_nothing():
    assert did_you_mean("loss", ["los", "lost", "acc"], n=3, cutoff=0.5) == "did you mean los, lost?"
    assert did_you_mean("xyz", ["loss"]) == ""
