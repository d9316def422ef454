"""The component slots a Determined trial fills itself, named in its run's opts (fit.py) so the options ask for
no input, forward-pass or optimizer component: the trainer methods in loop.py replace what these would do."""
from __future__ import annotations

from typing import Any


def get_input_dataset(opts: dict) -> Any:
    raise NotImplementedError("a Determined trial's data comes from its build_*_data_loader methods")


def gen_forward_pass_builder_fun(self: Any, model: Any, dataset: Any, is_train: bool) -> Any:
    raise NotImplementedError("a Determined trial's models come from context.wrap_model")


def gen_optimizer_fun(self: Any, model: Any, dataset: Any, is_train: bool) -> Any:
    raise NotImplementedError("a Determined trial's optimizers come from context.wrap_optimizer")
