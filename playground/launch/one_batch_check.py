"""Test mode (`--test`): a run shrunk to one training batch and one validation batch per rank, then a checkpoint
round trip and a check that every metric was produced. It answers in seconds whether a run would work.

`shrink_layer(opts, world_size)` is the opts layer that shrinks the run (one epoch of one global batch, a full test
pass of one batch per rank, no resume, the checkpoint in the run folder). Its job (jobs.OneBatchCheck) makes
each rank, after training, call `check_run`: the checkpoint written is read back and compared with the
trainer that wrote it, then loaded into a fresh trainer (the path of a resume) whose state must equal the file,
tensor for tensor and value for value (so a hook whose load_state_dict forgets part of its state is caught).
"""
from __future__ import annotations

import os
from typing import Any

import torch

from playground.distribution import collectives as dist_utils
from playground.checkpoints.files import load_state
from playground.processes.exit_codes import UserError

# Parts of the shared state a resume does not restore by design (they describe the session, not the run).
_SESSION_KEYS = ("wall_time", "opts", "format", "version", "run_id", "best", "ranks", "saved_at", "world_size")


class CheckError(UserError, RuntimeError):
    """The test run finished but its checkpoint or metrics are wrong; the message names what and where."""


def shrink_layer(opts: dict, world_size: int) -> dict:
    """The opts that shrink `opts` (already resolved) to a test run on `world_size` ranks."""
    e = opts["epoch_iter"]
    global_batch = e["batch_per_device"] * world_size * opts["model_param"]["grad_accum_steps"]
    test_batch = (e["test_batch_per_device"] or e["batch_per_device"]) * world_size
    return {"epoch_iter": {"num_epochs": 1, "num_train_sample_per_epoch": global_batch,
                           "num_test_sample": test_batch, "num_train_iteration_per_test": 1 << 30},
            "output": {"ckpt_restart_mode": "off", "ckpt_save_interval": 1, "ckpt_skip_epochs": 0,
                       "checkpoint_folder": "", "profile_num_iters": 0}}


def check_run(trainer: Any) -> None:
    """After a test run, on every rank: metrics produced, checkpoint equal to the trainer and to a fresh resume."""
    trainer.checkpointer.finish()
    dist_utils.barrier()
    path = trainer.model_path
    if not path or not os.path.isfile(path):
        raise CheckError("the test run wrote no checkpoint (output.ckpt_save_interval, gen_checkpoint_path or an "
                            "override of checkpoint() may prevent it)")
    _check_metrics(trainer)
    saved = load_state(path)
    compare(saved["model"], _live(trainer.train_model or trainer.test_model), "model", path)
    compare(saved["hooks"], trainer.hooks.state_dict(), "hooks", path)
    fresh = _resumed_trainer(trainer)
    try:
        shared = fresh.state_dict(saved["epoch"], saved["epoch_iter"])
        for key, value in saved.items():
            if key not in _SESSION_KEYS and key in shared:
                if key == "metrics":   # the records; prior_wall_time is the session's clock
                    value, shared[key] = value["records"], shared[key]["records"]
                compare(value, shared[key], key, path, after_resume=True)
        if trainer.rank < len(saved["ranks"]):
            mine = fresh.rank_state_dict()
            for key in ("rng", "data", "meters"):
                if key in saved["ranks"][trainer.rank]:
                    compare(saved["ranks"][trainer.rank][key], mine[key], f"ranks[{trainer.rank}].{key}", path,
                             after_resume=True)
    finally:
        fresh._close_batches()
        fresh.hooks.call("close")
    dist_utils.barrier()


def _live(model: Any) -> dict:
    return model.module.state_dict() if model is not None and model.module is not None else {}


def _check_metrics(trainer: Any) -> None:
    produced = {name for record in trainer.book.records for name, value in record.items() if value is not None}
    for index, metric in enumerate(trainer.opts["output"]["metrics"]):
        if metric["name"] not in produced:
            side = "training step" if metric["is_train"] else "validation batch"
            raise CheckError(f"opts.output.metrics[{index}] ({metric['name']!r}, {metric['meter_py']}): no value "
                                f"after a {side}; its meter was given nothing to measure (is there "
                                f"{'training' if metric['is_train'] else 'test'} data, and does the step give what "
                                "the meter reads?)")


def _resumed_trainer(trainer: Any) -> Any:
    """A second trainer of the same class and opts that resumes from the checkpoint just written."""
    from playground.trainer.seeding import seed_everything
    from playground.trainer.hook_list import build_hooks
    from playground.trainer.train_step import TrainStep

    opts = dict(trainer.opts, output=dict(trainer.opts["output"], ckpt_restart_mode="required"))
    seed_everything(opts["model_param"]["seed"])
    fresh = type(trainer)(opts, trainer.ctx)
    fresh.get_model_input_fun()
    fresh.init_model()
    fresh.init_metrics()
    fresh.prep_data_parallel_models()
    fresh.hooks = build_hooks(fresh)
    fresh._step = TrainStep(fresh)
    fresh.loadCheckpoint()
    return fresh


def compare(saved: Any, live: Any, where: str, path: str, after_resume: bool = False) -> None:
    """Raise CheckError at the first place where `saved` (the file) and `live` differ."""
    difference = _first_difference(saved, live, where)
    if difference is not None:
        how = ("after loading it into a fresh trainer (a resume)" if after_resume
               else "compared with the trainer that wrote it")
        raise CheckError(f"the checkpoint {os.path.basename(path)} does not round-trip: {difference} {how}. A "
                            "state_dict() that load_state_dict() does not restore makes resumed runs diverge.")


def _first_difference(a: Any, b: Any, where: str) -> str | None:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return f"{where} is {type(a).__name__} in the file but {type(b).__name__} in memory"
        if a.shape != b.shape or a.dtype != b.dtype or not torch.equal(a.cpu(), b.detach().cpu()):
            return f"tensor {where} differs"
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        for key in dict.fromkeys([*a, *b]):
            if key not in a or key not in b:
                return f"{where}.{key} is {'missing from the file' if key not in a else 'not restored'}"
            found = _first_difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{where} has {len(a)} items in the file but {len(b)} in memory"
        for index, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, f"{where}[{index}]")
            if found:
                return found
        return None
    if a != b and not (isinstance(a, float) and isinstance(b, float) and a != a and b != b):
        return f"{where} is {a!r} in the file but {b!r} in memory"
    return None
