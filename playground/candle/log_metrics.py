"""Per-epoch metrics read from what a CANDLE script prints, for scripts that report nothing else.

Two forms are read, line by line:
- Keras' epoch lines: `Epoch 3/10` opens epoch 2 (0-based); a later line of `name: number` pairs separated by
  ` - ` (`10/10 [====] - 0s 2ms/step - loss: 0.52 - val_loss: 0.61`) gives its values; the last such line
  before the next `Epoch` line counts.
- CANDLE's PyTorch benchmarks' summary line: `====> Epoch: 2 Average loss: 0.0123` gives epoch 2's `loss`.
Progress lines redrawn with carriage returns count by their last redraw.
"""
from __future__ import annotations

import re

_KERAS_EPOCH = re.compile(r"^\s*Epoch (\d+)/(\d+)\s*$")
_PAIR = re.compile(r"(?:^|\s-\s)([A-Za-z_][\w.]*): (-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)\b")
_TORCH_SUMMARY = re.compile(r"====> Epoch: (\d+) Average loss: (-?[\d.]+(?:[eE][-+]?\d+)?)")


class LogMetrics:
    """Feed it the script's output (`write`); `lists()` gives metric name -> one value per epoch."""

    def __init__(self) -> None:
        self.epochs: dict[int, dict[str, float]] = {}
        self._keras_epoch: int | None = None
        self._pending = ""

    def write(self, text: str) -> None:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        for line in lines:
            self._line(line.rsplit("\r", 1)[-1])

    def lists(self) -> dict[str, list[float | None]]:
        if self._pending:
            self._line(self._pending.rsplit("\r", 1)[-1])
            self._pending = ""
        if not self.epochs:
            return {}
        count = max(self.epochs) + 1
        names = list(dict.fromkeys(name for values in self.epochs.values() for name in values))
        return {name: [self.epochs.get(e, {}).get(name) for e in range(count)] for name in names}

    def _line(self, line: str) -> None:
        summary = _TORCH_SUMMARY.search(line)
        if summary:
            self.epochs.setdefault(int(summary.group(1)), {})["loss"] = float(summary.group(2))
            return
        opened = _KERAS_EPOCH.match(line)
        if opened:
            self._keras_epoch = int(opened.group(1)) - 1
            return
        if self._keras_epoch is not None and " - " in line:
            pairs = {name: float(value) for name, value in _PAIR.findall(line)}
            if pairs:
                self.epochs[self._keras_epoch] = pairs
