"""Sample order, sharding and resumable positions (playground/data/batch_stream.py)."""
from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from playground.data.batch_stream import ShardSampler, TrainSampler
from tests.conftest import HANG, REPO, run_cli


def take(sampler, count):
    return list(itertools.islice(iter(sampler), count))


def test_two_ranks_of_b_see_exactly_one_rank_of_2b():
    one = TrainSampler(50, batch_per_device=8, world_size=1, rank=0, seed=3, iterations_per_pass=None)
    ranks = [TrainSampler(50, batch_per_device=4, world_size=2, rank=r, seed=3, iterations_per_pass=None)
             for r in range(2)]
    for global_batch in range(20):   # crosses several passes of 50 samples
        assert one.keys(global_batch) == ranks[0].keys(global_batch) + ranks[1].keys(global_batch)


def test_each_pass_is_a_permutation_and_passes_differ():
    sampler = TrainSampler(40, batch_per_device=5, world_size=1, rank=0, seed=0, iterations_per_pass=8)
    keys = take(sampler, 80)
    first, second = [i for p, i in keys[:40]], [i for p, i in keys[40:]]
    assert sorted(first) == sorted(second) == list(range(40))
    assert first != second
    assert {p for p, _ in keys[:40]} == {0} and {p for p, _ in keys[40:]} == {1}


def test_one_pass_epochs_drop_the_last_partial_batch_and_restart_the_pass():
    sampler = TrainSampler(10, batch_per_device=3, world_size=1, rank=0, seed=0, iterations_per_pass=3)
    keys = take(sampler, 18)
    assert len({i for _, i in keys[:9]}) == 9 and {p for p, _ in keys[9:]} == {1}


def test_starting_at_a_batch_continues_the_same_stream():
    full = TrainSampler(33, batch_per_device=4, world_size=3, rank=1, seed=9, iterations_per_pass=None)
    resumed = TrainSampler(33, batch_per_device=4, world_size=3, rank=1, seed=9, iterations_per_pass=None)
    resumed.start_batch = 7
    assert take(resumed, 40) == take(full, 7 * 4 + 40)[7 * 4:]


def test_test_shards_are_disjoint_and_cover_the_set_without_padding():
    for world in (1, 2, 3):
        shards = [[i for _, i in ShardSampler(10, world, r, batch=4, endless=False)] for r in range(world)]
        assert sorted(itertools.chain(*shards)) == list(range(10))
        assert all(not set(a) & set(b) for a, b in itertools.combinations(shards, 2))


def test_record_point_test_batches_cycle_through_the_shard():
    sampler = ShardSampler(5, world_size=2, rank=1, batch=2, endless=True)
    assert [i for _, i in take(sampler, 5)] == [1, 3, 1, 3, 1]
    sampler.start_batch = 1
    assert [i for _, i in take(sampler, 2)] == [1, 3]



UNCLOSED_STREAM = """
import torch
from components.inputs.synthetic_input import SyntheticDataset
from playground.data.batch_stream import build_train_stream
from playground.distribution.run_context import RunContext
from playground.distribution.topology import Topology
opts = {"epoch_iter": {"batch_per_device": 4, "num_train_sample_per_epoch": 0}, "model_param": {"seed": 1},
        "input": {"shuffle_train": True, "decode_threads": 2, "worker_start_method": "fork",
                  "reuse_batch_memory": True}}
ctx = RunContext(run_dir="unused", topology=Topology("cpu", 1, 1, 0, 0, None, "single"), local_rank=0)
stream = build_train_stream(SyntheticDataset(torch.randn(64, 3, 8, 8), torch.randint(0, 3, (64,))), opts, ctx, 4)
stream.next()
cycle = [stream]
cycle.append(cycle)          # kept alive to the end, as a trainer in a reference cycle would be
print("leaving without close()", flush=True)
"""


def test_a_stream_left_open_does_not_hang_the_exit():
    # Loader workers ignore SIGTERM (their rank checkpoints first), so multiprocessing's exit handler alone would
    # wait for them forever; the stream's own exit handler stops them first.
    proc = subprocess.run([sys.executable, "-c", UNCLOSED_STREAM], cwd=REPO, capture_output=True, text=True,
                          timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert "leaving without close()" in proc.stdout


def test_a_corrupt_record_read_by_a_loader_worker_ends_the_run_promptly_with_its_message_alone(tmp_path):
    from playground.data.records.record_format import ImageRecord, pack_record, record_key
    from tests.components.inputs.test_gfs_IN1k import image_opts
    from tests.image_lmdbs import corrupt_record, make_image_lmdb
    db = make_image_lmdb(tmp_path, classes=2, per_class=12)
    corrupt_record(db, record_key(3), pack_record(ImageRecord(label=0, payload=b"\x89PNG\r\n\x1a\n cut")))
    (tmp_path / "opts.json").write_text(json.dumps({"opts": image_opts(str(db), decode_threads=2)}))
    proc = run_cli("--parameters-file", str(tmp_path / "opts.json"), "--run-dir", str(tmp_path / "run"), timeout=HANG)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (f"playground: error: {db}: record '0000000003': OpenCV could not "
                                                     "decode the 12-byte image (not a JPEG, PNG or other supported "
                                                     "image file, or truncated)")
    assert "Traceback" not in proc.stderr


def test_any_error_inside_a_loader_worker_comes_back_as_the_worker_raised_it(tmp_path):
    import torch
    from torch.utils.data import DataLoader

    from playground.data.batch_stream import BatchStream

    class Failing(torch.utils.data.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, index):
            if index == 5:
                raise KeyError(f"sample {index} is missing")
            return torch.zeros(2), 0
    stream = BatchStream(DataLoader(Failing(), batch_size=2, num_workers=1, persistent_workers=True),
                         TrainSamplerStub(), torch.device("cpu"))
    stream.next(), stream.next()
    with pytest.raises(KeyError) as caught:
        stream.next()
    assert str(caught.value) == "'sample 5 is missing'" and stream.loader is None   # workers stopped at once


class TrainSamplerStub:
    start_batch = 0
