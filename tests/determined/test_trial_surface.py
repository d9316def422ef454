"""The surface a Determined trial file touches when it is imported and built: determined.pytorch.samplers with
Determined's documented behaviour, context.experimental's members honoured, a torch DataLoader batching through
batch_sampler, a member that is not provided stopping the trial with one line naming it (exit 2), and the
context's getters and switches answering as Determined's PyTorchTrialContext does (ContextSurface)."""
from __future__ import annotations

import json
import pathlib

import pytest
import torch

from playground.compat.determined.pytorch import samplers
from playground.determined.distributed_context import DistributedContext
from playground.determined.trials.context import ContextMisuse, PyTorchTrialContext
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


def test_batch_samplers_shuffle_and_repeat_whole_batches_and_skip_sampler_skips_records():
    batches = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(range(10)), 4, drop_last=False)
    shuffled = samplers.ReproducibleShuffleBatchSampler(batches, 3)
    again = samplers.ReproducibleShuffleBatchSampler(batches, 3)
    passes = [list(shuffled) for _ in range(4)]
    assert passes == [list(again) for _ in range(4)] and len(shuffled) == 3
    assert all(sorted(p) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] for p in passes)   # batches kept whole
    assert len({tuple(map(tuple, p)) for p in passes}) > 1                          # each pass its own order
    endless = iter(samplers.RepeatBatchSampler(batches))
    assert [next(endless) for _ in range(4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9], [0, 1, 2, 3]]
    assert len(samplers.RepeatBatchSampler(batches)) == 3
    skipping = samplers.SkipSampler(torch.utils.data.SequentialSampler(range(10)), 3)
    assert list(skipping) == [3, 4, 5, 6, 7, 8, 9] and len(skipping) == 10     # Determined's len: the sampler's
    assert list(samplers.SkipSampler(range(2), 5)) == []


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


def surface_lines(run_dir: pathlib.Path, rank: int) -> list[dict]:
    said = (run_dir / f"rank{rank}.out").read_text().splitlines()
    return [json.loads(line[len("SURFACE "):]) for line in said if line.startswith("SURFACE ")]


def test_context_getters_and_switches_answer_as_determined_s_on_two_slots_and_after_a_resume(tmp_path):
    config = {"searcher": {"name": "single", "metric": "validation_loss"}, "data": {"url": "file:///digits"},
              "reproducibility": {"experiment_seed": 40}}
    first = dict(info(), experiment_config=config, trial_id=3, experiment_id=7, max_length={"batches": 8})
    run_dir = tmp_path / "run"
    run(trial_main("surface_trial:ContextSurface"), run_dir, first, 2)
    run(trial_main("surface_trial:ContextSurface"), run_dir, dict(first, max_length={"batches": 10}), 2)
    said = {rank: surface_lines(run_dir, rank) for rank in (0, 1)}
    for rank, lines in said.items():
        inits = [line for line in lines if line["what"] == "init"]
        # configure_apex_amp(enabled=False) gives its arguments back; autocast_forward_pass a model of the same
        # class over the same parameters; set_enable_tensorboard_logging(False) is what the getter answers
        assert inits == [{"what": "init", "rank": rank, "unchanged": True, "autocast": [True, True],
                          "tensorboard": False}] * 2
        firsts = [line for line in lines if line["what"] == "first"]
        assert [line["batch_idx"] for line in firsts] == [0, 8]     # get_initial_batch: where each session began
        for line in firsts:
            assert (line["global_batch"], line["per_slot"]) == (8, 4)
            assert line["data"] == {"url": "file:///digits"} and line["searcher"] == "single"
            assert line["ids"] == [7, 3] and line["seed"] == 40 + 3        # experiment seed + trial id
            # rank, size, local rank, local size, cross rank, cross size, agents: one node of two slots
            assert line["ranks"] == [rank, 2, rank, 2, 0, 1, 1]
            assert line["stop"] is False and line["path_is_a_path"] is True
            assert line["tensorboard_path"] == str(run_dir / "tensorboard")
            assert line["allgather"] == [0, 1] and line["gather"] == ([0, 10] if rank == 0 else None)
            assert line["broadcast"] == "from rank 0" and line["length"] == [4, 4]
        # 48 records in per-slot batches of 4 on 2 slots: epochs of 6 batches; batch_idx counts from the start
        batches = [line for line in lines if line["what"] == "batch"]
        assert [line["batch_idx"] for line in batches] == list(range(10))
        for line in batches:
            index = line["batch_idx"]
            assert line["current"] == index and line["epoch"] == line["epoch_idx"] == index // 6
            assert (line["start"], line["end"]) == (index % 6 == 0, index % 6 == 5)
    found = records(run_dir)
    assert [r["iteration"] for r in found] == [8, 10]
    # step_optimizer(auto_zero_grads=False) left the gradients to the trial
    assert all(r["train_grads_kept"] == 1.0 for r in found)
    # Reducer.MIN: each validation's loss is the least batch loss of either rank (2 batches a rank a validation)
    losses = [[line["loss"] for line in said[rank] if line["what"] == "validation"] for rank in (0, 1)]
    assert [r["validation_loss"] for r in found] == [min(losses[0][:2] + losses[1][:2]),
                                                     min(losses[0][2:] + losses[1][2:])]


