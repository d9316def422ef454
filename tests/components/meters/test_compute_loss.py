"""ComputeLoss against hand-computed values, and its direction (lower is better) in a run."""
from __future__ import annotations

import torch

from components.meters.compute_loss import ComputeLoss
from playground.trainer.meters import Blobs
from tests.playground.trainer.test_anyexp import user_modules  # noqa: F401 - the fixture: modules outside the repository


def blobs(loss: float, n: int) -> Blobs:
    return Blobs(torch.tensor(loss), torch.zeros(n, 3), torch.zeros(n, dtype=torch.long))


def test_mean_loss_is_weighted_by_samples_since_reset():
    meter = ComputeLoss(blob_name="loss")
    meter.Add(blobs(2.0, 4))
    meter.Add(blobs(0.5, 2))     # a smaller last batch counts less
    assert meter.Compute() == (2.0 * 4 + 0.5 * 2) / 6
    meter.Reset()
    assert meter.Compute() is None
    meter.Add(blobs(1.25, 3))
    assert meter.Compute() == 1.25


def test_sums_of_two_ranks_give_the_loss_over_both():
    rank0, rank1 = ComputeLoss(), ComputeLoss()
    rank0.Add(blobs(1.0, 8))
    rank1.Add(blobs(3.0, 2))
    merged = ComputeLoss()
    merged.load_sums(rank0.sums() + rank1.sums())
    assert merged.Compute() == (8 * 1.0 + 2 * 3.0) / 10


LOSS_UNDER_ANOTHER_NAME = """
from components.meters.compute_loss import ComputeLoss

def init_metrics(self):
    super(type(self), self).init_metrics()
    self.add_metric("test_nll_extra", ComputeLoss(self.opts), False)
"""


def test_a_loss_under_any_name_is_a_minimum_for_best_ckpt_save_best_and_early_stopping(tmp_path, user_modules):
    """ComputeLoss says lower is better: `test_objective` and `val_nll` (names that say nothing) are minimised."""
    import json

    from playground.api import run
    from tests.conftest import tiny_opts
    opts = tiny_opts(epoch_iter={"num_epochs": 4, "num_train_iteration_per_test": 100, "num_test_sample": 40,
                                 "test_batch_per_device": 20},
                     model={"additional_override_py": user_modules("loss_extra", LOSS_UNDER_ANOTHER_NAME)})
    loss = {"meter_py": "ComputeLoss", "meter_kargs": {"blob_name": "loss"}, "is_train": False}
    opts["output"].update(metrics=[dict(loss, name="test_objective"), dict(loss, name="val_nll")], plots=[],
                          early_stopping={"metric": "test_objective", "patience": 1}, ckpt_save_best_metric="val_nll")
    run(opts, run_dir=str(tmp_path / "run"))
    resolved = json.loads((tmp_path / "run" / "opts.json").read_text())["opts"]["output"]
    assert [m["mode"] for m in resolved["metrics"]] == ["min", "min"]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    values = results["metrics"]["test_objective"]      # one full test pass per epoch
    assert len(set(values)) > 1                        # the direction decides which one is best
    for name in ("test_objective", "val_nll", "test_nll_extra"):
        assert results["best"][name]["value"] == min(values), name
    stopping = results["early_stopping"]
    assert stopping["mode"] == "min" and stopping["best_value"] == min(values)
    info = json.loads((tmp_path / "run" / "checkpoints" / "best").resolve().with_suffix(".json").read_text())
    assert (info["best_mode"], info["best_value"]) == ("min", min(values))
