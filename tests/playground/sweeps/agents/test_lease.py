"""The lease rules (playground/sweeps/agents/lease.py) on real heartbeat files and real processes: a holder on another
host expires when its heartbeat stops changing for the grace period on the adopter's own clock; a holder on this
host expires at once when its process is gone or its pid now names another process."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from playground.outputs.atomic_files import write_json
from playground.sweeps.agents.heartbeat import AgentId, heartbeat_path, process_alive, process_start
from playground.sweeps.agents.lease import EXPIRED, LIVE, UNDECIDED, Leases

GRACE = 60.0


class Clock:
    """The adopter's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def sleeper():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield process
    process.kill()
    process.wait()


def _beat(control, agent: AgentId, counter: int, clock: float) -> None:
    (control / "agents").mkdir(exist_ok=True)
    write_json(heartbeat_path(str(control), agent.name),
               {**agent.record(), "since": 5.0, "counter": counter, "clock": clock}, durable=False)


def _leases(tmp_path, clock: Clock, host: str = "adopter") -> Leases:
    return Leases(str(tmp_path), AgentId(f"{host}-1", host, 1, None), GRACE, clock=clock)


def test_a_remote_heartbeat_that_stops_changing_expires_after_the_grace_period_on_the_adopters_clock(tmp_path):
    clock = Clock()
    leases = _leases(tmp_path, clock)
    holder = AgentId("far-77", "far", 77, 12345)
    # the holder's own clock is an hour off: only whether its counter changes matters
    _beat(tmp_path, holder, 1, clock=time.time() + 3600)
    assert leases.verdict(holder, since=0.0) == UNDECIDED          # never seen to change yet
    clock.now += 5
    _beat(tmp_path, holder, 2, clock=time.time() - 3600)
    assert leases.verdict(holder, since=0.0) == LIVE
    clock.now += GRACE - 1
    assert leases.verdict(holder, since=0.0) == LIVE               # unchanged, but not for the grace period yet
    clock.now += 1
    assert leases.verdict(holder, since=0.0) == EXPIRED
    _beat(tmp_path, holder, 3, clock=0.0)                          # it beats again: live again
    assert leases.verdict(holder, since=0.0) == LIVE


def test_a_remote_holder_without_a_heartbeat_file_expires_only_after_the_grace_period(tmp_path):
    clock = Clock()
    leases = _leases(tmp_path, clock)
    holder = AgentId("far-78", "far", 78, None)
    assert leases.verdict(holder, since=0.0) == UNDECIDED
    clock.now += GRACE
    assert leases.verdict(holder, since=0.0) == EXPIRED


def test_a_holder_on_this_host_whose_process_is_gone_expires_at_once(tmp_path, sleeper):
    clock = Clock()
    leases = _leases(tmp_path, clock, host="here")
    holder = AgentId(f"here-{sleeper.pid}", "here", sleeper.pid, process_start(sleeper.pid))
    _beat(tmp_path, holder, 1, clock=time.time())
    assert leases.verdict(holder, since=0.0) == UNDECIDED
    sleeper.kill()
    sleeper.wait()
    assert not process_alive(holder.pid, holder.start)
    assert leases.verdict(holder, since=0.0) == EXPIRED                # no grace period waited


def test_a_reused_pid_on_this_host_does_not_keep_a_dead_holders_lease(tmp_path, sleeper):
    clock = Clock()
    leases = _leases(tmp_path, clock, host="here")
    start = process_start(sleeper.pid)
    assert start is not None
    same = AgentId(f"here-{sleeper.pid}", "here", sleeper.pid, start)
    reused = AgentId(f"here-{sleeper.pid}", "here", sleeper.pid, start - 1)   # an earlier process with that pid
    assert leases.verdict(same, since=0.0) == UNDECIDED
    assert leases.verdict(reused, since=0.0) == EXPIRED


def test_a_holder_that_released_its_trial_expires_at_once(tmp_path, sleeper):
    leases = _leases(tmp_path, Clock(), host="here")
    holder = AgentId(f"here-{sleeper.pid}", "here", sleeper.pid, process_start(sleeper.pid))
    assert leases.verdict(holder, since=0.0, released=True) == EXPIRED


def test_an_unknown_holder_waits_for_the_grace_period_only_while_an_older_agent_may_be_it(tmp_path, sleeper):
    clock = Clock()
    leases = _leases(tmp_path, clock, host="here")
    trial_started = time.time()
    assert leases.verdict(None, since=trial_started, key="7") == EXPIRED      # no agent could have asked for it
    older = AgentId(f"here-{sleeper.pid}", "here", sleeper.pid, process_start(sleeper.pid))
    (tmp_path / "agents").mkdir(exist_ok=True)
    write_json(heartbeat_path(str(tmp_path), older.name),
               {**older.record(), "since": trial_started - 1, "counter": 1, "clock": 0.0}, durable=False)
    assert leases.verdict(None, since=trial_started, key="7") == UNDECIDED
    clock.now += GRACE
    assert leases.verdict(None, since=trial_started, key="7") == EXPIRED
    # an agent started after the trial cannot be the one that asked for it
    assert leases.verdict(None, since=trial_started - 2, key="8") == EXPIRED
