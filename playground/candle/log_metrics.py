"""Per-epoch metrics read from what a CANDLE script prints, for the values it reports nowhere else.

The forms read, line by line (a value is taken as printed: a line that rounds it to 4 decimals gives 4):
- Keras' epoch lines: `Epoch 3/10` opens epoch 2 (0-based); a later line of `name: number` pairs separated by
  ` - ` (`10/10 [====] - 0s 2ms/step - loss: 0.52 - val_loss: 0.61`) gives its values; the last such line
  before the next `Epoch` line counts.
- candle_lib's LoggingCallback lines: `[Epoch: 2] loss: 0.0123, val_loss: 0.0456` (0-based, as Keras passes it).
- CANDLE's PyTorch benchmarks' lines: `====> Epoch: 2 Average loss: 0.0123` gives epoch 2's `loss`, and a
  following `=> Average validation loss: 0.0456` its `val_loss`; `Evaluation on test data: {'accuracy': 0.8}`
  (a dict, as P1B2 prints it) gives `test_accuracy`, at full precision, to the last epoch.
Progress lines redrawn with carriage returns count by their last redraw.
"""
from __future__ import annotations

import ast
import re

_NUMBER = r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf"
_KERAS_EPOCH = re.compile(r"^\s*Epoch (\d+)/(\d+)\s*$")
_PAIR = re.compile(rf"(?:^|\s-\s)([A-Za-z_][\w.]*): ({_NUMBER})\b")
_LOGGING_CALLBACK = re.compile(r"^\s*\[Epoch: (\d+)\] (.*)$")
_CALLBACK_PAIR = re.compile(rf"(?:^|,\s*)([A-Za-z_][\w.]*): ({_NUMBER})\b")
_TORCH_SUMMARY = re.compile(rf"====> Epoch: (\d+) Average loss: ({_NUMBER})")
_TORCH_VALIDATION = re.compile(rf"^\s*=> Average validation loss: ({_NUMBER})")
_TEST_SCORES = re.compile(r"^\s*Evaluation on test data:\s*(\{.*\})\s*$")
_NUMPY_SCALAR = re.compile(r"\bnp\.\w+\(([^()]*)\)")


class LogMetrics:
    """Feed it the script's output (`write`); `lists()` gives metric name -> one value per epoch."""

    def __init__(self) -> None:
        self.epochs: dict[int, dict[str, float]] = {}
        self.final: dict[str, float] = {}            # values printed once, after training (test scores)
        self._keras_epoch: int | None = None
        self._torch_epoch: int | None = None
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
        epochs = {epoch: dict(values) for epoch, values in self.epochs.items()}
        if self.final:
            epochs.setdefault(max(epochs, default=0), {}).update(self.final)
        if not epochs:
            return {}
        count = max(epochs) + 1
        names = list(dict.fromkeys(name for values in epochs.values() for name in values))
        return {name: [epochs.get(e, {}).get(name) for e in range(count)] for name in names}

    def _line(self, line: str) -> None:
        summary = _TORCH_SUMMARY.search(line)
        if summary:
            self._torch_epoch = int(summary.group(1))
            self.epochs.setdefault(self._torch_epoch, {})["loss"] = float(summary.group(2))
            return
        validation = _TORCH_VALIDATION.match(line)
        if validation and self._torch_epoch is not None:
            self.epochs.setdefault(self._torch_epoch, {})["val_loss"] = float(validation.group(1))
            return
        scores = _TEST_SCORES.match(line)
        if scores:
            self.final.update(_test_scores(scores.group(1)))
            return
        logged = _LOGGING_CALLBACK.match(line)
        if logged:
            pairs = {name: float(value) for name, value in _CALLBACK_PAIR.findall(logged.group(2))}
            if pairs:
                self.epochs.setdefault(int(logged.group(1)), {}).update(pairs)
            return
        opened = _KERAS_EPOCH.match(line)
        if opened:
            self._keras_epoch = int(opened.group(1)) - 1
            return
        if self._keras_epoch is not None and " - " in line:
            pairs = {name: float(value) for name, value in _PAIR.findall(line)}
            if pairs:
                self.epochs[self._keras_epoch] = pairs


def _test_scores(text: str) -> dict[str, float]:
    """`{'accuracy': 0.8125}` -> {"test_accuracy": 0.8125}: the numbers of a printed dict (keys that already
    start with `test` keep their name; numpy 2's `np.float64(0.8125)` reads as its number)."""
    try:
        scores = ast.literal_eval(_NUMPY_SCALAR.sub(r"\1", text))
    except (ValueError, SyntaxError):
        return {}
    if not isinstance(scores, dict):
        return {}
    return {(str(k) if str(k).startswith("test") else f"test_{k}"): float(v) for k, v in scores.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}
