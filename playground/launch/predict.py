"""Predictions of a trained network for a dataset, on every rank of a run, gathered in dataset order.

`playground predict` (commands/predict.py) launches the run's ranks with the job jobs.Predict naming the
checkpoint and the output file; each rank builds the run's test data and network (components or trial class), loads the
checkpoint's weights, and passes its shard of the test set (rank r holds samples r, r+W, ...: no padding) through
the network in eval mode. Rank 0 interleaves the shards back into dataset order and writes the outputs: `.npy`
(numpy) or `.pt` (`{"outputs": tensor}`, loadable with torch.load(..., weights_only=True)).
"""
from __future__ import annotations

import os
from typing import Any

import torch

from playground.distribution import collectives as dist_utils
from playground.checkpoints.files import load_state

def predict_rank(trainer: Any, checkpoint: str, output: str) -> None:
    trainer.get_model_input_fun()
    trainer.init_model()
    trainer.train_model, trainer._step = None, None
    trainer.prep_data_parallel_models()
    model = trainer.test_model
    if model is None or model.batches is None:
        raise ValueError("the run's input gives no test data to predict for (get_input_dataset's test part is None)")
    state = load_state(checkpoint)
    model.module.load_state_dict(state["model"] if "model" in state else state)
    model.module.eval()
    parts = []
    try:
        with torch.inference_mode():
            for _ in range(model.batches.begin_full_pass()):
                batch = model.batches.next()
                inputs = batch[0] if isinstance(batch, (tuple, list)) and len(batch) == 2 else batch
                out = model.module(inputs)
                if not isinstance(out, torch.Tensor):
                    raise TypeError(f"predict writes tensors; the network returned a {type(out).__name__}")
                parts.append(out.float().cpu())
    finally:
        model.batches.close()
    mine = torch.cat(parts) if parts else torch.empty(0)
    gathered = dist_utils.gather_to_writer(mine) if trainer.world_size > 1 else [mine]
    if trainer.ctx.is_writer:
        _write(output, _interleave(gathered))


def _interleave(parts: list[torch.Tensor]) -> torch.Tensor:
    """Rank r's k-th output is sample r + k*W: put each back at its place."""
    world = len(parts)
    total = sum(len(p) for p in parts)
    out = torch.empty((total, *parts[0].shape[1:]), dtype=parts[0].dtype)
    for rank, part in enumerate(parts):
        out[rank::world] = part
    return out


def _write(path: str, outputs: torch.Tensor) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    temporary = path + ".partial"
    if path.endswith(".npy"):
        import numpy as np
        with open(temporary, "wb") as handle:
            np.save(handle, outputs.numpy())
    else:
        torch.save({"outputs": outputs}, temporary)
    os.replace(temporary, path)
