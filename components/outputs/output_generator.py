"""The original minimal output: the result dict (last checkpoint path and the metrics lists)."""
from __future__ import annotations


def fun_conclude_operator(self):
    pass


def assembleAllOutputs(self):
    return {"train_model": self.train_model, "test_model": self.test_model, "model": self.model_output,
            "metrics": self.metrics_output}
