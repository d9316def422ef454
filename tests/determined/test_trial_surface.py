"""The surface a Determined trial file touches when it is imported and built: determined.pytorch.samplers with
Determined's documented behaviour, context.experimental's members honoured, a torch DataLoader batching through
batch_sampler, and a member that is not provided stopping the trial with one line naming it (exit 2)."""
from __future__ import annotations

import pytest
import torch

from playground.compat.determined.pytorch import samplers
from tests.determined.ranks import output, records, run, start, trial_main, wait

HPARAMS = {"global_batch_size": 8, "n_filters1": 4, "dropout": 0.25, "learning_rate": 1.0}


def info(**hparams) -> dict:
    return dict(experiment_config={}, hparams=dict(HPARAMS, **hparams), trial_id=1, experiment_id=1,
                max_length={"batches": 4})


def test_samplers_shuffle_reproducibly_repeat_shard_and_skip():
    base = torch.utils.data.SequentialSampler(range(10))
    first, second = samplers.ReproducibleShuffleSampler(base, 7), samplers.ReproducibleShuffleSampler(base, 7)
    passes = [list(first), list(first)]
    assert passes == [list(second), list(second)] and passes[0] != passes[1]      # pass k is the same per seed
    assert sorted(passes[0]) == list(range(10))
    endless = iter(samplers.RepeatSampler(base))
    assert [next(endless) for _ in range(13)] == list(range(10)) + [0, 1, 2]
    assert len(samplers.RepeatSampler(base)) == 10
    shards = [list(samplers.DistributedSampler(base, num_workers=3, rank=r)) for r in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert [len(samplers.DistributedSampler(base, 3, r)) for r in range(3)] == [4, 3, 3]
    batches = torch.utils.data.BatchSampler(base, 4, drop_last=False)
    assert list(samplers.SkipBatchSampler(batches, 1)) == [[4, 5, 6, 7], [8, 9]]
    assert len(samplers.SkipBatchSampler(batches, 1)) == 3 and samplers.SkipBatchSampler(batches, 1).batch_sampler is batches
    assert list(samplers.DistributedBatchSampler(batches, 2, 1)) == [[4, 5, 6, 7]]
    with pytest.raises(ValueError, match="rank 2 of 2 workers"):
        samplers.DistributedSampler(base, 2, 2)


@pytest.mark.parametrize("ask, named", [("experimental.use_fp8", "context.experimental.use_fp8"),
                                        ("configure_deepspeed", "context.configure_deepspeed")])
def test_a_member_not_provided_stops_the_trial_with_one_line_naming_it(tmp_path, ask, named):
    codes = wait(start(trial_main("surface_trial:AsksForAMember"), tmp_path / "run", info(ask=ask), 1), tmp_path)
    said = output(tmp_path / "run")
    assert codes == [2] and f"{named} is not provided" in said and "docs/determined-pytorch.md" in said
    assert "Traceback" not in said


def test_importing_a_name_not_provided_stops_with_one_line_naming_it(tmp_path):
    codes = wait(start(trial_main("imports_a_missing_name:MNistTrial"), tmp_path / "run", info(), 1), tmp_path)
    said = output(tmp_path / "run")
    assert codes == [2] and "load_trial_from_checkpoint_path" in said and "Traceback" not in said


def test_experimental_members_and_a_batch_sampler_loader(tmp_path):
    run(trial_main("surface_trial:BatchesOnTheCpu"), tmp_path / "run", info(), 1)
    found = records(tmp_path / "run")
    assert found[-1]["iteration"] == 4 and found[-1]["train_batch_on_cpu"] == 1.0 and found[-1]["train_loss"] > 0
