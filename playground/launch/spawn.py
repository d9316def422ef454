"""Starts the ranks of a prepared run: here (one process, or ranks given by torchrun/Slurm) or one spawned
process per local device. Returns the command's exit code.

When a spawned rank fails (exception, kill), the others are given a few seconds to fail on their own in their
next collective, then are terminated; the message names the failed rank. A SIGTERM/SIGINT to this process is
passed on to the ranks, which checkpoint and exit with EXIT_PREEMPTED. Ranks die with this process
(PR_SET_PDEATHSIG), so none is left behind. A rank 0 fenced by a later attempt's claim (another agent adopted
the run: playground/restarts/fence.py) says so and the command exits EXIT_PREEMPTED without writing; the
other ranks then lose their peer and are ended like the bystanders of any failed rank.
"""
from __future__ import annotations

import ctypes
import faulthandler
import gc
import os
import signal
import sys
import time
import traceback

from playground.checkpoints.files import CheckpointError
from playground.data.worker_errors import DataError
from playground.data.forms import DataFormError
from playground.launch.jobs import Job
from playground.launch.one_batch_check import CheckError
from playground.launch.process_exit import freeze_for_exit
from playground.options.layers import OptsError
from playground.options.loader import ResolvedOpts
from playground.checkpoints.preemption import EXIT_PREEMPTED, Preempted
from playground.checkpoints.pretrained import PretrainedError
from playground.distribution.rank_failure import EXIT_PEER_LOST, PeerLost
from playground.options.registry import ComponentError
from playground.distribution.rendezvous import RendezvousError
from playground.distribution.topology import Topology
from playground.restarts.fence import Fenced

USER_ERRORS = (OptsError, ComponentError, CheckpointError, PretrainedError, RendezvousError, DataFormError,
               DataError, CheckError)
GRACE_SECONDS = 5.0
EXIT_FENCED = 4     # a spawned rank's exit code for "fenced" (launcher-internal; the command exits EXIT_PREEMPTED)


def launch(prepared, job: Job) -> int:
    """Run `job` (jobs.py) on every rank of the prepared run: here, or in one spawned process per local device."""
    topology = prepared.plan.topology
    if topology.spawns:
        return _spawn(prepared, job)
    code = _guarded(topology.given_local_rank or 0, prepared.resolved, prepared.run_dir, topology, job)
    if code == 0:
        _ignore_late_stop()   # the run's results are written: a SIGTERM now (srun's, a scheduler's) is too late
    _free_rank_objects()
    return code


def _guarded(local_rank: int, resolved: ResolvedOpts, run_dir: str, topology: Topology, job: Job,
             spawned: bool = False) -> int:
    """Run one rank here and turn its outcome into an exit code with a message."""
    from playground.launch.worker import run_rank
    rank = topology.global_rank(local_rank)
    try:
        result = run_rank(local_rank, resolved, run_dir, topology, job)
    except Preempted as stop:
        if rank == 0:
            print(f"playground: stopped by {stop}; a checkpoint was written. Re-run the same command "
                  f"(same --run-dir) to resume. Exit code {EXIT_PREEMPTED}.", file=sys.stderr)
        return EXIT_PREEMPTED
    except Fenced as err:
        print(fenced_line(err), file=sys.stderr)
        return EXIT_FENCED if spawned else EXIT_PREEMPTED
    except USER_ERRORS as err:
        print(f"playground: error{_on(rank, topology)}: {err}", file=sys.stderr)
        return 1
    except PeerLost as err:
        print(f"playground: rank {rank} {err}", file=sys.stderr)
        return EXIT_PEER_LOST if spawned else 1
    except Exception:
        traceback.print_exc()
        print(f"playground: the run failed{_on(rank, topology)} (traceback above)", file=sys.stderr)
        return 1
    if result is not None:
        print_summary(result, run_dir)
    return 0


def fenced_line(err: Fenced) -> str:
    """The one line a fenced run prints before it exits EXIT_PREEMPTED."""
    return f"playground: stopped without writing: {err}. Exit code {EXIT_PREEMPTED}."


def _on(rank: int, topology: Topology) -> str:
    return f" on rank {rank}" if topology.world_size > 1 else ""


def _rank_entry(local_rank: int, resolved: ResolvedOpts, run_dir: str, topology: Topology, job: Job) -> None:
    _die_with_parent()
    # A rank that dies in native code (SIGSEGV, SIGABRT) prints the Python stack of each thread first.
    faulthandler.enable(all_threads=True)
    code = _guarded(local_rank, resolved, run_dir, topology, job, spawned=True)
    _ignore_late_stop()
    # The trainer is freed while the interpreter is whole (as _free_rank_objects explains), and this process,
    # which ends next, is spared the shutdown's collection over every object torch imported.
    freeze_for_exit()
    if code:
        sys.exit(code)


