"""`determined.pytorch` on playground: Determined's PyTorch Trial API (0.2x to 0.38) and 0.38's Trainer API,
trained by playground's trainer (playground/determined/trials/), and Determined's `samplers`.
docs/determined-pytorch.md lists every member.
"""
import os

from playground.determined.trials.trainer_api import Trainer, init
from playground.determined.trials.trial import Batch, Epoch, PyTorchTrial, TrainUnit
from playground.determined.trials.callbacks import PyTorchCallback
from playground.determined.trials.context import PyTorchTrialContext
from playground.determined.trials.experimental import ExperimentalContext as PyTorchExperimentalContext, not_provided
from playground.determined.trials.data_loader import DataLoader, TorchData, data_length, to_device
from playground.determined.trials.lr_scheduler import LRScheduler
from playground.determined.trials.reducers import MetricReducer, Reducer
from playground.determined.cluster_file import CLUSTER_ENV
from playground.launch import deferred_dynamo
from playground.compat.determined.pytorch import samplers

# In a trial process the runner started, a trial's optimizers (context.wrap_optimizer, before any training) need not
# import torch's compiler; compiling something imports it then (docs/hooks.md, model_param.compile).
if os.environ.get(CLUSTER_ENV):
    deferred_dynamo.permit()
    deferred_dynamo.install()

__all__ = ["Batch", "DataLoader", "Epoch", "LRScheduler", "MetricReducer", "PyTorchCallback", "PyTorchExperimentalContext",
           "PyTorchTrial", "PyTorchTrialContext", "Reducer", "TorchData", "TrainUnit", "Trainer", "data_length",
           "init", "samplers", "to_device"]


def __getattr__(name: str):
    """A member of Determined's determined.pytorch that playground does not provide: one line naming it."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise not_provided("determined.pytorch", name)
