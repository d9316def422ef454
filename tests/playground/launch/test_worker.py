"""One rank's set-up (playground/launch/worker.py): threads per process from the opts or CANDLE's variables."""
from __future__ import annotations

from playground.options.loader import resolve_opts
from playground.distribution.topology import topology_from
from playground.launch.worker import thread_counts
from tests.conftest import tiny_opts


def resolved(**distributed) -> dict:
    return resolve_opts([("test", tiny_opts(distributed=distributed))], check_devices=False).opts


def test_thread_counts_come_from_the_opts_then_candles_variables_then_the_shared_cores(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    four_ranks = resolved(num_cpus=4)
    assert thread_counts(four_ranks, topology_from(four_ranks, env={}), env={}) == (2, None)
    env = {"NUM_INTRA_THREADS": "3", "NUM_INTER_THREADS": "2"}
    assert thread_counts(four_ranks, topology_from(four_ranks, env={}), env=env) == (3, 2)
    given = resolved(num_cpus=4, num_intra_threads=5, num_inter_threads=1)
    assert thread_counts(given, topology_from(given, env={}), env=env) == (5, 1)
    one = resolved()
    assert thread_counts(one, topology_from(one, env={}), env={}) == (None, None)


def test_a_process_applies_its_intra_op_thread_count():
    import torch

    from playground.launch.worker import _configure_torch
    opts = resolved(num_intra_threads=3)
    before = torch.get_num_threads()
    try:
        _configure_torch(opts, topology_from(opts, env={}))
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
