"""What the pages' buttons do, only with `playground ui --allow-actions`, and only through the existing commands:
a sweep is paused and resumed by `playground sweep pause|resume DIR` (its output is the answer), a run is stopped
by SIGTERM to its process (it writes a checkpoint and exits 75; re-running its command resumes it). A sweep's
trial is not stopped alone (its agent would start it again): pause the sweep.
"""
from __future__ import annotations

import subprocess
import sys

from playground.processes.exit_codes import EXIT_DONE
from playground.processes.supervisor import run_tool
from playground.ui.web.catalog import Catalog

COMMAND_SECONDS = 60.0
SWEEP_ACTIONS = ("pause", "resume")


class ActionRefused(Exception):
    """The action cannot be done on that folder; the message says why."""


def act(catalog: Catalog, action: str, path: str) -> str:
    """Do `action` (pause, resume, stop) on the folder at `path`; what happened, in words (ActionRefused when it
    cannot be done)."""
    if action in SWEEP_ACTIONS:
        if not catalog.is_sweep(path):
            raise ActionRefused(f"{path} is not a sweep folder")
        try:
            done = run_tool([sys.executable, "-m", "playground", "sweep", action, path], timeout=COMMAND_SECONDS)
        except subprocess.TimeoutExpired:
            raise ActionRefused(f"`playground sweep {action}` did not answer in {COMMAND_SECONDS:.0f} s") from None
        said = (done.stdout + done.stderr).strip()
        if done.returncode != EXIT_DONE:
            raise ActionRefused(said or f"`playground sweep {action}` exited {done.returncode}")
        return said
    if action == "stop":
        if catalog.sweep_of(path) is not None:
            raise ActionRefused("a sweep's trial is not stopped alone (its agent would start it again): pause the "
                                "sweep")
        try:
            return catalog.processes.stop(path)
        except LookupError as err:
            raise ActionRefused(str(err)) from None
    raise ActionRefused(f"unknown action {action!r} (pause, resume, stop)")
