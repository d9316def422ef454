"""Mid-epoch checkpoints (output.ckpt_every_n_iters) and stop requests at iteration boundaries; at the end of
training, waits for the write in flight. Last in the hook list, so a checkpoint holds every other hook's state
after the iteration it names."""
from __future__ import annotations

from playground.trainer.hook import Hook


class IterationCheckpoints(Hook):
    name = "iteration_checkpoints"

    def end_of_iter(self, epoch: int, epoch_iter: int) -> None:
        trainer = self.trainer
        saved = trainer.checkpointer.after_iteration(epoch, epoch_iter + 1, trainer.global_iter,
                                                     trainer.epoch_iterations, trainer.state_capture)
        if saved:
            trainer.model_path = saved

    def after_train(self) -> None:
        self.trainer.checkpointer.finish()
