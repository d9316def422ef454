"""What a checkpoint carries for exact resume (playground/checkpoints/train_state.py): every RNG, the copy taken while
training goes on, and each rank's data position (a resumed run neither repeats, skips nor re-decodes samples,
also with DataLoader workers)."""
from __future__ import annotations

import random
import signal
import time

import numpy as np
import pytest
import torch

from playground.data.batch_stream import TrainSampler
from playground.checkpoints.preemption import EXIT_PREEMPTED
from playground.checkpoints.train_state import Snapshot, rng_state, set_rng_state
from tests.conftest import HANG
from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, checkpoint_opts, kill_group)


def draws() -> tuple:
    return random.random(), float(np.random.rand()), np.random.standard_normal(), torch.rand(3).tolist()


def test_every_random_generator_continues_where_it_was_captured():
    np.random.standard_normal()                      # leave numpy with a cached gaussian, part of its state
    state = rng_state(torch.device("cpu"))
    expected = draws()
    draws()
    set_rng_state(state, torch.device("cpu"))
    assert draws() == expected


@pytest.mark.gpu
def test_the_cuda_generator_continues_where_it_was_captured():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    device = torch.device("cuda", 0)
    state = rng_state(device)
    expected = torch.rand(4, device=device)
    torch.rand(4, device=device)
    set_rng_state(state, device)
    assert torch.equal(torch.rand(4, device=device), expected)


def test_a_snapshot_is_a_copy_that_training_cannot_change_and_reuses_its_buffers():
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(1, 4)).sum().backward()
    optimizer.step()
    snapshot = Snapshot()
    first = snapshot.copy({"model": model.state_dict(), "optimizer": optimizer.state_dict()})
    kept = {k: v.clone() for k, v in first["model"].items()}
    with torch.no_grad():
        model.weight.add_(1.0)                        # training goes on while the copy is being written
    assert all(torch.equal(first["model"][k], kept[k]) for k in kept)
    second = snapshot.copy({"model": model.state_dict(), "optimizer": optimizer.state_dict()})
    assert second["model"]["weight"].data_ptr() == first["model"]["weight"].data_ptr()
    assert torch.equal(second["model"]["weight"], model.weight)


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
