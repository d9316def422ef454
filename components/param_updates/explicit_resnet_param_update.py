"""SGD with Nesterov momentum 0.9, two weight-decay groups, and the opts' learning-rate schedule (the demo's rule).

`weight_decay` applies to convolution and linear weights, `weight_decay_bn` to batch-norm (and other
normalisation) parameters and to every bias. The rate is `base_learning_rate` shaped by `lr_policy`,
`lr_step_epochs`, `lr_gamma`, `warmup_epochs` and `lr_scale_by_batch` (playground/trainer/lr_schedule.py), a pure
function of the position in training, so a resumed run continues the same curve. (The original ignored
base_learning_rate and fed a constant 0.05.)
"""
from __future__ import annotations

import torch
from torch import nn

from playground.api import SCHEDULE_KEYS, schedule_from_opts

_NORMALISATION = (nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.LayerNorm)


# Framework keys this component reads (docs/opts.md lists it as their reader).
reads = ["model_param.base_learning_rate", "model_param.weight_decay", "model_param.weight_decay_bn", *SCHEDULE_KEYS]

def gen_param_update_builder_fun(self, model, dataset, is_train):
    p = self.opts["model_param"]
    weights, norms_and_biases = decay_groups(model.module)
    groups = [{"params": weights, "weight_decay": p["weight_decay"], "name": "weights"},
              {"params": norms_and_biases, "weight_decay": p["weight_decay_bn"], "name": "bn_and_biases"}]
    optimizer = torch.optim.SGD([g for g in groups if g["params"]], lr=p["base_learning_rate"], momentum=0.9,
                                nesterov=True)
    return optimizer, schedule_from_opts(self.opts, self.total_batch_size)


def decay_groups(module: nn.Module) -> tuple[list[nn.Parameter], list[nn.Parameter]]:
    """(weights that get weight_decay, normalisation parameters and biases that get weight_decay_bn)."""
    weights, others = [], []
    for sub in module.modules():
        for name, param in sub.named_parameters(recurse=False):
            if not param.requires_grad:
                continue
            (others if isinstance(sub, _NORMALISATION) or name == "bias" else weights).append(param)
    return weights, others
