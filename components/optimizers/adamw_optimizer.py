"""torch.optim.AdamW with the opts' weight decay and learning-rate schedule (base_learning_rate, lr_policy)."""
from __future__ import annotations

import torch

from playground.api import Float, ListOf, SCHEDULE_KEYS, schedule_from_opts

# Framework keys this component reads (docs/opts.md lists it as their reader).
reads = ["model_param.weight_decay", *SCHEDULE_KEYS]

additional_definitions = [
    {"name": "model_param.base_learning_rate", "type": Float(0, exclusive_minimum=True), "default": 1e-3,
     "help": "AdamW's usual starting rate (the framework's 0.1 suits SGD)."},
    {"name": "model_param.adam_betas", "type": ListOf(Float(0, 1, exclusive_maximum=True), 2, 2), "default": [0.9, 0.999], "help": "AdamW betas (beta1, beta2)."},
    {"name": "model_param.adam_eps", "type": float, "default": 1e-8, "help": "AdamW epsilon."},
]


def gen_optimizer_fun(self, model, dataset, is_train):
    p = self.opts["model_param"]
    beta1, beta2 = (float(b) for b in p["adam_betas"])
    optimizer = torch.optim.AdamW(model.module.parameters(), lr=p["base_learning_rate"], betas=(beta1, beta2),
                                  eps=p["adam_eps"], weight_decay=p["weight_decay"])
    return optimizer, schedule_from_opts(self.opts, self.total_batch_size)
