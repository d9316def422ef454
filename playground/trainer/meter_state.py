"""A meter's state: named tensors of any shape, reduced across ranks at each record point and checkpointed.

A meter exposes its state through `state() -> dict[str, Tensor]` and `load_state(dict)`; the tensors are
added over ranks before `Compute()` unless the meter's `state_reduce` says otherwise ("sum", "max", "min" or
"none" for all of its tensors, or a dict naming one per tensor). Meters written for the older interface
(`sums()` / `load_sums()`, one float64 vector) keep working: their vector is the state {"sums": vector}. A meter
with neither is computed on each rank alone and not checkpointed.
"""
from __future__ import annotations

from typing import Any, Callable

import torch

REDUCE_OPS = ("sum", "max", "min", "none")
Reduce = Callable[[torch.Tensor, str], torch.Tensor]


def has_state(meter: Any) -> bool:
    return callable(getattr(meter, "state", None)) or callable(getattr(meter, "sums", None))


def get_state(meter: Any) -> dict[str, torch.Tensor] | None:
    """A copy of the meter's state on the CPU, or None for a meter that keeps none the framework can see."""
    if callable(getattr(meter, "state", None)):
        state = meter.state()
    elif callable(getattr(meter, "sums", None)):
        state = {"sums": meter.sums()}
    else:
        return None
    if not isinstance(state, dict):
        raise TypeError(f"{type(meter).__name__}.state() must return a dict of tensors, got {type(state).__name__}")
    return {key: torch.as_tensor(value).detach().cpu().clone() for key, value in state.items()}


def set_state(meter: Any, state: Any) -> None:
    """Load `state` (as get_state gave it; a bare tensor from an older checkpoint is {"sums": tensor})."""
    if isinstance(state, torch.Tensor):
        state = {"sums": state}
    if callable(getattr(meter, "load_state", None)):
        meter.load_state(state)
    elif callable(getattr(meter, "load_sums", None)) and "sums" in state:
        meter.load_sums(state["sums"])


def reduce_op(meter: Any, key: str) -> str:
    how = getattr(meter, "state_reduce", "sum")
    op = how.get(key, "sum") if isinstance(how, dict) else how
    if op not in REDUCE_OPS:
        raise ValueError(f"{type(meter).__name__}.state_reduce: {op!r} for {key!r}; use one of {', '.join(REDUCE_OPS)}")
    return op


def reduce_states(meters: list[Any], all_reduce: Reduce) -> None:
    """Reduce the state of every meter over ranks: one collective per reduction kind, whatever the shapes."""
    states = [(meter, get_state(meter)) for meter in meters]
    states = [(meter, state) for meter, state in states if state is not None]
    for op in ("sum", "max", "min"):
        parts = [(state, key) for meter, state in states for key in state if reduce_op(meter, key) == op]
        if not parts:
            continue
        flat = torch.cat([state[key].reshape(-1).to(torch.float64) for state, key in parts])
        total = all_reduce(flat, op)
        offset = 0
        for state, key in parts:
            value = state[key]
            state[key] = total[offset:offset + value.numel()].reshape(value.shape).to(value.dtype)
            offset += value.numel()
    for meter, state in states:
        set_state(meter, state)


class MeterStates:
    """The meters of a run, as one unit of state: this rank's meter states since the last record point, by
    metric name (each rank has its own until the point reduces them). `metrics` is the MetricsBook's table."""

    def __init__(self, metrics: dict[str, dict]) -> None:
        self._metrics = metrics

    def state_dict(self) -> dict[str, dict[str, torch.Tensor]]:
        states = {name: get_state(entry["calculator"]) for name, entry in self._metrics.items()}
        return {name: state for name, state in states.items() if state is not None}

    def load_state_dict(self, states: dict[str, Any]) -> None:
        for name, state in states.items():
            if name in self._metrics:
                set_state(self._metrics[name]["calculator"], state)
