"""torch.optim.SGD with momentum, weight decay and the opts' learning-rate schedule (base_learning_rate, lr_policy)."""
from __future__ import annotations

import torch

from playground.api import Float, SCHEDULE_KEYS, schedule_from_opts

# Framework keys this component reads (docs/opts.md lists it as their reader).
reads = ["model_param.weight_decay", *SCHEDULE_KEYS]

additional_definitions = [
    {"name": "model_param.base_learning_rate", "type": Float(0, exclusive_minimum=True), "default": 0.1,
     "help": "SGD's starting rate."},
    {"name": "model_param.momentum", "type": float, "default": 0.9, "help": "SGD momentum."},
    {"name": "model_param.nesterov", "type": bool, "default": False, "help": "Use Nesterov momentum."},
]


def gen_optimizer_fun(self, model, dataset, is_train):
    p = self.opts["model_param"]
    optimizer = torch.optim.SGD(model.module.parameters(), lr=p["base_learning_rate"], momentum=p["momentum"],
                                nesterov=p["nesterov"] and p["momentum"] > 0, weight_decay=p["weight_decay"])
    return optimizer, schedule_from_opts(self.opts, self.total_batch_size)
