"""Heartbeat files and process identity (playground/sweeps/agents/heartbeat.py) on real processes and files."""
from __future__ import annotations

import json
import subprocess
import sys
import time

from playground.sweeps.agents.heartbeat import AgentId, Heartbeat, heartbeat_path, process_alive, process_start
from tests.conftest import HANG


def test_heartbeat_counts_up_names_its_trials_and_is_removed_when_the_agent_stops(tmp_path):
    me = AgentId.this_process()
    beat = Heartbeat(str(tmp_path), me, 0.05, lambda: ["t0001", "t0000"])
    beat.start()
    path = heartbeat_path(str(tmp_path), me.name)
    first = json.load(open(path))
    deadline = time.monotonic() + HANG
    while json.load(open(path))["counter"] == first["counter"] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert json.load(open(path))["counter"] > first["counter"]
    assert first["trials"] == ["t0000", "t0001"] and first["pid"] == me.pid and first["host"] == me.host
    beat.stop()
    assert not (tmp_path / "agents").joinpath(f"{me.name}.json").exists()


def test_a_killed_but_unreaped_process_counts_as_gone():
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    start = process_start(sleeper.pid)
    sleeper.kill()
    deadline = time.monotonic() + HANG
    while process_start(sleeper.pid) is not None and time.monotonic() < deadline:
        time.sleep(0.01)                                           # a zombie until we wait for it
    assert process_start(sleeper.pid) is None and not process_alive(sleeper.pid, start)
    sleeper.wait()
