"""Determined's DistributedContext is one class (playground/determined/distributed_context.py): the Core API's
`det.core.DistributedContext` and a Trial's `context.distributed`. A Trial's reads its ranks from torchrun's
variables through playground/distribution/launcher_vars.py (rank 0 of 1 without them; a malformed one is one
OptsError naming it) and moves objects over the run's process group, node-local operations included (4 real
gloo ranks, 2 nodes of 2)."""
from __future__ import annotations

import pytest
import torch.distributed as dist
import torch.multiprocessing as mp

from playground.compat.determined import core
from playground.determined.distributed_context import DistributedContext
from playground.determined.trials.context import PyTorchTrialContext
from playground.options.layers import OptsError
from tests.determined.ranks import free_port


def test_the_core_api_and_a_trial_share_one_context_class():
    assert core.DistributedContext is DistributedContext
    assert isinstance(PyTorchTrialContext({}, {}).distributed, DistributedContext)


def test_a_trial_started_alone_is_rank_0_of_1_and_its_collectives_need_no_process_group():
    context = DistributedContext.for_trial({})
    assert (context.rank, context.size, context.local_rank, context.local_size, context.cross_rank,
            context.cross_size) == (0, 1, 0, 1, 0, 1)
    assert context.allgather("a") == ["a"] and context.gather("a") == ["a"] and context.broadcast("a") == "a"
    assert context.allgather_local("a") == ["a"] and context.broadcast_local("a") == "a"


def test_a_trial_reads_torchrun_s_variables_and_names_a_malformed_one():
    env = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "1",
           "GROUP_WORLD_SIZE": "2"}
    context = DistributedContext.for_trial(env)
    assert (context.get_rank(), context.get_size(), context.get_local_rank(), context.get_local_size(),
            context.get_cross_rank(), context.get_cross_size(), context.get_num_agents()) == (3, 4, 1, 2, 1, 2, 2)
    with pytest.raises(OptsError, match="LOCAL_RANK='one'"):
        DistributedContext.for_trial({**env, "LOCAL_RANK": "one"})


def _rank(rank: int, port: int, out: dict) -> None:
    env = {"RANK": str(rank), "WORLD_SIZE": "4", "LOCAL_RANK": str(rank % 2), "LOCAL_WORLD_SIZE": "2"}
    context = DistributedContext.for_trial(env)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=4)
    try:
        out[rank] = {"allgather": context.allgather({"r": rank}), "gather": context.gather(rank * 10),
                     "broadcast": context.broadcast("chief" if rank == 0 else None),
                     "allgather_local": context.allgather_local(rank), "gather_local": context.gather_local(rank),
                     "broadcast_local": context.broadcast_local(f"from {rank}"), "node": context.cross_rank}
    finally:
        dist.destroy_process_group()


def test_a_trial_s_collectives_go_over_the_process_group_and_keep_to_the_node_for_the_local_ones():
    with mp.Manager() as manager:
        out = manager.dict()
        mp.start_processes(_rank, args=(free_port(), out), nprocs=4, join=True, start_method="fork")
        seen = dict(out)
    for rank in range(4):
        node, chief = rank // 2, rank - rank % 2        # ranks 0 and 1 are node 0, 2 and 3 node 1
        assert seen[rank]["node"] == node
        assert seen[rank]["allgather"] == [{"r": r} for r in range(4)]
        assert seen[rank]["gather"] == ([0, 10, 20, 30] if rank == 0 else None)
        assert seen[rank]["broadcast"] == "chief"
        assert seen[rank]["allgather_local"] == [chief, chief + 1]
        assert seen[rank]["gather_local"] == ([chief, chief + 1] if rank == chief else None)
        assert seen[rank]["broadcast_local"] == f"from {chief}"
