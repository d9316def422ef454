"""Record points: every num_train_iteration_per_test (N) iterations, and at each epoch end when something is left
to measure. Interval points come after 0-based iterations N-1, 2N-1, ... of each epoch, each closing N
iterations; with epoch_iter.record_points_at "caffe2", after iterations 0, N, 2N, ... as the original's
`epoch_iter % num_train_iteration_per_test == 0` (its first point measures one iteration), each at its
`fract_epoch` = epoch + epoch_iter / iterations per epoch (epoch_iter the 0-based iteration just run; otherwise
a record's `epochs` counts the iterations done, epoch + (epoch_iter + 1) / iterations). A point runs the
test batches (num_test_iter of them; the full test pass at an epoch end), reduces the meters over ranks,
computes throughput from the interval timer, lets every hook add to the record (`after_record`), then appends
it to metrics.jsonl. A full test pass is never made twice at one iteration: an epoch whose last iteration
already had one (a Determined trial's validation period, loop_hook.py) ends without another."""
from __future__ import annotations

from playground.distribution import collectives as dist_utils
from playground.trainer.hook import Hook


class RecordPoints(Hook):
    name = "record_points"

    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        self.per_test = trainer.opts["epoch_iter"]["num_train_iteration_per_test"]
        self.caffe2 = trainer.opts["epoch_iter"]["record_points_at"] == "caffe2"
        self.first_after = 0 if self.caffe2 else self.per_test - 1

    def after_iter(self, epoch: int, epoch_iter: int) -> None:
        if epoch_iter % self.per_test == self.first_after:
            self.record(epoch, epoch_iter + 1, "interval", at_iteration=epoch_iter if self.caffe2 else None)

    def after_epoch(self, epoch: int) -> None:
        if self.full_pass_is_current():
            return
        if not self.trainer.validates_at_epoch_end(epoch):    # an override's choice: training metrics only
            if self.trainer.hooks.get("interval_timer").iters:
                self.record(epoch, self.trainer.epoch_iterations, "interval")
            return
        if self.trainer.hooks.get("interval_timer").iters or self.has_test():
            self.record(epoch, self.trainer.epoch_iterations, "epoch")

    def full_pass_is_current(self) -> bool:
        """Whether the last record is a full test pass made after the current iteration (nothing trained since)."""
        records = self.trainer.book.records
        return bool(records) and records[-1].get("kind") == "epoch" and \
            records[-1].get("iteration") == self.trainer.global_iter

    def after_train(self) -> None:
        if self.trainer.opts["epoch_iter"]["num_epochs"] == 0 and self.has_test():
            self.record(self.trainer.epoch, 0, "epoch")    # no training asked for: evaluate (one full test pass)

    def record(self, epoch: int, iters_done: int, kind: str, at_iteration: int | None = None) -> dict:
        """Train meters since the last point, test batches ("epoch": the full test pass), throughput. The record's
        `epochs` is epoch + iters_done / iterations per epoch, or with `at_iteration` (the Caffe2 timing) Caffe2's
        fract_epoch, epoch + at_iteration / iterations per epoch."""
        trainer = self.trainer
        fraction = (iters_done if at_iteration is None else at_iteration) / max(1, trainer.epoch_iterations)
        self.run_test_batches(kind)
        iters, secs = trainer.hooks.get("interval_timer").take()
        throughput = (iters * trainer.total_batch_size / secs, secs / iters) if iters and secs > 0 else (None, None)
        record = trainer.book.record(
            kind=kind, epoch=epoch, epoch_iter=iters_done, iteration=trainer.global_iter, samples=self.samples_seen(),
            epochs=epoch + fraction, samples_per_sec=throughput[0],
            secs_per_train=throughput[1], lr=trainer.lr, wall_time=trainer.wall_time(),
            reduce=dist_utils.all_reduce_sum if trainer.world_size > 1 else None)
        trainer.hooks.call("after_record", record)
        trainer.outputs.append_record(record)
        return record

    def samples_seen(self) -> int:
        """Training samples so far, counted in global batches of the session that trained them (monotone)."""
        trainer = self.trainer
        last = trainer.book.records[-1] if trainer.book.records else {}
        since, done = last.get("iteration", 0), last.get("samples", last.get("iteration", 0) * trainer.total_batch_size)
        return int(done + (trainer.global_iter - since) * trainer.total_batch_size)

    def has_test(self) -> bool:
        model = self.trainer.test_model
        return model is not None and model.batches is not None and model.module is not None

    def run_test_batches(self, kind: str) -> None:
        if not self.has_test():
            return
        trainer = self.trainer
        stream = trainer.test_model.batches
        count = stream.begin_full_pass() if kind == "epoch" else trainer.opts["epoch_iter"]["num_test_iter"]
        trainer.test_model.module.eval()
        trainer.hooks.call("before_test", kind)
        try:
            for _ in range(count):
                trainer.run_testing_net()
        finally:
            trainer.hooks.call("after_test", kind)
            if kind == "epoch":
                stream.end_full_pass()
            if trainer.train_model is not None and trainer.train_model.module is not None:
                trainer.train_model.module.train()
