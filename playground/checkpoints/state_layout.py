"""The trainer's state as a checkpoint file lays it out, and the one place where older layouts are translated.

Layout (rank 0's part, then every rank's under `ranks`, added by the Checkpointer with `format`, `version`,
`run_id` and `best`):

    models:      {name: network state_dict}     one entry, "model", unless the trainer has several networks
    optimizers:  {name: optimizer state_dict}   one entry, "optimizer", unless it has several (or none)
    model, optimizer                            the same objects as models["model"] and optimizers["optimizer"]
                                                (stored once): what pretrained_model, predict, eval and users'
                                                scripts read, as in the first layout
    epoch, epoch_iter, global_iter, epoch_iterations, world_size, lr, wall_time, opts
    metrics:     MetricsBook.state_dict()       the record points so far
    hooks:       {hook name: hook state}
    ranks:       [{"rng": ..., "data": {role: batch stream position}, "meters": {metric: meter state}}, ...]

The first layout (every checkpoint written before the trainer owned its state) had `model` and `optimizer`
only; before hooks existed the interval timer's state sat under `interval`. `upgrade` turns those into this one.
"""
from __future__ import annotations

from typing import Any

MODEL, OPTIMIZER = "model", "optimizer"    # the names of a run's single network and optimizer


def with_first_layout_names(state: dict[str, Any]) -> dict[str, Any]:
    """Add the first layout's `model` and `optimizer` as aliases of the entries of those names."""
    state[MODEL] = state["models"].get(MODEL, {})
    state[OPTIMIZER] = state["optimizers"].get(OPTIMIZER)
    return state


def upgrade(state: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's state in the current layout, whatever layout wrote it (a new dict; the tensors are shared)."""
    state = dict(state)
    if "models" not in state:       # the first layout: one network, at most one optimizer
        state["models"] = {MODEL: state[MODEL]} if state.get(MODEL) else {}
        state["optimizers"] = {OPTIMIZER: state[OPTIMIZER]} if state.get(OPTIMIZER) is not None else {}
    if state.get("hooks") is None:  # written before hooks existed: only the interval timer had state
        state["hooks"] = {"interval_timer": state.get("interval", {"iters": 0, "train_secs": 0.0})}
    return state