def _ignore_late_stop() -> None:
    """This rank is done; a stop signal that arrives late must not turn its exit code into "killed by SIGTERM"."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _free_rank_objects() -> None:
    """Free the trainer (it holds reference cycles) while the interpreter is whole. Left to interpreter
    shutdown, DDP's process group is destroyed with gloo threads still holding Python objects, and the
    process aborts ("terminate called without an active exception") after a successful run."""
    gc.collect()


def _spawn(prepared, job: Job) -> int:
    from torch.multiprocessing import start_processes
    topology: Topology = prepared.plan.topology
    if topology.num_shards == 1 and "MASTER_ADDR" not in os.environ:
        # One host: the ranks can meet on loopback (used by env:// rendezvous; spawned children inherit it).
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
    # The ranks get the opts resolved and validated here (pickled), and the job: neither is looked up again.
    context = start_processes(_rank_entry, args=(prepared.resolved, prepared.run_dir, topology, job),
                              nprocs=topology.devices_per_host, join=False, start_method="spawn")

    def forward(signum, frame):
        for process in context.processes:
            if process.is_alive():
                os.kill(process.pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        exits, stopped = _wait_for_ranks(context.processes)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return _outcome(exits, context.processes, topology, stopped)


def _wait_for_ranks(processes: list) -> tuple[list[tuple[int, int]], set[int]]:
    """(local rank, exit code) in the order the ranks ended, and the ranks this launcher had to stop. After the
    first failure the others get GRACE_SECONDS to fail on their own (their next collective breaks), then are
    terminated, then killed: a rank still running then hangs (its collective would have failed otherwise).
    A preempted rank is no failure: the others are finishing the same agreed checkpoint."""
    from multiprocessing.connection import wait
    running = {process.sentinel: index for index, process in enumerate(processes)}
    exits: list[tuple[int, int]] = []
    deadline = None
    while running:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        for sentinel in wait(list(running), timeout=timeout):
            index = running.pop(sentinel)
            processes[index].join()
            exits.append((index, processes[index].exitcode))
            if processes[index].exitcode not in (0, EXIT_PREEMPTED) and deadline is None:
                deadline = time.monotonic() + GRACE_SECONDS
        if deadline is not None and time.monotonic() >= deadline and running:
            _stop(processes[i] for i in running.values())
            for index in running.values():
                exits.append((index, processes[index].exitcode))
            return exits, set(running.values())
    return exits, set()


def _stop(processes) -> None:
    processes = list(processes)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(GRACE_SECONDS)
        if process.is_alive():
            process.kill()
            process.join()


def _outcome(exits: list[tuple[int, int]], processes: list, topology: Topology, stopped: set[int] = frozenset()) -> int:
    """The command's exit code, with one message naming the rank that failed first for a reason of its own,
    or, when the others only lost contact, the rank(s) that hung: still running when this launcher stopped them."""
    failures = [(index, code) for index, code in exits if code != 0]
    if not failures:
        return 0
    if all(code == EXIT_PREEMPTED for _, code in failures):
        return EXIT_PREEMPTED
    if any(code == EXIT_FENCED for _, code in failures):   # rank 0 said why; the others only lost it
        return EXIT_PREEMPTED
    own = [(index, code) for index, code in failures if code not in (EXIT_PEER_LOST, EXIT_PREEMPTED)]
    if own and all(index in stopped for index, _ in own):
        hung = ", ".join(f"rank {topology.global_rank(i)} (pid {processes[i].pid})" for i, _ in own)
        print(f"playground: {hung} hung: it stopped answering while the other ranks waited for it in a collective "
              "(distributed.collective_timeout), and was stopped. The last completed checkpoint is intact; re-run "
              "the same command to resume.", file=sys.stderr)
        return 1
    own = [(index, code) for index, code in own if index not in stopped] or own
    if not own:
        print("playground: the ranks on this host stopped because they lost contact with a rank on another host "
              "(their messages above say what they learned); that host's output names it. The last completed "
              "checkpoint is intact; re-run the same command on every host to resume.", file=sys.stderr)
        return 1
    index, code = own[0]
    rank, pid = topology.global_rank(index), processes[index].pid
    if code < 0:
        how = f"was killed by {signal.Signals(-code).name}" if -code in signal.valid_signals() else f"died ({code})"
    else:
        how = "failed (its error is above)" if code == 1 else f"exited with code {code}"
    print(f"playground: rank {rank} (pid {pid}) {how}; the other ranks were stopped. The last completed checkpoint "
          "is intact; re-run the same command to resume.", file=sys.stderr)
    return 1


def _free_port() -> int:
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """Linux: get SIGTERM (then checkpoint and exit) if the launching process dies."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def print_summary(result: dict, run_dir: str) -> None:
    from playground.outputs.run_summary import summary_lines
    for line in summary_lines(result, run_dir):
        print(line)
