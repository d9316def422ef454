"""CANDLE's checkpoint/restart for a hand-written PyTorch loop, on the project's checkpoint files.

    ckpt = CandleCheckpoint(params, model, optimizer)
    for epoch in range(ckpt.restart(), params["epochs"]):    # 0, or the epochs a checkpoint holds
        ...train one epoch...
        ckpt.save(epoch, {"loss": ..., "val_loss": ...})      # 0-based epoch, as Keras' on_epoch_end
    ckpt.report_final()

CANDLE's keys, read from params with its defaults: `ckpt_restart_mode` (auto: resume from `last` when there is
one; required: fail without one; off), `ckpt_save_interval` (1), `ckpt_skip_epochs` (0), `ckpt_save_best`
(True) by `ckpt_save_best_metric` ("val_loss", min for names with loss, error, mse or mae), `ckpt_keep_limit`
(1000000) with `ckpt_keep_mode` "linear" (or "exponential", which CANDLE names but never built), `ckpt_checksum` (False),
`ckpt_metadata` (None), `ckpt_directory` ("./save"; a run of `playground candle` defaults it to
`<run-dir>/checkpoints`). The folder holds `model_checkpoint_epochN.pt` with its info JSON, `last` and `best`
pointers and `ckpt.log` (docs/checkpoints.md); the last epoch is always saved. Each checkpoint holds model,
optimizer, the epoch records and every RNG state, so a resumed loop that draws its randomness (shuffling,
dropout) from the global generators continues bitwise as if never stopped.

Under `playground candle`, save() also appends the epoch's record to the run's metrics.jsonl, and after a
SIGTERM it writes a checkpoint and raises Preempted (the command exits 75; re-running resumes). There, too,
every write is fenced (playground/restarts/fence.py): once a later attempt has claimed the run folder, the
helper raises Fenced before writing anything, a checkpoint in flight included (checked before its rename).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import uuid
from typing import Any

import torch

from playground.checkpoints.choice import choose_checkpoint, own_name
from playground.checkpoints.files import FORMAT, VERSION, CheckpointError, append_log, save_state, write_completed_info
from playground.checkpoints.policy import SavePolicy
from playground.checkpoints.published import PublishedCheckpoints
from playground.candle.params import COMMON
from playground.candle.candle_run import CandleRun, active_run
from playground.checkpoints.preemption import Preempted
from playground.checkpoints.random_state import rng_state, set_rng_state
from playground.options.value_types import OptTypeError
from playground.restarts.fence import Fence

DEFAULTS = {"ckpt_restart_mode": "auto", "ckpt_save_best": True, "ckpt_save_best_metric": "val_loss",
            "ckpt_skip_epochs": 0, "ckpt_save_interval": 1, "ckpt_checksum": False, "ckpt_keep_mode": "linear",
            "ckpt_keep_limit": 1000000, "ckpt_directory": "./save", "ckpt_metadata": None}


def ckpt_setting(params: dict, key: str) -> Any:
    """The checkpoint parameter `key` of `params`, CANDLE's default when unset; a value of the wrong type or
    outside its choices raises ValueError naming the key (a script run alone has not had its params checked)."""
    value = params.get(key)
    if value is None:
        return DEFAULTS[key]
    try:
        return COMMON[key].check(value) if key in COMMON else value
    except OptTypeError as err:
        raise ValueError(f"CANDLE checkpoint parameter {key} = {value!r}: expected {err.expected}") from None


class CandleCheckpoint:
    """Restart and per-epoch saving for one training loop; `model` and `optimizer` are saved and restored."""

    def __init__(self, params: dict, model: torch.nn.Module, optimizer: torch.optim.Optimizer | None = None,
                 samples_per_epoch: int | None = None, device: torch.device | str = "cpu") -> None:
        for key in DEFAULTS:           # every checkpoint parameter checked before anything is read or written
            ckpt_setting(params, key)
        self.params, self.model, self.optimizer = params, model, optimizer
        self.samples_per_epoch, self.device = samples_per_epoch, torch.device(device)
        self.log = logging.getLogger("playground")
        self.folder = os.path.abspath(ckpt_setting(params, "ckpt_directory"))
        self.run_id = uuid.uuid4().hex[:12]
        self.policy = SavePolicy({
            "ckpt_save_interval": ckpt_setting(params, "ckpt_save_interval"), "ckpt_every_n_iters": 0,
            "ckpt_skip_epochs": ckpt_setting(params, "ckpt_skip_epochs"),
            "ckpt_save_best": ckpt_setting(params, "ckpt_save_best"),
            "ckpt_save_best_metric": ckpt_setting(params, "ckpt_save_best_metric"), "ckpt_save_best_mode": "auto",
            "metrics": []}, num_epochs=int(params.get("epochs") or 0))
        self.run: CandleRun = active_run() or CandleRun(self.folder, "standalone")
        if active_run() is None:       # run alone: no run folder to write metrics to, no stop handler installed
            self.run.outputs.enabled = False
            self.run.fence = Fence(self.folder, None)   # and no attempts to fence
        else:                          # SIGTERM now means: finish the epoch, checkpoint, exit 75
            self.run.handle_stop_signals()
        self._warned_metric = False
        self.fence = self.run.fence
        self.published = PublishedCheckpoints(self.folder, self.fence, ckpt_setting(params, "ckpt_keep_limit"),
                                              ckpt_setting(params, "ckpt_keep_mode"))
        self.fence.check("ckpt.log")
        append_log(self.folder, f"ready (run {self.run_id}): restart mode {ckpt_setting(params, 'ckpt_restart_mode')}")

    # ------------------------------------------------------------------ restart
    def restart(self) -> int:
        """Load the checkpoint `ckpt_restart_mode` asks for; return the 0-based epoch to continue with."""
        mode = ckpt_setting(self.params, "ckpt_restart_mode")
        if mode == "off":
            return 0
        path, state = choose_checkpoint(self.folder, ckpt_setting(self.params, "ckpt_checksum"), self.log)
        if path is None:
            if mode == "required":
                raise CheckpointError(f"ckpt_restart_mode is 'required' but {self.folder} holds no usable checkpoint "
                                      "(no 'last' pointer, or every candidate failed its check; see ckpt.log there)")
            return 0
        self.fence.check("metrics.jsonl (the resumed records)")
        try:
            _module(self.model).load_state_dict(state["model"])
        except RuntimeError as err:
            raise CheckpointError(f"checkpoint {path} does not fit this network: {err}. Set ckpt_restart_mode=off "
                                  "or another ckpt_directory to start afresh.") from err
        if self.optimizer is not None and state.get("optimizer") is not None:
            self.optimizer.load_state_dict(state["optimizer"])
        set_rng_state(state["rng"], self.device)
        self.run_id = state["run_id"]
        self.policy.best_value = state["best"]["value"]
        self.published.adopt(path, state)
        self.run.restore_records(state["records"], state["wall_time"])
        self.run.model_path = path
        append_log(self.folder, f"resumed from {os.path.basename(path)} (run {self.run_id}, epoch {state['epoch']})")
        self.log.info("resumed from %s after epoch %d", path, state["epoch"])
        return int(state["epoch"])

    # ------------------------------------------------------------------ save
    def save(self, epoch: int, logs: dict | None = None, samples: int | None = None) -> str | None:
        """After 0-based `epoch` with metric values `logs`: record it, checkpoint as the policy says; return the
        path written, if any. Raises Preempted after the checkpoint when a stop signal arrived."""
        logs = {k: _value(v) for k, v in (logs or {}).items()}
        if samples is None and self.samples_per_epoch:
            samples = (epoch + 1) * self.samples_per_epoch
        self.run.epoch_record(epoch, logs, samples)
        self._check_metric(logs)
        due, improved = self.policy.epoch_due(epoch + 1, logs)
        stop = self.run.preemption.signal_name is not None
        path = self._write(epoch + 1, logs, improved, "epoch" if due else "preemption") if due or stop else None
        if stop:
            raise Preempted(self.run.preemption.signal_name)
        return path

    on_epoch_end = save   # CANDLE's Keras callback name

    @property
    def last_path(self) -> str | None:
        """The checkpoint `last` names (None before the first save or resume)."""
        return self.published.last

    @property
    def best_path(self) -> str | None:
        """The checkpoint `best` names, while it exists."""
        return self.published.best

    @property
    def resumed_from(self) -> str | None:
        """The checkpoint restart() loaded."""
        return self.published.resumed_from

    @property
    def stop_requested(self) -> bool:
        """A stop signal arrived: the next save() writes a checkpoint and stops the run (exit 75)."""
        return self.run.preemption.signal_name is not None

    def _write(self, epochs_done: int, logs: dict, best: bool, kind: str) -> str:
        path = own_name(os.path.join(self.folder, f"model_checkpoint_epoch{epochs_done}.pt"), self.run_id, self.log)
        state = {"format": FORMAT, "version": VERSION, "model": _module(self.model).state_dict(),
                 "optimizer": self.optimizer.state_dict() if self.optimizer is not None else None,
                 "epoch": epochs_done, "epoch_iter": 0, "rng": rng_state(self.device), "run_id": self.run_id,
                 "best": self.published.best_entry(self.policy.best_value, path if best else self.published.best),
                 "records": self.run.records, "wall_time": self.run.wall_time()}
        info = {"format": FORMAT, "version": VERSION, "file": os.path.basename(path), "kind": kind,
                "epoch": epochs_done, "epoch_iter": 0, "run_id": self.run_id, "params_hash": _params_hash(self.params),
                "metadata": ckpt_setting(self.params, "ckpt_metadata"), "metrics": logs,
                "best_metric": self.policy.best_metric, "best_mode": self.policy.best_mode,
                "best_value": self.policy.best_value, "is_best": best}
        started = time.perf_counter()
        self.fence.check(f"checkpoint {path}")
        save_state(path, state, before_rename=lambda tmp, sha: self._write_info(path, tmp, sha, info),
                   checksum=ckpt_setting(self.params, "ckpt_checksum"))
        if self.run.test_mode:
            _check_round_trip(path, state)
        self.published.publish(path, best, self.run_id, f"{kind} checkpoint: epoch {epochs_done}", info["size"],
                               started)
        self.run.model_path = path
        return path

    def _write_info(self, path: str, written: str, sha256: str | None, info: dict) -> None:
        """The info file, then (still before the state file's rename) the fence once more."""
        self.fence.check(f"the info file of {os.path.basename(path)}")
        write_completed_info(path, written, sha256, info)
        self.fence.check(f"checkpoint {path} (it was written but does not take its name)")

    def _check_metric(self, logs: dict) -> None:
        metric = self.policy.best_metric
        if self.policy.save_best and metric and metric not in logs and not self._warned_metric:
            self._warned_metric = True
            self.log.warning("ckpt_save_best_metric %r is not among the logs given to save() (%s): no 'best' "
                             "checkpoint will be chosen", metric, ", ".join(logs) or "none")

    def report_final(self) -> None:
        """Note the outcome in ckpt.log."""
        self.fence.check("ckpt.log")
        append_log(self.folder, f"final: last {self.last_path and os.path.basename(self.last_path)}, best "
                                f"{self.best_path and os.path.basename(self.best_path)} (run {self.run_id})")


def _module(model: torch.nn.Module) -> torch.nn.Module:
    """The wrapped network of DistributedDataParallel/DataParallel, so checkpoints load either way."""
    wrapped = (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)
    return model.module if isinstance(model, wrapped) else model


def _value(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _params_hash(params: dict) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]


__all__ = ["CandleCheckpoint", "CheckpointError", "Preempted"]


def _check_round_trip(path: str, state: dict) -> None:
    """`--test`: the file just written holds exactly the model, optimizer and RNG state in memory."""
    from playground.checkpoints.files import load_state
    from playground.launch.one_batch_check import compare

    saved = load_state(path)
    for key in ("model", "optimizer", "rng"):
        compare(saved[key], state[key], key, path)
