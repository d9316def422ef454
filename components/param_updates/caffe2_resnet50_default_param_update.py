"""The original default update: SGD, Nesterov momentum 0.9, weight decay 1e-4, rate x0.1 every 30 epochs.

As Caffe2's AddWeightDecay did, the decay applies to weights (convolutions, linear layers, batch-norm gammas)
and not to biases or batch-norm betas. The rate starts at `base_learning_rate` (the original ignored it and fed
0.05); `lr_scale_by_batch` and `warmup_epochs` apply, the policy is fixed to step / 30 epochs / 0.1.
"""
from __future__ import annotations

import torch

from playground.api import schedule_from_opts

# Framework keys this component reads (docs/opts.md lists it as their reader).
reads = ["model_param.base_learning_rate", "model_param.lr_scale_by_batch", "model_param.warmup_epochs"]

WEIGHT_DECAY = 1e-4


def gen_param_update_builder_fun(self, model, dataset, is_train):
    named = [(n, p) for n, p in model.module.named_parameters() if p.requires_grad]
    weights = [p for n, p in named if not n.endswith("bias")]
    biases = [p for n, p in named if n.endswith("bias")]
    groups = [{"params": weights, "weight_decay": WEIGHT_DECAY}, {"params": biases, "weight_decay": 0.0}]
    optimizer = torch.optim.SGD([g for g in groups if g["params"]], lr=self.opts["model_param"]["base_learning_rate"],
                                momentum=0.9, nesterov=True)
    return optimizer, schedule_from_opts(self.opts, self.total_batch_size, policy="step", step_epochs=30, gamma=0.1)
