"""A sweep on two real network hosts (tests/separate_hosts.py: namespaces with their own host names): one agent on
each. Host a's trial is held still until host b has finished its own trial and has nothing left to start; b stays
for a's trial. Then host a's processes are all killed at once. Host b cannot look up a pid on another host, so it
adopts host a's trial only once the lease's grace period has passed since a's last heartbeat, and the trial ends
bitwise equal to the same sweep run undisturbed on one host."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playground.cli import main
from playground.restarts.attempts import read_attempts
from playground.restarts.fence import claims, read_claim
from tests.playground.sweeps.agents.test_agent import _contract, _finish, _initialise, _states, _story, _wait_for

pytestmark = [pytest.mark.slow, pytest.mark.serial]   # alone, after the parallel tests (Makefile)

EPOCHS, GRACE = 6, 4


def _agent_on(hosts, host: str, sweep: Path, log: Path, started: list) -> subprocess.Popen:
    """`sweep agent` on `host`, as its own process group, its host id the host's name (no PLAYGROUND_HOST_ID)."""
    env = {k: v for k, v in os.environ.items() if k != "PLAYGROUND_HOST_ID"}
    argv = [sys.executable, "-m", "playground", "sweep", "agent", str(sweep), "--workers", "1", "--quiet"]
    with open(log, "ab") as out:
        started.append(subprocess.Popen(hosts.command(host, argv), env=env, stdout=out, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True))
    return started[-1]


def _tree(root: int) -> list[int]:
    """`root` and every process descended from it (read from /proc)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, grown = {root}, True
    while grown:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grown = bool(more)
    return sorted(tree)


def test_an_agent_on_another_host_adopts_a_dead_hosts_trial_after_the_grace_and_it_ends_bitwise_equal(
        two_hosts, write_spec, base_file, tmp_path, started):
    _contract(base_file, contract_epoch_seconds=0.3)
    space = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": -1, "count": 2},
             "epoch_iter.num_epochs": EPOCHS}
    spec = write_spec({"name": "grid"}, space, agents={"heartbeat_seconds": 0.5, "grace_seconds": GRACE})
    reference = tmp_path / "reference"
    assert main(["sweep", "run", str(spec), "--workers", "2", "--sweep-dir", str(reference), "--quiet"]) == 0
    sweep = tmp_path / "sweep"
    _initialise(spec, sweep)
    logs = {host: tmp_path / f"{host}.log" for host in ("a", "b")}
    a = _agent_on(two_hosts, "a", sweep, logs["a"], started)
    _wait_for(lambda: (sweep / "trials" / "t0000" / "claim-1").is_file(), "host a's claim", a)
    b = _agent_on(two_hosts, "b", sweep, logs["b"], started)
    run_dirs = [sweep / "trials" / "t0000", sweep / "trials" / "t0001"]
    _wait_for(lambda: (run_dirs[1] / "claim-1").is_file(), "host b's claim", a, b)
    victim = run_dirs[0]
    _wait_for(lambda: (victim / "checkpoint.json").is_file(), "a checkpoint of host a's trial", a, b)
    trial_a = [e["child_pid"] for e in read_attempts(str(victim)) if "child_pid" in e][0]
    held = _tree(trial_a)
    for pid in held:                                    # a's trial holds still; a's agent keeps beating
        os.kill(pid, signal.SIGSTOP)
    _wait_for(lambda: "staying while another agent runs t0000" in logs["b"].read_text(),
              "host b to finish its trial and stay for host a's", a, b)
    assert _states(sweep)["t0001"] == "COMPLETE"
    os.killpg(a.pid, signal.SIGKILL)                    # host a dies: its agent and its trial, no goodbye
    a.wait()
    killed_at = time.time()
    assert _finish(b, logs["b"]) == 0, logs["b"].read_text()[-3000:]

    story = _story(run_dirs)
    assert claims(str(victim)) == [1, 2], story
    assert [read_claim(str(victim), n)["host"] for n in (1, 2)] == ["pg-host-a", "pg-host-b"], story
    assert claims(str(run_dirs[1])) == [1] and read_claim(str(run_dirs[1]), 1)["host"] == "pg-host-b", story
    attempts = read_attempts(str(victim))
    assert [e["hostname"] for e in attempts if "child_pid" in e][:1] == ["pg-host-a"], attempts
    adopted = [e for e in attempts if e.get("host") == "pg-host-b" and "child_pid" in e]
    assert adopted and adopted[0]["hostname"] == "pg-host-b", attempts
    # not before the grace had passed since host a's last heartbeat (at most one beat before the kill)
    assert (victim / "claim-2").stat().st_mtime >= killed_at + GRACE - 1.0, story
    assert _states(sweep) == {"t0000": "COMPLETE", "t0001": "COMPLETE"}
    for run_dir in run_dirs:
        theirs = reference / "trials" / run_dir.name
        assert json.loads((run_dir / "trial.json").read_text())["params"] == json.loads(
            (theirs / "trial.json").read_text())["params"]
        for name in ("checkpoint.json", "metrics.jsonl", "results.json"):
            assert (run_dir / name).read_bytes() == (theirs / name).read_bytes(), f"{run_dir.name}/{name}"
    assert "contract trial: resumed from" in (victim / "sweep-trial.log").read_text(), story   # not begun again
