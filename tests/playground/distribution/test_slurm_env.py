"""What a Slurm job's environment tells a process (playground/distribution/slurm_env.py), from made-up environments;
host lists checked against Slurm's own `scontrol show hostnames`."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from playground.distribution.slurm_env import hostnames, rendezvous_defaults, step
from playground.distribution.topology import topology_from
from playground.options.layers import OptsError
from playground.options.loader import resolve_opts
from tests.conftest import tiny_opts

FORMS = ["n[1-3,5],m7", "n[01-03]", "n[8-11]", "a[1-2]b[3-4]", "n[009-011],n[1]", "x[1-2],x1", "n[3,1-2]", "node7",
         "gpu[1-2],cpu[07-08]"]


def test_host_lists_expand_as_scontrol_show_hostnames_does(tmp_path):
    assert hostnames("n[1-3,5],m7") == ["n1", "n2", "n3", "n5", "m7"]
    if shutil.which("scontrol") is None:
        pytest.skip("no scontrol to compare with (Debian's slurm-wlm; .ci/run installs it)")
    conf = tmp_path / "slurm.conf"   # scontrol reads a configuration even to expand a list
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\n")
    for form in FORMS:
        done = subprocess.run(["scontrol", "show", "hostnames", form], env=dict(os.environ, SLURM_CONF=str(conf)),
                              capture_output=True, text=True, timeout=30, check=True)
        assert hostnames(form) == done.stdout.split(), form


def test_inside_a_job_the_env_rendezvous_meets_at_the_steps_first_node_on_a_port_of_the_job():
    env = {"SLURM_JOB_ID": "123456", "SLURM_JOB_NODELIST": "c[7-9]", "SLURM_STEP_NODELIST": "c[8-9]"}
    assert rendezvous_defaults(env) == {"MASTER_ADDR": "c8", "MASTER_PORT": "18456"}
    assert rendezvous_defaults({**env, "MASTER_ADDR": "given", "MASTER_PORT": "2"}) == {}
    assert rendezvous_defaults({"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "n1"}) == {"MASTER_ADDR": "n1",
                                                                                       "MASTER_PORT": "15007"}
    assert rendezvous_defaults({}) == {}


def test_env_rendezvous_on_several_hosts_is_accepted_inside_a_job_without_master_addr(monkeypatch):
    from components.rendezvous.rendezvous_env import validate_opts
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    opts = tiny_opts(distributed={"num_shards": 2})
    assert "MASTER_ADDR and MASTER_PORT" in validate_opts(opts)[0]
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "n[1-2]")
    assert validate_opts(opts) == []


def resolved(**distributed) -> dict:
    raw = tiny_opts(distributed=distributed)
    raw["model"]["rendezvous_py"] = "rendezvous_tcp"   # several hosts on rendezvous_env need MASTER_ADDR set
    return resolve_opts([("test", raw)], check_devices=False).opts


def srun_env(tasks: int, per_node: str, proc: int = 0, node: int = 0) -> dict:
    return {"SLURM_STEP_ID": "0", "SLURM_NTASKS": str(tasks), "SLURM_PROCID": str(proc), "SLURM_LOCALID": "0",
            "SLURM_NODEID": str(node), "SLURM_STEP_TASKS_PER_NODE": per_node}


def test_a_step_whose_task_count_fits_no_layout_is_refused_naming_both():
    with pytest.raises(OptsError) as caught:   # srun -n2 with one-process opts would train twice into one folder
        topology_from(resolved(), env=srun_env(2, "2"))
    assert "Slurm started 2 tasks (SLURM_NTASKS=2, SLURM_STEP_TASKS_PER_NODE=2)" in str(caught.value)
    assert "num_shards 1 x distributed.num_cpus 1 = 1 rank(s)" in str(caught.value)
    assert "srun -n 1" in str(caught.value)
    with pytest.raises(OptsError, match="num_shards 2 x distributed.num_cpus 2 = 4 rank"):
        topology_from(resolved(num_shards=2, num_cpus=2), env=srun_env(3, "2,1"))


def test_one_task_per_host_must_be_alone_on_its_node():
    with pytest.raises(OptsError, match="Slurm started 2 tasks on one node .*--ntasks-per-node=1"):
        topology_from(resolved(num_shards=2, num_cpus=2), env=srun_env(2, "2"))
    fits = topology_from(resolved(num_shards=2, num_cpus=2), env=srun_env(2, "1(x2)", proc=1, node=1))
    assert (fits.launcher, fits.shard_id, fits.world_size) == ("spawn", 1, 4)


def test_a_single_task_a_batch_shell_and_a_sweep_trial_follow_the_opts():
    assert topology_from(resolved(num_cpus=2), env=srun_env(1, "1")).launcher == "spawn"
    assert step({**srun_env(2, "2"), "SLURM_STEP_ID": "4294967294"}) is None
    # an agent started by srun -n2: its trials are no tasks of that step
    assert topology_from(resolved(), env={**srun_env(2, "2"), "PLAYGROUND_ATTEMPT": "1"}).launcher == "single"
