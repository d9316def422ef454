"""Determined's PyTorchCallback: what a trial's `build_callbacks()` returns ({name: callback}), called by the
`determined` hook (loop_hook.py) at the loop's stages, and checkpointed by name (`state_dict` / `load_state_dict`).

Called as Determined's trial controller calls them: on_trial_startup, on_training_start, on_training_epoch_start
/ _end (at real epoch boundaries; the legacy on_training_epoch_start() without arguments too),
on_training_workload_end(avg_metrics, batch_metrics) at the end of each training window, on_validation_start,
on_validation_epoch_start, on_validation_end(metrics), on_checkpoint_write_end(checkpoint_dir) /
on_checkpoint_end / on_checkpoint_upload_end(uuid: the file's name) after each of Determined's checkpoints,
on_trial_shutdown. Not called: on_checkpoint_save_start and on_checkpoint_load_start (they receive Determined's
checkpoint dict; playground's checkpoint holds the callbacks' state_dict() instead) and on_validation_epoch_end
(it receives every batch's outputs).
"""
from __future__ import annotations

import inspect
import logging
from typing import Any


class PyTorchCallback:
    """`determined.pytorch.PyTorchCallback`: override what you need."""

    def on_trial_startup(self, first_batch_idx: int, checkpoint_uuid: str | None) -> None:
        pass

    def on_trial_shutdown(self) -> None:
        pass

    def on_training_start(self) -> None:
        pass

    def on_training_epoch_start(self, epoch_idx: int) -> None:
        pass

    def on_training_epoch_end(self, epoch_idx: int) -> None:
        pass

    def on_training_workload_end(self, avg_metrics: dict, batch_metrics: Any) -> None:
        pass

    def on_validation_start(self) -> None:
        pass

    def on_validation_epoch_start(self) -> None:
        pass

    def on_validation_epoch_end(self, outputs: list) -> None:
        pass

    def on_validation_end(self, metrics: dict) -> None:
        pass

    def on_checkpoint_load_start(self, checkpoint: dict) -> None:
        pass

    def on_checkpoint_save_start(self, checkpoint: dict) -> None:
        pass

    def on_checkpoint_end(self, checkpoint_dir: str) -> None:
        pass

    def on_checkpoint_write_end(self, checkpoint_dir: str) -> None:
        pass

    def on_checkpoint_upload_end(self, uuid: str) -> None:
        pass

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        pass


def trial_callbacks(trial: Any) -> dict[str, Any]:
    """The trial's callbacks by name ({} when it defines none)."""
    build = getattr(trial, "build_callbacks", None)
    callbacks = build() if callable(build) else {}
    if not isinstance(callbacks, dict):
        raise TypeError(f"{type(trial).__name__}.build_callbacks() must return a dict of name: PyTorchCallback, "
                        f"got {type(callbacks).__name__}")
    return callbacks


def overrides(callbacks: dict[str, Any], *stages: str) -> bool:
    """Whether any callback defines one of `stages` itself (not PyTorchCallback's no-op)."""
    for callback in callbacks.values():
        for stage in stages:
            method = getattr(type(callback), stage, None)
            if method is not None and method is not getattr(PyTorchCallback, stage, None):
                return True
    return False


def call_epoch_start(callback: Any, epoch: int) -> None:
    """on_training_epoch_start(epoch_idx), or the form without arguments of Determined before 0.17.8 (deprecated
    there, still called: its warning is logged once per call, as Determined logs it)."""
    method = getattr(callback, "on_training_epoch_start", None)
    if method is None:
        return
    if inspect.signature(method).parameters:
        method(epoch)
        return
    logging.getLogger("playground").warning("on_training_epoch_start() without parameters is deprecated since "
                                            "Determined 0.17.8: add the epoch_idx parameter")
    method()
