"""Who starts the ranks and which rank this process is, from opts and the environment (playground/distribution/topology.py)."""
from __future__ import annotations

import re

import pytest

from playground.distribution.topology import topology_from
from playground.options.layers import OptsError
from playground.options.loader import resolve_opts
from tests.conftest import run_cli, tiny_opts


def opts(**distributed) -> dict:
    raw = tiny_opts()
    raw["distributed"].update(distributed)
    raw["epoch_iter"]["num_train_sample_per_epoch"] = 1024
    raw["model"]["rendezvous_py"] = "rendezvous_tcp"   # several hosts on rendezvous_env need MASTER_ADDR set
    return resolve_opts([("test", raw)], check_devices=False).opts


def test_a_single_process_needs_no_backend():
    t = topology_from(opts(), env={})
    assert (t.world_size, t.launcher, t.backend, t.spawns) == (1, "single", None, False)


def test_cpu_processes_are_spawned_and_use_gloo():
    t = topology_from(opts(num_cpus=3), env={})
    assert (t.world_size, t.launcher, t.backend, t.spawns, t.device_name(2)) == (3, "spawn", "gloo", True, "cpu")


def test_gpu_ranks_count_from_first_gpu_id_and_use_nccl_unless_told_otherwise():
    t = topology_from(opts(num_gpus=2, first_gpu_id=4), env={})
    assert (t.device_type, t.backend, t.device_name(0), t.device_name(1)) == ("cuda", "nccl", "cuda:4", "cuda:5")
    raw = opts(num_gpus=2)
    raw["model_param"]["cuda_nccl"] = False
    assert topology_from(raw, env={}).backend == "gloo"


def test_global_rank_is_shard_times_devices_plus_local_rank():
    t = topology_from(opts(num_shards=3, shard_id=2, num_cpus=4), env={})
    assert t.world_size == 12
    assert [t.global_rank(local) for local in range(4)] == [8, 9, 10, 11]


def test_torchrun_gives_the_ranks_and_nothing_is_spawned():
    env = {"TORCHELASTIC_RUN_ID": "x", "RANK": "5", "LOCAL_RANK": "1", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4"}
    t = topology_from(opts(num_cpus=1), env=env)
    assert (t.launcher, t.spawns, t.world_size, t.devices_per_host, t.num_shards, t.shard_id) == (
        "torchrun", False, 8, 4, 2, 1)
    assert (t.given_rank, t.given_local_rank, t.global_rank(t.given_local_rank)) == (5, 1, 5)


def test_slurm_one_task_per_device_makes_each_task_a_rank():
    env = {"SLURM_STEP_ID": "0", "SLURM_NTASKS": "4", "SLURM_PROCID": "3", "SLURM_LOCALID": "1", "SLURM_NODEID": "1"}
    t = topology_from(opts(num_shards=2, num_cpus=2), env=env)
    assert (t.launcher, t.spawns, t.shard_id, t.given_rank, t.global_rank(t.given_local_rank)) == (
        "slurm", False, 1, 3, 3)


def test_slurm_one_task_per_host_makes_each_task_a_shard_that_spawns():
    env = {"SLURM_STEP_ID": "0", "SLURM_NTASKS": "2", "SLURM_PROCID": "1", "SLURM_LOCALID": "0", "SLURM_NODEID": "1"}
    t = topology_from(opts(num_shards=2, num_cpus=2), env=env)
    assert (t.launcher, t.spawns, t.shard_id, t.world_size) == ("spawn", True, 1, 4)


def test_the_slurm_batch_script_itself_is_not_a_step():
    env = {"SLURM_STEP_ID": "4294967294", "SLURM_NTASKS": "2", "SLURM_PROCID": "0"}
    t = topology_from(opts(num_shards=1, num_cpus=2), env=env)
    assert (t.launcher, t.shard_id) == ("spawn", 0)


def _slurm_tasks(layout: list[tuple[int, int]], gpus: int = 2, shards: int = 2) -> list:
    """The topology each task of an srun step sees; layout[procid] = (node id, local id)."""
    out = []
    for proc_id, (node, local) in enumerate(layout):
        env = {"SLURM_STEP_ID": "0", "SLURM_NTASKS": str(len(layout)), "SLURM_PROCID": str(proc_id),
               "SLURM_LOCALID": str(local), "SLURM_NODEID": str(node)}
        out.append(topology_from(opts(num_shards=shards, num_gpus=gpus, num_cpus=1), env=env))
    return out


def test_slurm_block_placement_gives_each_task_its_procid_as_rank_and_localid_as_device():
    tasks = _slurm_tasks([(0, 0), (0, 1), (1, 0), (1, 1)])
    assert [t.global_rank(t.given_local_rank) for t in tasks] == [0, 1, 2, 3]
    assert [t.device_name(t.given_local_rank) for t in tasks] == ["cuda:0", "cuda:1", "cuda:0", "cuda:1"]


def test_slurm_cyclic_placement_gives_distinct_ranks_and_each_node_distinct_devices():
    tasks = _slurm_tasks([(0, 0), (1, 0), (0, 1), (1, 1)])
    assert [t.global_rank(t.given_local_rank) for t in tasks] == [0, 1, 2, 3]
    assert [t.device_name(t.given_local_rank) for t in tasks] == ["cuda:0", "cuda:0", "cuda:1", "cuda:1"]


def test_slurm_several_shards_on_one_node_use_distinct_ranks_and_devices():
    tasks = _slurm_tasks([(0, 0), (0, 1), (0, 2), (0, 3)], gpus=1, shards=4)
    assert [t.global_rank(t.given_local_rank) for t in tasks] == [0, 1, 2, 3]
    assert len({t.device_name(t.given_local_rank) for t in tasks}) == 4
    assert all(t.world_size == 4 and not t.spawns for t in tasks)


@pytest.mark.parametrize("env, named", [
    ({"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "two"}, "WORLD_SIZE='two'"),
    ({"RANK": "-1", "LOCAL_RANK": "0", "WORLD_SIZE": "2"}, "RANK='-1'"),
    ({"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "0"}, "LOCAL_WORLD_SIZE='0'"),
    ({"RANK": "3", "LOCAL_RANK": "0", "WORLD_SIZE": "2"}, "RANK=3 and WORLD_SIZE=2"),
    ({"SLURM_STEP_ID": "0", "SLURM_NTASKS": "2", "SLURM_PROCID": "first"}, "SLURM_PROCID='first'"),
    ({"SLURM_STEP_ID": "0", "SLURM_NTASKS": "", "SLURM_PROCID": "0"}, "SLURM_NTASKS=''"),
])
def test_a_malformed_launcher_variable_is_an_opts_error_naming_it(env, named):
    with pytest.raises(OptsError, match=re.escape(named)):
        topology_from(opts(num_cpus=1), env=env)


def test_a_run_with_a_malformed_launcher_variable_left_in_the_shell_exits_2_before_making_its_folder(tmp_path,
                                                                                                     opts_file):
    run_dir = tmp_path / "run"
    result = run_cli("--parameters-file", opts_file(tiny_opts()), "--run-dir", str(run_dir),
                     env={"WORLD_SIZE": "2 ", "RANK": "0", "LOCAL_RANK": "zero"})
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "LOCAL_RANK='zero'" in lines[0] and "unset LOCAL_RANK" in lines[0], result.stderr
    assert not run_dir.exists()
