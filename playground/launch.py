"""Starts the ranks of a prepared run: here (one process, or ranks given by torchrun/Slurm) or one spawned
process per local device. Returns the command's exit code.

When a spawned rank fails (exception, kill), the others are given a few seconds to fail on their own in their
next collective, then are terminated; the message names the failed rank. A SIGTERM/SIGINT to this process is
passed on to the ranks, which checkpoint and exit with EXIT_PREEMPTED. Ranks die with this process
(PR_SET_PDEATHSIG), so none is left behind.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import traceback

from playground.checkpoint_files import CheckpointError
from playground.opts_layers import OptsError
from playground.preemption import EXIT_PREEMPTED, Preempted
from playground.pretrained import PretrainedError
from playground.registry import ComponentError
from playground.topology import Topology

USER_ERRORS = (OptsError, ComponentError, CheckpointError, PretrainedError)
GRACE_SECONDS = 5.0


def launch(prepared) -> int:
    topology = prepared.plan.topology
    if topology.spawns:
        return _spawn(prepared)
    return _guarded(topology.given_local_rank or 0, prepared.opts, prepared.run_dir, topology, prepared.resolved)


def _guarded(local_rank: int, opts: dict, run_dir: str, topology: Topology, resolved=None) -> int:
    """Run one rank here and turn its outcome into an exit code with a message."""
    from playground.worker import run_rank
    rank = topology.global_rank(local_rank)
    try:
        result = run_rank(local_rank, opts, run_dir, topology, resolved)
    except Preempted as stop:
        if rank == 0:
            print(f"playground: stopped by {stop}; a checkpoint was written. Re-run the same command "
                  f"(same --run-dir) to resume. Exit code {EXIT_PREEMPTED}.", file=sys.stderr)
        return EXIT_PREEMPTED
    except USER_ERRORS as err:
        print(f"playground: error{_on(rank, topology)}: {err}", file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        print(f"playground: the run failed{_on(rank, topology)} (traceback above)", file=sys.stderr)
        return 1
    if result is not None:
        print_summary(result, run_dir)
    return 0


def _on(rank: int, topology: Topology) -> str:
    return f" on rank {rank}" if topology.world_size > 1 else ""


def _rank_entry(local_rank: int, opts: dict, run_dir: str, topology: Topology) -> None:
    _die_with_parent()
    code = _guarded(local_rank, opts, run_dir, topology)
    if code:
        sys.exit(code)


def _spawn(prepared) -> int:
    from torch.multiprocessing import ProcessExitedException, ProcessRaisedException, start_processes
    topology: Topology = prepared.plan.topology
    context = start_processes(_rank_entry, args=(prepared.opts, prepared.run_dir, topology),
                              nprocs=topology.devices_per_host, join=False, start_method="spawn")

    def forward(signum, frame):
        for process in context.processes:
            if process.is_alive():
                os.kill(process.pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while not context.join(grace_period=GRACE_SECONDS):
            pass
    except ProcessExitedException as err:
        if err.exit_code == EXIT_PREEMPTED:
            return EXIT_PREEMPTED
        rank = topology.global_rank(err.error_index)
        how = f"was killed by {err.signal_name}" if err.signal_name else f"exited with code {err.exit_code}"
        print(f"playground: rank {rank} (pid {err.error_pid}) {how}; the other ranks were stopped. The last "
              "completed checkpoint is intact; re-run the same command to resume.", file=sys.stderr)
        return 1
    except ProcessRaisedException as err:
        rank = topology.global_rank(err.error_index)
        last = str(err).strip().splitlines()[-1] if str(err).strip() else "an exception"
        print(f"playground: rank {rank} (pid {err.error_pid}) failed: {last}; the other ranks were stopped.",
              file=sys.stderr)
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _die_with_parent() -> None:
    """Linux: get SIGTERM (then checkpoint and exit) if the launching process dies."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def print_summary(result: dict, run_dir: str) -> None:
    from playground.run_summary import summary_lines
    for line in summary_lines(result, run_dir):
        print(line)
