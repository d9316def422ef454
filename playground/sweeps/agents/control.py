"""`sweep pause DIR` and `sweep resume DIR`: the control/PAUSE flag that every agent of a sweep obeys.

Pausing creates the flag atomically (its content says who paused when); a running `sweep run` then claims
nothing and stops its running trials through SIGTERM (each writes a checkpoint and exits 75, and is marked
paused), and a later `sweep run` says the sweep is paused and exits 75. Resuming removes the flag; the next
`sweep run` continues the paused trials first, each in its own folder from its own checkpoint. Both return 0
and say what happens next; a folder that is not a sweep is refused (SweepError, exit 2).
"""
from __future__ import annotations

import os
import socket
import time

from playground.outputs.atomic_files import write_json
from playground.sweeps.agents.heartbeat import agents_maybe_alive
from playground.sweeps.errors import SweepError
from playground.sweeps.files.sweep_folder import SweepFolder


def pause(sweep_dir: str) -> int:
    folder = sweep_folder(sweep_dir)
    if folder.paused():
        print(f"sweep {folder.root} is already paused ({folder.pause_flag}); `playground sweep resume "
              f"{folder.root}` allows it to run again")
        return 0
    os.makedirs(folder.control, exist_ok=True)
    write_json(folder.pause_flag, {"paused_at": time.time(), "host": socket.gethostname(), "pid": os.getpid()})
    running = trials_in(folder, "running")
    agents = agents_maybe_alive(folder.control)
    if agents:
        print(f"paused {folder.root}: its agents ({', '.join(agents)}) claim nothing new; the sweep stops its "
              f"{len(running)} running trial(s) after a checkpoint (SIGTERM; each exits 75 and is marked paused), "
              f"then its agents exit 75")
    else:
        print(f"paused {folder.root}: no agent works on it now; until `playground sweep resume "
              f"{folder.root}`, a `sweep run` on it says it is paused and exits 75")
    print(f"to continue: `playground sweep resume {folder.root}`, then re-run the `sweep run` command")
    return 0


def resume(sweep_dir: str) -> int:
    folder = sweep_folder(sweep_dir)
    if not folder.paused():
        print(f"sweep {folder.root} is not paused: nothing to resume")
        return 0
    os.unlink(folder.pause_flag)
    paused = trials_in(folder, "paused")
    waiting = f"; it continues {', '.join(paused)} first, each from its own checkpoint" if paused else ""
    print(f"resumed {folder.root}: re-run the `sweep run` command{waiting}")
    return 0


def sweep_folder(sweep_dir: str) -> SweepFolder:
    """The sweep in `sweep_dir`, or SweepError naming what is wrong (one line)."""
    folder = SweepFolder(sweep_dir)
    if not os.path.isdir(folder.root):
        raise SweepError(f"{folder.root}: no such folder (give the folder `sweep run` wrote: --sweep-dir, "
                         "default sweeps/<name>)")
    if not folder.exists():
        raise SweepError(f"{folder.root} is not a sweep folder: it has no sweep.json (give the folder `sweep run` "
                         "wrote: --sweep-dir, default sweeps/<name>)")
    folder.read_spec()  # a damaged sweep.json is refused here too
    return folder


def trials_in(folder: SweepFolder, state: str) -> list[str]:
    """Ids of the trials whose trial.json says `state`."""
    return [t for t in folder.trial_ids() if folder.read_trial(t).get("state") == state]
