"""candle_lib's `CandleCkptPyTorch` and `restart`, on playground's checkpoint helper (playground.candle).

    ckpt = candle.CandleCkptPyTorch(params)
    ckpt.set_model({"model": model, "optimizer": optimizer})
    J = ckpt.restart(model)                   # None, or {"epoch": epochs done, ...}
    for epoch in range(J["epoch"] if J else 0, params["epochs"]):
        ...
        ckpt.ckpt_epoch(epoch, value)          # 0-based epoch; value of ckpt_save_best_metric

The keys are candle_lib's (ckpt_directory, default `<output_dir>/ckpts`; ckpt_restart_mode, ckpt_save_interval,
ckpt_keep_limit, ...). The files are playground's (docs/checkpoints.md), so under `playground candle` they are
the run's checkpoints: listed, kept by the policy, resumed, fenced; and each holds every RNG state, so a loop
that continues from J["epoch"] resumes bitwise. The value handed to ckpt_epoch is recorded as the epoch's
metric named by ckpt_save_best_metric (candle_lib's default: val_loss). Differences from candle_lib: with
ckpt_save_interval 0 (its default) the best and the preemption checkpoints are still written (candle_lib then
writes none), and a metric whose name has neither loss nor error counts as better when higher (candle_lib's
PyTorch helper always minimises).
"""
from __future__ import annotations

import os
from typing import Any

import torch

from playground.candle import CandleCheckpoint


class CandleCkptPyTorch:
    """Checkpoints of one PyTorch training loop; give the model (and optimizer) with set_model() first."""

    def __init__(self, gParams: dict, logger: Any = "DEFAULT", verbose: bool = True) -> None:
        if gParams.get("ckpt_directory") is None:
            if gParams.get("output_dir") is None:
                raise Exception("CandleCkptPyTorch: neither ckpt_directory nor output_dir is set in the params")
            gParams["ckpt_directory"] = os.path.join(gParams["output_dir"], "ckpts")
        self.gParams = gParams
        self.ckpt_directory = gParams["ckpt_directory"]
        self.save_best_metric = gParams.get("ckpt_save_best_metric") or "val_loss"
        self.logger, self.verbose = logger, verbose
        self.model: dict | None = None
        self._helper: CandleCheckpoint | None = None

    def set_model(self, model: dict) -> None:
        """`model`: {"model": the network, "optimizer": its optimizer (optional)}."""
        self.model = model
        self._helper = CandleCheckpoint(self._helper_params(), model["model"], model.get("optimizer"),
                                        device=_device_of(model["model"]))

    def restart(self, model: torch.nn.Module | None = None, verbose: bool = True) -> dict | None:
        """Load the checkpoint ckpt_restart_mode asks for; its description, or None when starting afresh."""
        if self._helper is None:
            if model is None:
                raise Exception("CandleCkptPyTorch.restart: call set_model({'model': ..., 'optimizer': ...}) first")
            self.set_model({"model": model, "optimizer": None})
        epoch = self._helper.restart()
        path = self._helper.resumed_from
        if path is None:
            return None
        return {"epoch": epoch, "save_best_metric": self.save_best_metric,
                "best_metric_last": self._helper.policy.best_value, "model_file": os.path.basename(path),
                "checksum": "__DISABLED__", "metadata": self.gParams.get("ckpt_metadata")}

    def ckpt_epoch(self, epoch: int, metric_value: Any) -> None:
        """After 0-based `epoch`: record `metric_value` and checkpoint as the ckpt_* keys say."""
        if self._helper is None:
            raise Exception("CandleCkptPyTorch.ckpt_epoch: call set_model({'model': ..., 'optimizer': ...}) first")
        self._helper.save(epoch, {self.save_best_metric: metric_value})

    def report_final(self) -> None:
        if self._helper is not None:
            self._helper.report_final()

    def on_train_end(self, logs: Any = None) -> None:
        self.report_final()

    def _helper_params(self) -> dict:
        params = dict(self.gParams)
        params["ckpt_save_best_metric"] = self.save_best_metric
        if params.get("ckpt_keep_mode") == "all":          # candle_lib's name for keeping every checkpoint
            params["ckpt_keep_mode"], params["ckpt_keep_limit"] = "linear", 1000000
        return params


def restart(gParameters: dict, model: torch.nn.Module, verbose: bool = True) -> dict | None:
    """Load the network's weights (and RNG states) from the checkpoint ckpt_restart_mode asks for; None when
    there is none. The epochs it holds are J["epoch"]."""
    return CandleCkptPyTorch(gParameters, verbose=verbose).restart(model, verbose)


def _device_of(model: torch.nn.Module) -> torch.device:
    first = next(iter(model.parameters()), None)
    return first.device if first is not None else torch.device("cpu")
