"""Fencing between the attempts of one run folder: attempt n holds `claim-<n>` (created exclusively by the agent
that starts it); once `claim-<n+1>` exists, another agent has adopted the trial and attempt n may write nothing.

The agent creates the claim before starting the run and tells the run its number through PLAYGROUND_ATTEMPT.
Claims are created strictly in order (the next is always one more than the highest), so a writer needs one
`stat` of `claim-<n+1>` to know it was superseded. A run started without PLAYGROUND_ATTEMPT is not fenced.
"""
from __future__ import annotations

import json
import os
import re
import time
from typing import Any

from playground.restarts.host import host_id

ATTEMPT_ENV = "PLAYGROUND_ATTEMPT"
_CLAIM = re.compile(r"^claim-(\d+)$")


class Fenced(RuntimeError):
    """Raised by a writer of an attempt that a later claim has superseded."""


def claim_path(run_dir: str, attempt: int) -> str:
    return os.path.join(run_dir, f"claim-{attempt}")


def claims(run_dir: str) -> list[int]:
    """The claim numbers present in `run_dir`, ascending."""
    try:
        names = os.listdir(run_dir)
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for m in map(_CLAIM.match, names) if m)


def highest_claim(run_dir: str) -> int:
    """The highest claim number in `run_dir`; 0 when none exists."""
    found = claims(run_dir)
    return found[-1] if found else 0


def create_claim(run_dir: str, attempt: int, holder: dict[str, Any] | None = None) -> bool:
    """Create `claim-<attempt>` exclusively (O_CREAT|O_EXCL); False when another agent created it first."""
    os.makedirs(run_dir, exist_ok=True)
    try:
        fd = os.open(claim_path(run_dir, attempt), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"attempt": attempt, "host": host_id(), "pid": os.getpid(), "time": time.time(),
                       **(holder or {})}, handle)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        # not written (a full disk): no attempt was started under it, so no empty claim may stay to fence one
        os.unlink(claim_path(run_dir, attempt))
        raise
    return True


def read_claim(run_dir: str, attempt: int) -> dict[str, Any]:
    """The holder recorded in `claim-<attempt>`; {} when missing or cut by a kill."""
    try:
        with open(claim_path(run_dir, attempt), encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, json.JSONDecodeError):
        return {}


class Fence:
    """The write permission of attempt `attempt` in `run_dir` (None: not fenced, always allowed)."""

    def __init__(self, run_dir: str, attempt: int | None) -> None:
        self.run_dir, self.attempt = run_dir, attempt

    @classmethod
    def from_env(cls, run_dir: str, environ: dict[str, str] | None = None) -> "Fence":
        text = (os.environ if environ is None else environ).get(ATTEMPT_ENV, "").strip()
        return cls(run_dir, int(text) if text.isdigit() and int(text) > 0 else None)

    def superseded(self) -> bool:
        return self.attempt is not None and os.path.exists(claim_path(self.run_dir, self.attempt + 1))

    def check(self, what: str) -> None:
        """Raise Fenced, naming `what` was about to be written, when a later attempt holds the folder."""
        if self.superseded():
            raise Fenced(f"{self.run_dir}: attempt {self.attempt} was superseded by claim-{self.attempt + 1} "
                         f"(another agent adopted this trial); not writing {what}")
