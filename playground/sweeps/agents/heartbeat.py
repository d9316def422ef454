"""Agent heartbeats: each agent process rewrites control/agents/<host-id>-<pid>.json every few seconds (a counter,
its clock time, its trials), and who an agent is: host id, pid and the process's start time.

The host id is PLAYGROUND_HOST_ID when set (tests play several hosts on one machine), else the hostname. A pid
alone does not name a process (pids are reused), so an agent is (host, pid, start) where start is the kernel's
start time of the process (/proc/<pid>/stat, clock ticks since boot); `process_alive` compares both.
"""
from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

from playground.outputs.atomic_files import write_json
from playground.restarts.host import host_id


def process_start(pid: int) -> int | None:
    """The start time of process `pid` (clock ticks since boot); None when it is gone, a zombie, or unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()   # the command name may hold spaces and parentheses
    if not fields or fields[0] in ("Z", "X"):      # a zombie has stopped: killed, not yet reaped
        return None
    return int(fields[19])


def process_alive(pid: int, start: int | None) -> bool:
    """Whether process `pid` of this host still runs and is the one that started at `start` (not a reuse)."""
    now = process_start(pid)
    if now is not None:
        return start is None or now == start
    if os.path.isdir("/proc/self"):
        return False
    try:                                            # no /proc: the pid is all we can check
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class AgentId:
    """Who holds a trial: written into claim files and heartbeats."""
    name: str
    host: str
    pid: int
    start: int | None

    @classmethod
    def this_process(cls) -> "AgentId":
        host = host_id()
        return cls(f"{host}-{os.getpid()}", host, os.getpid(), process_start(os.getpid()))

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "AgentId | None":
        """The agent named in a claim file or a trial's `agent` attr; None when the record names none."""
        try:
            return cls(str(record["agent"]), str(record["host"]), int(record["pid"]), record.get("start"))
        except (KeyError, TypeError, ValueError):
            return None

    def record(self) -> dict[str, Any]:
        out = asdict(self)
        out["agent"] = out.pop("name")
        return out


def agents_dir(control: str) -> str:
    return os.path.join(control, "agents")


def heartbeat_path(control: str, name: str) -> str:
    return os.path.join(agents_dir(control), f"{name}.json")


def read_heartbeat(control: str, name: str) -> dict[str, Any] | None:
    """An agent's last heartbeat; None when it has none (never started, or exited and removed it)."""
    try:
        with open(heartbeat_path(control, name), encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def read_heartbeats(control: str) -> list[dict[str, Any]]:
    try:
        names = sorted(n[:-5] for n in os.listdir(agents_dir(control)) if n.endswith(".json"))
    except FileNotFoundError:
        return []
    return [beat for beat in (read_heartbeat(control, n) for n in names) if beat is not None]


def possibly_alive(beat: dict[str, Any], here: str) -> bool:
    """False only when the agent provably stopped: it ran on this host and its process is gone."""
    agent = AgentId.from_record(beat)
    return agent is None or agent.host != here or process_alive(agent.pid, agent.start)


def agents_maybe_alive(control: str, me: AgentId | None = None) -> list[str]:
    """Names of the agents (other than `me`) whose heartbeat files exist and that are not provably gone."""
    here = me.host if me is not None else host_id()
    return [str(b.get("agent", "?")) for b in read_heartbeats(control)
            if (me is None or b.get("agent") != me.name) and possibly_alive(b, here)]


class Heartbeat:
    """Rewrites this agent's heartbeat file every `seconds` from a daemon thread until `stop`.

    `trials()` names the trials this agent runs (written for people and `sweep status`; leases read only
    whether the counter changes).
    """

    def __init__(self, control: str, me: AgentId, seconds: float, trials: Callable[[], list[str]]) -> None:
        self.path = heartbeat_path(control, me.name)
        self.me, self.seconds, self.trials = me, seconds, trials
        self.since = time.time()
        self.counter = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)

    def start(self) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.beat()
        self._thread.start()

    def beat(self) -> None:
        self.counter += 1
        write_json(self.path, {**self.me.record(), "since": self.since, "counter": self.counter,
                               "clock": time.time(), "heartbeat_seconds": self.seconds,
                               "trials": sorted(self.trials())}, durable=False)

    def _loop(self) -> None:
        while not self._stopped.wait(self.seconds):
            try:
                self.beat()
            except OSError:
                continue  # a full or briefly unreachable filesystem: the next beat tries again

    def stop(self) -> None:
        """Stop beating and remove the file: the agent is gone, its released trials may be taken at once."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.seconds + 5)
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
