"""Determined's PyTorchCallback: what a trial's `build_callbacks()` returns ({name: callback}), called by the
`determined` hook (loop_hook.py) at the loop's stages, and checkpointed by name (`state_dict` / `load_state_dict`).

Called: on_trial_startup, on_training_start, on_training_epoch_start / _end (at real epoch boundaries),
on_validation_start, on_validation_epoch_start, on_validation_end(metrics), on_trial_shutdown. The checkpoint
callbacks (on_checkpoint_save_start, on_checkpoint_load_start, on_checkpoint_write_end, on_checkpoint_upload_end)
and on_training_workload_end / on_validation_epoch_end are not called: playground's checkpoints hold the
callbacks' state_dict() instead.
"""
from __future__ import annotations

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
