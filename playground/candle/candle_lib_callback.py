"""With candle_lib installed: the values a script hands to candle_lib's `CandleCkptPyTorch.ckpt_epoch` become
the run's epoch records, as they do with playground's implementation (playground/compat/candle), so a
benchmark reports the same metrics with and without candle_lib.

Only for the duration of the script's `run(params)`, and only when `candle` is candle_lib (not playground's);
the method is wrapped, candle_lib still does everything it did.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator

from playground.candle.candle_run import CandleRun


@contextlib.contextmanager
def recorded_checkpoint_values(folder: CandleRun) -> Iterator[None]:
    module = sys.modules.get("candle")
    callback = getattr(module, "CandleCkptPyTorch", None) if module is not None else None
    if callback is None or module.__name__.startswith("playground.") or not hasattr(callback, "ckpt_epoch") \
            or getattr(callback, "__module__", "").startswith("playground."):   # a user's candle re-exporting ours
        yield
        return
    original = callback.ckpt_epoch

    def ckpt_epoch(self: Any, epoch: int, metric_value: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self, "save_best_metric", None) or "val_loss"
        value = metric_value.item() if hasattr(metric_value, "item") else metric_value
        folder.epoch_record(int(epoch), {name: value}, None)
        return original(self, epoch, metric_value, *args, **kwargs)

    callback.ckpt_epoch = ckpt_epoch
    try:
        yield
    finally:
        callback.ckpt_epoch = original
