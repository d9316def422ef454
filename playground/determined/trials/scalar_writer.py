"""The writer behind `context.get_tensorboard_writer()`: torch's SummaryWriter into <run-dir>/tensorboard when the
tensorboard package is installed, else an object with the same methods that appends each scalar as a JSON line to
<run-dir>/tensorboard/scalars.jsonl (images, histograms and graphs are dropped, once noted in the log). Only rank
0 writes; other ranks get a writer that writes nothing, as Determined's did."""
from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

log = logging.getLogger("playground")


def writer_for(folder: str, enabled: bool) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:   # torch.utils.tensorboard needs the tensorboard package
        return ScalarWriter(folder, enabled)
    return SummaryWriter(folder) if enabled else ScalarWriter(folder, False)


class ScalarWriter:
    """SummaryWriter's methods; scalars go to scalars.jsonl as {"tag", "value", "step", "wall_time"}."""

    def __init__(self, folder: str, enabled: bool = True) -> None:
        self.log_dir, self.enabled = folder, enabled
        self._dropped: set[str] = set()
        if enabled:
            os.makedirs(folder, exist_ok=True)

    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None,
                   walltime: float | None = None, **_: Any) -> None:
        if not self.enabled:
            return
        record = {"tag": tag, "value": float(scalar_value), "step": global_step,
                  "wall_time": walltime if walltime is not None else time.time()}
        with open(os.path.join(self.log_dir, "scalars.jsonl"), "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: int | None = None,
                    walltime: float | None = None) -> None:
        for tag, value in tag_scalar_dict.items():
            self.add_scalar(f"{main_tag}/{tag}", value, global_step, walltime)

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("add_"):
            raise AttributeError(name)

        def dropped(*_: Any, **__: Any) -> None:   # add_image, add_histogram...: need the tensorboard package
            if self.enabled and name not in self._dropped:
                self._dropped.add(name)
                log.info("get_tensorboard_writer(): %s is not recorded without the tensorboard package", name)
        return dropped

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass
