"""The trainer's own state (state_dict / rank_state_dict / load_state_dict, playground/trainer/trainer_state.py):
each rank's data position (a resumed run neither repeats, skips nor re-decodes samples, also with DataLoader
workers), and a trainer with several networks and optimizers round-trips through a checkpoint file."""
from __future__ import annotations

import signal
import time

import pytest
import torch

from playground.data.batch_stream import TrainSampler
from playground.checkpoints.preemption import EXIT_PREEMPTED
from tests.conftest import HANG
from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, checkpoint_opts, kill_group)


LOGGED_INPUT = '''
"""The synthetic data, noting every training or test sample it decodes in $PLAYGROUND_TEST_DECODE_LOG."""
import os
from components.inputs import synthetic_input as _synthetic

additional_definitions = _synthetic.additional_definitions


class _Logged:
    def __init__(self, split, name):
        self.split, self.name = split, name

    def __len__(self):
        return len(self.split)

    def __getitem__(self, index):            # the forward pass probing the input shape: not a decode
        return self.split[index]

    def get_sample(self, index, data_pass):
        with open(os.environ["PLAYGROUND_TEST_DECODE_LOG"], "a") as log:
            log.write(f"{self.name} {data_pass} {index}\\n")
        return self.split[index]


def get_input_dataset(opts):
    i = opts["input"]
    return {"train": _Logged(_synthetic.make_split(opts, i["synthetic_train_size"], salt=2), "train"),
            "test": _Logged(_synthetic.make_split(opts, i["synthetic_test_size"], salt=3), "test")}


def gen_input_builder_fun(self, model, dataset, is_train):
    return dataset
'''


def decoded(log) -> list[tuple[int, int]]:
    """(pass, index) of each training sample decoded, in the order the log got them."""
    lines = log.read_text().splitlines() if log.exists() else []
    return [(int(p), int(i)) for kind, p, i in map(str.split, lines) if kind == "train"]


@pytest.mark.slow
def test_a_resume_with_loader_workers_neither_repeats_nor_skips_nor_decodes_twice(tmp_path, uninterrupted):
    (tmp_path / "logged_input.py").write_text(LOGGED_INPUT)
    opts = checkpoint_opts()
    opts["input"].update(input_name_py="logged_input", decode_threads=2)
    run = RunFolder(tmp_path, "workers", opts, env={"PLAYGROUND_TEST_ITER_SLEEP": "0.03"})
    logs = [tmp_path / "decoded1.log", tmp_path / "decoded2.log"]
    process = run.start(env={"PLAYGROUND_TEST_DECODE_LOG": str(logs[0])})
    assert run.wait_for_training(process, 1), run.output()
    # Past the first record point (4 iterations), with batches prefetched beyond it; however slow the machine.
    deadline = time.monotonic() + HANG
    while not (run.dir / "metrics.jsonl").is_file() or not (run.dir / "metrics.jsonl").read_text().strip():
        assert time.monotonic() < deadline and process.poll() is None, run.output()
        time.sleep(0.05)
    # Every process of the job gets the signal, the loader workers too: they must not die of it.
    kill_group(process, signal.SIGTERM)
    assert process.wait(timeout=HANG) == EXIT_PREEMPTED, run.output()
    stopped_at = run.checkpoint()["global_iter"]
    code, output = run.run(env={"PLAYGROUND_TEST_DECODE_LOG": str(logs[1]), **UNHINDERED})
    assert code == 0, output

    assert_same_training_state(run.checkpoint(), uninterrupted(1).run.checkpoint())   # 0 workers there
    assert_same_records(run, uninterrupted(1).run)
    sampler = TrainSampler(200, 16, 1, 0, seed=opts["model_param"]["seed"], iterations_per_pass=None)
    order = [key for batch in range(48) for key in sampler.keys(batch)]
    before, after = order[: stopped_at * 16], order[stopped_at * 16:]
    first, second = decoded(logs[0]), decoded(logs[1])
    assert 1 < stopped_at < 48
    assert set(before) <= set(first)
    assert not set(before) & set(second), "the resumed run decoded samples trained on before the checkpoint"
    assert set(after) <= set(second)
    assert len(second) == len(set(second)), "the resumed run decoded a sample twice"


def ready_trainer(opts: dict, run_dir, with_critic: bool) -> "AnyExp":
    """A trainer of `opts` prepared as a run prepares it up to its first iteration (one CPU rank); with
    `with_critic`, a second network and optimizer beside the run's, as a trainer with two models has."""
    from playground.distribution.run_context import RunContext
    from playground.distribution.topology import topology_from
    from playground.options.loader import resolve_opts
    from playground.trainer.hook_list import build_hooks
    from playground.trainer.trainer_class import build_trainer_class

    resolved = resolve_opts([("test opts", opts)], check_devices=False)
    ctx = RunContext(run_dir=str(run_dir), topology=topology_from(resolved.opts), local_rank=0,
                     meter_classes={name: c.meter_class() for name, c in resolved.meters.items()})
    base = build_trainer_class(resolved)

    class TwoNetworks(base):
        def prep_data_parallel_models(self):
            super().prep_data_parallel_models()
            self.critic = torch.nn.Linear(10, 1)
            self.critic_optimizer = torch.optim.SGD(self.critic.parameters(), lr=0.1, momentum=0.9)

        def networks(self):
            return {**super().networks(), "critic": self.critic}

        def optimizers(self):
            return {**super().optimizers(), "critic": self.critic_optimizer}

    trainer = (TwoNetworks if with_critic else base)(resolved.opts, ctx)
    trainer.get_model_input_fun()
    trainer.init_model()
    trainer.init_metrics()
    trainer.prep_data_parallel_models()
    trainer.hooks = build_hooks(trainer)
    return trainer


def train_a_step(trainer) -> None:
    """One optimizer step of every network (so every optimizer has momentum state)."""
    inputs, labels = trainer.train_model.batches.next()
    trainer.train_model.loss_fn(trainer.train_model.net(inputs), labels).backward()
    trainer.critic(torch.randn(4, 10)).sum().backward()
    for optimizer in trainer.optimizers().values():
        optimizer.step()
    trainer.global_iter += 1


def test_a_trainer_with_two_networks_and_two_optimizers_round_trips_through_a_checkpoint_file(tmp_path):
    from playground.checkpoints.files import FORMAT, VERSION, load_state, save_state
    from tests.conftest import tiny_opts

    opts = tiny_opts(model={"forward_pass_py": "mlp_forward"}, model_param={"mlp_hidden": [16]})
    torch.manual_seed(1)
    trained = ready_trainer(opts, tmp_path / "a", with_critic=True)
    train_a_step(trained)
    path = str(tmp_path / "two.pt")
    save_state(path, {"format": FORMAT, "version": VERSION, **trained.state_dict(1, 0),
                      "ranks": [trained.rank_state_dict()]})
    saved = load_state(path)                                         # weights_only=True
    assert set(saved["models"]) == {"model", "critic"} and set(saved["optimizers"]) == {"optimizer", "critic"}
    assert saved["model"] is saved["models"]["model"]                # the first layout's name, stored once

    torch.manual_seed(2)                                             # other initial weights
    fresh = ready_trainer(opts, tmp_path / "b", with_critic=True)
    assert not torch.equal(fresh.critic.weight, trained.critic.weight)
    fresh.load_state_dict(saved)
    for name, network in trained.networks().items():
        for key, value in network.state_dict().items():
            assert torch.equal(fresh.networks()[name].state_dict()[key], value), f"{name}.{key}"
    for name, optimizer in trained.optimizers().items():
        mine = fresh.optimizers()[name].state_dict()
        assert mine["param_groups"] == optimizer.state_dict()["param_groups"]
        for index, state in optimizer.state_dict()["state"].items():
            assert torch.equal(mine["state"][index]["momentum_buffer"], state["momentum_buffer"]), name
    assert (fresh.epoch, fresh.start_epoch_iter, fresh.global_iter) == (1, 0, 1)


def test_a_checkpoint_without_the_second_network_does_not_fit_a_trainer_that_has_one(tmp_path):
    from tests.conftest import tiny_opts

    opts = tiny_opts(model={"forward_pass_py": "mlp_forward"}, model_param={"mlp_hidden": [16]})
    single = ready_trainer(opts, tmp_path / "a", with_critic=False)
    state = {**single.state_dict(1, 0), "ranks": [single.rank_state_dict()]}
    two = ready_trainer(opts, tmp_path / "b", with_critic=True)
    with pytest.raises(RuntimeError, match="does not fit this network"):
        two.load_state_dict(state)
