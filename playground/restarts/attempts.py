"""attempts.jsonl in a run folder: one line per attempt (host, hostname, pid, start, end, exit code, reason, whether
it cost a restart). The file only grows; a line cut by a kill is skipped when read, and ended before the next
append so the next line is not glued to it.

`host` is the host id (host.py: PLAYGROUND_HOST_ID, else the hostname), the name sweep agents and claim files
use; `hostname` is the machine's own name. Lines written before the host id was recorded hold the hostname in
`host` and no `hostname`: readers take each field with .get.
"""
from __future__ import annotations

import json
import os
import socket
from typing import Any

from playground.restarts.jsonl import append_json_line
from playground.restarts.fence import highest_claim
from playground.restarts.host import host_id

FILE = "attempts.jsonl"


def attempts_path(run_dir: str) -> str:
    """The attempts file of `run_dir` (outputs/run_folder.py's RunFolder.attempts: the run folder's layout)."""
    return os.path.join(run_dir, FILE)


def append_attempt(run_dir: str, entry: dict[str, Any]) -> None:
    entry = {"host": host_id(), "hostname": socket.gethostname(), "pid": os.getpid(), **entry}
    os.makedirs(run_dir, exist_ok=True)
    append_json_line(attempts_path(run_dir), entry)


def read_attempts(run_dir: str) -> list[dict]:
    path = attempts_path(run_dir)
    out = []
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a line cut by a kill
    return out


def restarts_used(run_dirs: list[str]) -> int:
    """Units of max_restarts already spent in these folders (attempts whose retry cost one)."""
    return sum(1 for d in run_dirs for a in read_attempts(d) if a.get("restart_consumed"))



def next_attempt(run_dir: str) -> int:
    """The number of the attempt about to start: one more than the attempts started (ended or killed) and than
    the highest claim file (an agent may have been killed between its claim and its first line here)."""
    return max(sum(1 for a in read_attempts(run_dir) if "end" not in a), highest_claim(run_dir)) + 1
