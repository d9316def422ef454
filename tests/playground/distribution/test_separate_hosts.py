"""Training across two real network hosts (tests/separate_hosts.py: network namespaces, a veth pair, own host
names): the ranks meet over TCP at rank 0's host name and train as they would on one host."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, checkpoint_opts)

pytestmark = [pytest.mark.slow, pytest.mark.serial]   # alone, after the parallel tests (Makefile)


def on(hosts, host: str, argv: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(hosts.command(host, argv), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, stdin=subprocess.DEVNULL)


def test_the_hosts_have_their_own_names_and_reach_only_each_other(two_hosts):
    probe = ("import socket, sys; print(socket.gethostname(), socket.gethostbyname(sys.argv[1]));"
             "s = socket.socket(); s.settimeout(2); print(s.connect_ex(('192.0.2.1', 80)) != 0)")
    seen = [subprocess.run(two_hosts.command(host, [sys.executable, "-c", probe, two_hosts.name("a")]),
                           capture_output=True, text=True, timeout=60, check=True).stdout.split()
            for host in ("a", "b")]
    assert seen == [["pg-host-a", "10.251.0.1", "True"], ["pg-host-b", "10.251.0.1", "True"]]


def test_two_shards_on_two_hosts_over_tcp_end_bitwise_equal_to_two_ranks_on_one_host(two_hosts, tmp_path):
    # one thread per rank in both (the thread count changes a sum's last bits)
    whole = checkpoint_opts(ranks=2)
    whole["distributed"]["num_intra_threads"] = 1
    split = checkpoint_opts(ranks=2)
    split["model"]["rendezvous_py"] = "rendezvous_tcp"
    split["distributed"].update(num_shards=2, num_cpus=1, num_intra_threads=1, master_addr=two_hosts.name("a"),
                                master_port=29500)
    one_host = RunFolder(tmp_path, "one_host", whole, env=UNHINDERED)
    two = RunFolder(tmp_path, "two_hosts", split, env=UNHINDERED)
    started = [on(two_hosts, host, [sys.executable, str(REPO / "AnyExpOnTerm.py"), "--parameters-file",
                                    str(two.opts_path), "--run-dir", str(two.dir), "--shard-id", str(shard)], two.env)
               for shard, host in enumerate(("a", "b"))]
    code, output = one_host.run()
    assert code == 0, output
    for process in started:
        output, _ = process.communicate(timeout=300)
        assert process.returncode == 0, output
    assert sorted(two.rank_pids()) == [0, 1]
    assert_same_training_state(two.checkpoint(), one_host.checkpoint())
    assert_same_records(two, one_host)