def test_wrap_scaler_is_called_once_and_before_wrap_model_as_determined_requires():
    context = PyTorchTrialContext({"global_batch_size": 4}, {}, DistributedContext.for_trial(env={}))
    context.wrap_scaler(torch.amp.GradScaler("cuda", enabled=False))
    with pytest.raises(ContextMisuse, match="only call wrap_scaler or use_amp once"):
        context.wrap_scaler(torch.amp.GradScaler("cuda", enabled=False))
    late = PyTorchTrialContext({"global_batch_size": 4}, {}, DistributedContext.for_trial(env={}))
    late.wrap_model(torch.nn.Linear(2, 1))
    with pytest.raises(ContextMisuse, match="call wrap_scaler .* before wrap_model"):
        late.wrap_scaler(torch.amp.GradScaler("cuda", enabled=False))


def one_weight() -> tuple[PyTorchTrialContext, torch.nn.Module, torch.optim.Optimizer]:
    context = PyTorchTrialContext({"global_batch_size": 4}, {}, DistributedContext.for_trial(env={}))
    model = context.wrap_model(torch.nn.Linear(1, 1, bias=False))
    with torch.no_grad():
        model.weight.fill_(1.0)
    return context, model, context.wrap_optimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                                  backward_passes_per_step=2)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_backward_takes_torch_s_arguments_and_two_passes_make_one_step():
    context, model, optimizer = one_weight()
    x = torch.tensor([[2.0]])
    loss = (model(x) ** 2).sum()                          # d/dw (w x)^2 = 2 w x^2 = 8
    context.backward(loss, retain_graph=True)
    context.backward(loss)                                # backward_passes_per_step=2: the gradients add up
    assert model.weight.grad.item() == 16.0
    context.step_optimizer(optimizer)
    assert model.weight.item() == pytest.approx(1.0 - 0.1 * 16.0) and model.weight.grad is None   # zero_grad()
    out = model(torch.tensor([[1.0], [3.0]])) ** 2        # a vector output needs `gradient`
    context.backward(out, gradient=torch.tensor([[1.0], [1.0]]), create_graph=True)
    assert model.weight.grad.item() == pytest.approx(2 * -0.6 * (1 + 9))     # d/dw sum (w x)^2 at w = -0.6
    assert model.weight.grad.requires_grad                # create_graph: the gradient is differentiable
    with pytest.raises(ValueError, match="backward_passes_per_step must be >= 1"):
        context.wrap_optimizer(torch.optim.SGD(model.parameters(), lr=0.1), backward_passes_per_step=0)


def test_experimental_reducer_forwards_of_0_15_reduce_and_reset():
    context = PyTorchTrialContext({"global_batch_size": 4}, {}, DistributedContext.for_trial(env={}))
    total = context.experimental.wrap_reducer(sum, name="total", for_validation=False)
    seen = context.experimental.wrap_reducer(lambda values: {"seen": len(values)}, for_training=False)
    for value in (1, 2, 3):
        total.update(value)
        seen.update(value)
    assert context.experimental.reduce_metrics(for_training=True) == {"total": 6}
    assert context.experimental.reduce_metrics(for_training=False) == {"seen": 3}
    context.experimental.reset_reducers()
    assert context.experimental.reduce_metrics(for_training=True) == {"total": 0}
    assert context.experimental.reduce_metrics(for_training=False) == {"seen": 0}


def test_trainer_configure_profiler_does_nothing_and_other_names_not_provided_are_named(caplog):
    from playground.compat.determined import pytorch
    from playground.determined.trials.experimental import NotProvided
    with pytest.raises(NotProvided, match="determined.pytorch.CheckpointLoadContext is not provided.*"
                                          "docs/determined-pytorch.md"):
        pytorch.CheckpointLoadContext
    alone = DistributedContext.for_trial(env={})
    trainer = pytorch.Trainer(object(), PyTorchTrialContext({"global_batch_size": 4}, {}, alone))
    with caplog.at_level("WARNING", logger="playground"):
        assert trainer.configure_profiler(sync_timings=True, enabled=True, begin_on_batch=0, end_after_batch=5) is None
    assert "configure_profiler() does nothing" in caplog.text
    with pytest.raises(NotProvided, match="Trainer.profile is not provided"):
        trainer.profile
