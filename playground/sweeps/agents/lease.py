"""Leases: whether a RUNNING trial held by another agent may be adopted. The holder is the agent named in the
trial's highest claim file (or, before its first claim, the agent that asked for it).

A holder's lease has expired when
- it released the trial (trial.json says paused or interrupted for the attempt it holds): at once;
- it ran on this host and its process is gone (pid and process start time: pids are reused): at once;
- its heartbeat file has not changed for `grace` seconds, measured on this agent's own clock from when this
  agent first saw it unchanged: clock skew between hosts never matters, only the heartbeat's counter is read.
A trial whose holder is unknown (asked, then killed before the agent was recorded; or a claim file cut by a
kill) expires the same way after `grace`, or at once when no agent that might still be alive existed when the
trial (or that claim) started.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from playground.sweeps.agents.heartbeat import AgentId, process_alive, read_heartbeat, read_heartbeats

EXPIRED, LIVE, UNDECIDED = "expired", "live", "undecided"
RELEASED_STATES = ("paused", "interrupted")


class Leases:
    """What this agent has observed of other agents' heartbeats, on its own clock (`clock`, monotonic)."""

    def __init__(self, control: str, me: AgentId, grace: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.control, self.me, self.grace, self.clock = control, me, grace, clock
        self._seen: dict[str, tuple[Any, float, bool]] = {}   # key -> (state, first seen so, ever seen to change)

    def observe(self, key: str, state: Any) -> tuple[float, bool]:
        """Seconds (on our clock) `state` has been seen unchanged for `key`, and whether it was ever seen to change."""
        now = self.clock()
        last = self._seen.get(key)
        if last is None or last[0] != state:
            self._seen[key] = (state, now, last is not None)
            return 0.0, last is not None
        return now - last[1], last[2]

    def verdict(self, holder: AgentId | None, since: float, released: bool = False, key: str = "") -> str:
        """EXPIRED, LIVE (its heartbeat was seen to change) or UNDECIDED (not yet seen to change, not yet stale).

        `since`: wall-clock time the trial (or its holder's claim) started, for an unknown holder; `key` names the
        trial then. `released`: the holder said it stopped working on the trial.
        """
        if released:
            return EXPIRED
        if holder is None:
            if not self._someone_older_than(since):
                return EXPIRED
            return EXPIRED if self.observe(f"unknown:{key}", None)[0] >= self.grace else UNDECIDED
        if holder == self.me:
            return LIVE
        if holder.host == self.me.host and not process_alive(holder.pid, holder.start):
            return EXPIRED
        beat = read_heartbeat(self.control, holder.name)
        waited, changed = self.observe(f"agent:{holder.name}", None if beat is None else (beat.get("since"),
                                                                                          beat.get("counter")))
        if waited >= self.grace:
            return EXPIRED
        return LIVE if changed else UNDECIDED

    def _someone_older_than(self, since: float) -> bool:
        """Whether an agent other than us that might still be alive had started by `since` (it may be the holder).

        On another host its start time is on another clock, so any heartbeat there counts as possibly older.
        """
        for beat in read_heartbeats(self.control):
            agent = AgentId.from_record(beat)
            if agent is None or agent.host != self.me.host:
                return True
            if agent == self.me or not process_alive(agent.pid, agent.start):
                continue
            if float(beat.get("since", 0.0)) <= since:
                return True
        return False
