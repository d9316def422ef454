"""Per-epoch metrics read from what a CANDLE script prints (playground/candle/log_metrics.py)."""
from __future__ import annotations

from playground.candle.log_metrics import LogMetrics


def test_keras_epoch_lines_give_the_last_values_of_each_epoch():
    reader = LogMetrics()
    reader.write("Epoch 1/2\n 5/10 [==>...] - ETA: 0s - loss: 0.9000\r10/10 [=====] - 0s 2ms/step - loss: 0.52")
    reader.write("00 - val_loss: 0.6100\nEpoch 2/2\n10/10 [=====] - 0s 2ms/step - loss: 0.4 - val_loss: 5e-1\n")
    assert reader.lists() == {"loss": [0.52, 0.4], "val_loss": [0.61, 0.5]}


def test_candles_pytorch_summary_lines_give_the_loss_and_other_lines_nothing():
    reader = LogMetrics()
    reader.write("Train Epoch: 0 [0/40 (0%)]\tLoss: 0.300000\n====> Epoch: 0 Average loss: 0.2500\n")
    reader.write("model name:  p1b1\n====> Epoch: 1 Average loss: 0.1250")
    assert reader.lists() == {"loss": [0.25, 0.125]}
    assert LogMetrics().lists() == {}
