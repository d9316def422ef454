"""The hook base class: small objects the AnyExp loop calls at fixed stages, each with its own checkpointed state.

Stages, in the order the loop reaches them, beside the original Caffe2-named trainer methods (which keep their
names and order; a hook never replaces one):

    before_train()                         after loadCheckpoint
    for each epoch:
        before_epoch(epoch)                -> fun_per_epoch_b4RunNet(epoch)
        for each iteration:
            before_iter(epoch, epoch_iter) -> fun_per_iter_b4RunNet
                                           -> run_training_net: per micro-batch forward and backward, then
                                              after_backward() (gradients complete, unscaled), the optimizer
                                              step, after_step()
                                           -> fun_per_iter_aftRunNetB4Test
            after_iter(epoch, epoch_iter)     record point when due: before_test(kind), run_testing_net x n,
                                              after_test(kind), after_record(record)
                                           -> fun_per_iter_aftRunNetAftTest
            end_of_iter(epoch, epoch_iter)    iteration checkpoints and stop requests
        after_epoch(epoch)                    end-of-epoch record point (same test stages)
                                           -> checkpoint(epoch) -> fun_per_epoch_aftRunNet(epoch)
    after_train()                          -> fun_conclude_operator, createMetricsPlotsModelsOutputs, assembleAllOutputs
    close()                                always, even after an error: release files and threads

Every rank calls every stage of every hook in list order. `state_dict()` is taken from rank 0 when a checkpoint
is saved (so it must be the same on every rank, or rank 0's must do for all) and `load_state_dict()` is called
on every rank before `before_train` when a run resumes. This module imports nothing heavy: the registry
inspects hook classes while printing --help.
"""
from __future__ import annotations

import weakref
from typing import Any

STAGES = ("before_train", "before_epoch", "before_iter", "after_backward", "after_step", "after_iter",
          "before_test", "after_test", "after_record", "end_of_iter", "after_epoch", "after_train", "close")


class Hook:
    """Base class: override the stages you need. `self.trainer` is the running AnyExp (a weak proxy of it);
    `name` keys the state.

    A subclass may set the class attribute `name`; a user hook without one is named as in `model.hooks_py`.
    Its opts are declared like any component's (`additional_definitions` in its module) and read from
    `self.trainer.opts`.
    """

    name: str = ""
    # How the component registry (playground/options/registry.py) recognises a hook without importing the trainer.
    is_playground_hook = True

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer

    @property
    def trainer(self) -> Any:
        """The running trainer, through a weak proxy: a hook kept after the run (by a user's list, a closure, a
        traceback) does not keep the trainer, its networks and its data alive; using it then raises ReferenceError."""
        return self._trainer_proxy

    @trainer.setter
    def trainer(self, trainer: Any) -> None:
        self._trainer_proxy = trainer if trainer is None or isinstance(trainer, weakref.ProxyTypes) else weakref.proxy(trainer)

    def before_train(self) -> None:
        pass

    def before_epoch(self, epoch: int) -> None:
        pass

    def before_iter(self, epoch: int, epoch_iter: int) -> None:
        pass

    def after_backward(self) -> None:
        pass

    def after_step(self) -> None:
        pass

    def after_iter(self, epoch: int, epoch_iter: int) -> None:
        pass

    def before_test(self, kind: str) -> None:
        pass

    def after_test(self, kind: str) -> None:
        pass

    def after_record(self, record: dict) -> None:
        """A record point was computed; a hook may add JSON values to `record` before it is written."""

    def end_of_iter(self, epoch: int, epoch_iter: int) -> None:
        pass

    def after_epoch(self, epoch: int) -> None:
        pass

    def after_train(self) -> None:
        pass

    def close(self) -> None:
        pass

    def state_dict(self) -> dict:
        """What a resume needs to continue exactly: tensors, numbers, strings, lists and dicts only."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
