"""The run id every host agrees on, and one fresh meeting place per attempt (playground/distribution/rendezvous.py)."""
from __future__ import annotations

import threading

import pytest
import torch.distributed as dist

from playground.options.loader import resolve_opts
from playground.distribution.rendezvous import RendezvousError, fresh_attempt_store, run_id
from tests.conftest import tiny_opts


def resolved(**sections) -> dict:
    opts = tiny_opts(**sections)
    opts["distributed"]["num_shards"] = 2
    opts["model"]["rendezvous_py"] = "rendezvous_tcp"   # several hosts on rendezvous_env need MASTER_ADDR set
    return resolve_opts([("test", opts)]).opts


def test_the_run_id_is_the_same_on_every_shard_and_prefers_what_the_user_or_scheduler_says():
    shard0, shard1 = resolved(), resolved(distributed={"shard_id": 1})
    assert run_id(shard0, env={}) == run_id(shard1, env={})
    other = resolved(epoch_iter={"num_epochs": 7})
    assert run_id(other, env={}) != run_id(shard0, env={})
    assert run_id(shard0, env={"SLURM_JOB_ID": "4242"}) == "slurm-4242"
    shard0["distributed"]["run_id"] = "my run/1"
    assert run_id(shard0, env={"SLURM_JOB_ID": "4242"}) == "my_run_1"


def _join(path: str, world_size: int, timeout_s: float = 10.0) -> list:
    """Every rank of one attempt joins through its own FileStore handle, as separate processes would."""
    results: list = [None] * world_size

    def rank(index: int) -> None:
        try:
            results[index] = fresh_attempt_store(dist.FileStore(path, world_size), world_size, timeout_s, path)
        except Exception as err:  # reported by the caller
            results[index] = err

    threads = [threading.Thread(target=rank, args=(i,)) for i in range(world_size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_an_attempt_after_a_killed_one_never_sees_its_keys(tmp_path):
    path = str(tmp_path / "run.store")
    first = _join(path, 2)
    first[0].set("progress", "from the killed attempt")      # what a dead attempt leaves in the file
    second = _join(path, 2)
    assert all(isinstance(s, dist.Store) for s in second)
    assert not second[0].check(["progress"])
    second[0].set("progress", "new")
    assert second[1].get("progress") == b"new"


def test_a_file_left_by_an_attempt_killed_while_joining_fails_with_its_path(tmp_path):
    path = str(tmp_path / "half.store")
    dist.FileStore(path, 2).add("playground/joins", 1)          # one rank joined, then the attempt died
    results = _join(path, 2, timeout_s=2.0)
    errors = [r for r in results if isinstance(r, RendezvousError)]
    assert errors, results
    assert path in str(errors[0]) and "delete" in str(errors[0])
