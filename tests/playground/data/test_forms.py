"""Data in any common form: numpy/tensor tuples, named inputs, DataLoaders, iterable datasets
(playground/data/forms.py, iterable_shards.py, form_check.py, as batch_stream.py uses them)."""
from __future__ import annotations

import itertools
import json
import sys
import textwrap

import pytest

from playground.api import run
from playground.cli import main as playground_main
from playground.data.iterable_shards import RankShard
from tests.conftest import tiny_opts

INPUT = '''
import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset, SubsetRandomSampler, TensorDataset
from torch.utils.data.dataloader import default_collate

additional_definitions = [{"name": "input.form", "type": str, "default": "numpy"}]
COLLATED = []

def arrays(n, seed):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 6)                       # float64: becomes float32
    return x, (x[:, 0] + 0.3 * x[:, 1] > 0).astype(np.int32)

class Stream(IterableDataset):
    def __init__(self, x, y, sized):
        self.x, self.y, self.sized = torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.int64), sized
    def __iter__(self):
        return iter(zip(self.x, self.y))
    def __len__(self):
        if not self.sized:
            raise TypeError("no length")
        return len(self.y)

def collate(samples):
    COLLATED.append(len(samples))
    return default_collate(samples)

def get_input_dataset(opts):
    form = opts["input"]["form"]
    (x, y), (tx, ty) = arrays(96, 0), arrays(41, 1)
    if form == "numpy":
        return {"train": (x, y), "test": (tx, ty)}
    if form == "tensor":
        return {"train": (torch.tensor(x), torch.tensor(y)), "test": (torch.tensor(tx), torch.tensor(ty))}
    if form == "named":
        return {"train": ({"a": x[:, :3], "b": x[:, 3:]}, y), "test": ({"a": tx[:, :3], "b": tx[:, 3:]}, ty)}
    if form == "loader":
        train = TensorDataset(torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.int64))
        return {"train": DataLoader(train, batch_size=5, sampler=SubsetRandomSampler(range(50)), collate_fn=collate),
                "test": DataLoader(TensorDataset(torch.tensor(tx, dtype=torch.float32), torch.tensor(ty).long()))}
    if form == "iterable":
        return {"train": Stream(x, y, sized=False), "test": Stream(tx, ty, sized=True)}
    return {"train": [{"x": 1}, {"x": 2}], "test": None}

def gen_input_builder_fun(self, model, dataset, is_train):
    return dataset
'''
FORWARD = '''
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(6, 2)
    def forward(self, x):
        if isinstance(x, dict):
            x = torch.cat([x["a"], x["b"]], dim=1)
        return self.linear(x)

def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    return Net(), nn.CrossEntropyLoss()
'''


@pytest.fixture
def form_modules(tmp_path, monkeypatch):
    folder = tmp_path / "usercode"
    folder.mkdir()
    (folder / "forms_input.py").write_text(INPUT)
    (folder / "forms_forward.py").write_text(FORWARD)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", str(folder))   # spawned ranks import them too
    for name in ("forms_input", "forms_forward"):
        sys.modules.pop(name, None)


def form_opts(form: str, ranks: int = 1, lr: float = 0.1) -> dict:
    opts = tiny_opts(input={"input_name_py": "forms_input", "form": form, "num_classes": 2},
                     model={"forward_pass_py": "forms_forward"}, model_param={"base_learning_rate": lr},
                     epoch_iter={"num_train_sample_per_epoch": 48, "batch_per_device": 8 // ranks, "num_epochs": 2,
                                 "num_train_iteration_per_test": 3, "num_test_iter": 1, "num_test_sample": 0})
    opts["output"].update(plots=[], progress="none")
    opts["distributed"]["num_cpus"] = ranks
    return opts


def epoch_records(run_dir) -> list[dict]:
    lines = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [r for r in lines if r["kind"] == "epoch"]


@pytest.mark.parametrize("form", ["numpy", "tensor", "named", "loader", "iterable"])
def test_each_form_of_data_trains(tmp_path, form_modules, form):
    run(form_opts(form), run_dir=str(tmp_path / "run"))
    records = epoch_records(tmp_path / "run")
    assert len(records) == 2 and all(0.0 <= r["test_accuracy_top1"] <= 1.0 for r in records)
    assert (tmp_path / "run" / "checkpoints" / "model_checkpoint_epoch2.pt").exists()
    log = (tmp_path / "run" / "train.log").read_text()
    if form == "loader":
        assert sys.modules["forms_input"].COLLATED, "the DataLoader's collate function was not used"
        assert set(sys.modules["forms_input"].COLLATED) == {8}     # batch_per_device, not the loader's 5
        assert "has its own sampler (SubsetRandomSampler)" in log
    if form == "iterable":
        assert "exact resume" in log


def test_two_ranks_read_an_iterable_dataset_and_measure_it_as_one_rank_does(tmp_path, form_modules):
    # Map-style data (numpy tuples included) is sharded by ShardSampler, tested in test_batch_stream.py.
    # A learning rate too small to move any float32 weight: both runs evaluate the same network on 41 test
    # samples, which 2 ranks split 21 + 20; a padded duplicate would change the accuracy.
    one = epoch_records(_trained(tmp_path / "one", form_opts("iterable", ranks=1, lr=1e-30)))
    two = epoch_records(_trained(tmp_path / "two", form_opts("iterable", ranks=2, lr=1e-30)))
    assert [r["test_accuracy_top1"] for r in one] == [r["test_accuracy_top1"] for r in two]
    assert [r["test_loss"] for r in one] == pytest.approx([r["test_loss"] for r in two], rel=1e-6)


def _trained(run_dir, opts):
    run(opts, run_dir=str(run_dir))
    return run_dir


def test_data_the_stream_cannot_batch_is_refused_before_launch(tmp_path, form_modules, opts_file, capsys):
    code = playground_main(["run", "--parameters-file", opts_file(form_opts("list")), "--run-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2
    assert "input component forms_input: get_input_dataset(opts) gives data it cannot batch" in err
    assert "the training data is a list of 2 items (dict, dict)" in err and "Traceback" not in err
    assert not (tmp_path / "r" / "train.log").exists()


def test_an_iterable_dataset_is_split_across_ranks_and_resumes_by_count():
    items = list(range(23))
    one = list(RankShard(items, world_size=1, rank=0, batch=4, endless=False))
    ranks = [list(RankShard(items, world_size=2, rank=r, batch=2, endless=False)) for r in range(2)]
    assert sorted(ranks[0] + ranks[1]) == one == items and not set(ranks[0]) & set(ranks[1])
    resumed = RankShard(items, world_size=2, rank=1, batch=2, endless=True)
    resumed.start_batch = 3
    endless = RankShard(items, world_size=2, rank=1, batch=2, endless=True)
    assert list(itertools.islice(resumed, 20)) == list(itertools.islice(endless, 26))[6:]
    assert len(RankShard(items, 2, 0, 2, endless=False)) == 12 and len(RankShard(items, 2, 1, 2, False, limit=9)) == 4


def test_loader_workers_of_an_iterable_shard_deliver_the_batches_of_one_process():
    from torch.utils.data import DataLoader
    items = list(range(37))
    alone = [b.tolist() for b in DataLoader(RankShard(items, 2, 1, 3, endless=False), batch_size=3)]
    workers = [b.tolist() for b in DataLoader(RankShard(items, 2, 1, 3, endless=False), batch_size=3, num_workers=2,
                                              multiprocessing_context="fork")]
    assert workers == alone and sum(alone, []) == items[1::2]
