"""Everything a run needs to continue exactly: captured from the trainer into a checkpoint and restored.

The shared part (model, optimizer, position, learning rate, record points, every hook's state under its name,
opts) comes from rank 0; the
per-rank part (python/numpy/torch/CUDA RNG states, data positions, meter sums since the last record point)
from every rank. Tensors are copied into buffers reused from one checkpoint to the next, so the training loop
is blocked only for that copy while a background thread writes the file.
"""
from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch

from playground.checkpoints.files import FORMAT, VERSION


def rng_state(device: torch.device) -> dict:
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {"python": random.getstate(), "torch": torch.get_rng_state(),
             "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                       "has_gauss": int(has_gauss), "cached_gaussian": float(cached)}}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def set_rng_state(state: dict, device: torch.device) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    n = state["numpy"]
    np.random.set_state((n["kind"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"], n["cached_gaussian"]))
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)


def rank_state(trainer: Any) -> dict:
    """This rank's part: RNG states, data positions, and its meters' sums since the last record point."""
    data = {}
    for role in ("train_model", "test_model"):
        model = getattr(trainer, role)
        if model is not None and model.batches is not None:
            data[role] = model.batches.state_dict()
    return {"rng": rng_state(trainer.device), "data": data, "meters": trainer.book.meter_sums()}


def shared_state(trainer: Any, epoch: int, epoch_iter: int) -> dict:
    """Rank 0's part, referencing live tensors (copy before training continues)."""
    model = trainer.train_model or trainer.test_model
    optimizer = trainer.train_model.optimizer if trainer.train_model is not None else None
    return {
        "format": FORMAT,
        "version": VERSION,
        "model": model.module.state_dict() if model is not None and model.module is not None else {},
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "epoch": epoch,
        "epoch_iter": epoch_iter,
        "global_iter": trainer.global_iter,
        "epoch_iterations": trainer.epoch_iterations,
        "world_size": trainer.world_size,
        "lr": trainer.lr,
        "metrics": trainer.book.state_dict(),
        "hooks": trainer.hooks.state_dict(),
        "wall_time": trainer.wall_time(),
        "opts": trainer.opts,
    }


class Snapshot:
    """Copies a nested state into CPU buffers kept between calls (pinned when the source is on a GPU)."""

    def __init__(self) -> None:
        self._buffers: dict[str, torch.Tensor] = {}

    def copy(self, tree: Any) -> Any:
        copied = self._copy(tree, "")
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return copied

    def _copy(self, node: Any, path: str) -> Any:
        if isinstance(node, torch.Tensor):
            return self._tensor(node, path)
        if isinstance(node, dict):
            return type(node)((k, self._copy(v, f"{path}/{k}")) for k, v in node.items())
        if isinstance(node, (list, tuple)):
            return type(node)(self._copy(v, f"{path}/{i}") for i, v in enumerate(node))
        return node

    def _tensor(self, tensor: torch.Tensor, path: str) -> torch.Tensor:
        tensor = tensor.detach()
        buffer = self._buffers.get(path)
        if buffer is None or buffer.shape != tensor.shape or buffer.dtype != tensor.dtype:
            buffer = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=tensor.is_cuda)
            self._buffers[path] = buffer
        buffer.copy_(tensor, non_blocking=tensor.is_cuda)
        return buffer


def restore(trainer: Any, state: dict, log: Any) -> None:
    """Load `state` into the trainer (every rank calls this with the same file's contents)."""
    model = trainer.train_model or trainer.test_model
    if model is not None and model.module is not None:
        try:
            model.module.load_state_dict(state["model"])
        except RuntimeError as err:
            raise RuntimeError(f"the checkpoint does not fit this network: {err}. Set output.ckpt_restart_mode "
                               "to off, or use another checkpoint_folder, to start afresh.") from err
    optimizer = trainer.train_model.optimizer if trainer.train_model is not None else None
    if optimizer is not None and state["optimizer"] is not None:
        optimizer.load_state_dict(state["optimizer"])
    if state["epoch_iterations"] != trainer.epoch_iterations:
        log.warning("the checkpoint was taken with %d iterations per epoch, this run has %d: the data order "
                    "continues by global batch, but epochs are counted differently", state["epoch_iterations"],
                    trainer.epoch_iterations)
    trainer.epoch, trainer.start_epoch_iter = state["epoch"], state["epoch_iter"]
    trainer.global_iter, trainer.lr = state["global_iter"], state["lr"]
    trainer.book.load_state_dict(state["metrics"], state["wall_time"])
    hooks = state.get("hooks")
    if hooks is None:   # written before hooks existed: only the interval timer had state, under "interval"
        hooks = {"interval_timer": state.get("interval", {"iters": 0, "train_secs": 0.0})}
    trainer.hooks.load_state_dict(hooks, log)
    ranks = state["ranks"]
    if state["world_size"] != trainer.world_size:
        log.warning("the checkpoint was written by %d rank(s), this run has %d: the data continues from the same "
                    "global batch, but random states and meter sums belong to ranks, so the continuation is not "
                    "bitwise exact", state["world_size"], trainer.world_size)
    # Data positions count global batches, the same on every rank: a rank the checkpoint lacks takes rank 0's.
    mine = ranks[trainer.rank] if trainer.rank < len(ranks) else {"data": ranks[0]["data"]}
    if "rng" in mine:
        set_rng_state(mine["rng"], trainer.device)
    if "meters" in mine:
        trainer.book.load_meter_sums(mine["meters"])
    for role, data in mine["data"].items():
        model = getattr(trainer, role, None)
        if model is not None and model.batches is not None:
            model.batches.load_state_dict(data)
