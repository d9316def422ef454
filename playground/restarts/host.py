"""Which host a process runs on, as agents, claim files and attempts.jsonl name it: the host id.

The host id is PLAYGROUND_HOST_ID when set (a site whose nodes share a hostname, tests that play several hosts on
one machine), else the hostname. Sweep agents name each other by it (playground/sweeps/agents/heartbeat.py), so every
file that says where an attempt ran uses the same name.
"""
from __future__ import annotations

import os
import socket

HOST_ENV = "PLAYGROUND_HOST_ID"


def host_id() -> str:
    """PLAYGROUND_HOST_ID when set and not blank, else the hostname."""
    return os.environ.get(HOST_ENV, "").strip() or socket.gethostname()
