"""Starts the ranks of a prepared run: here (one process, or ranks given by torchrun/Slurm) or one spawned
process per local device. Returns the command's exit code.

When a spawned rank fails (exception, kill), the others are given a few seconds to fail on their own in their
next collective, then are terminated; the message names the failed rank. A SIGTERM/SIGINT to this process is
passed on to the ranks, which checkpoint and exit with EXIT_STOPPED. Ranks die with this process
(PR_SET_PDEATHSIG), so none is left behind. A rank 0 fenced by a later attempt's claim (another agent adopted
the run: playground/restarts/fence.py) says so and the command exits EXIT_STOPPED without writing; the
other ranks then lose their peer and are ended like the bystanders of any failed rank. Starting, forwarding,
stopping and reading the ranks is playground/processes/supervisor.py's; what their exits mean is decided here.
"""
from __future__ import annotations

import faulthandler
import gc
import os
import sys
import traceback

from playground.launch import deferred_dynamo
from playground.launch.jobs import Job
from playground.launch.process_exit import freeze_for_exit
from playground.checkpoints.preemption import Preempted
from playground.distribution.rank_failure import PeerLost
from playground.distribution.topology import Topology
from playground.options.loader import ResolvedOpts
from playground.processes import supervisor
from playground.processes.exit_codes import (EXIT_DONE, EXIT_FAILED, EXIT_FENCED, EXIT_PEER_LOST, EXIT_STOPPED,
                                             UserError)
from playground.restarts.fence import Fenced


# What every spawned rank imports anyway, imported once by the fork server the ranks are forked from (instead of
# once per rank; processes/supervisor.py start_ranks): torch._dynamo, which torch imports on the first optimizer's
# add_param_group, unless the ranks stand in for it (deferred_dynamo.py), and this floor's rank module.
RANK_PRELOAD = [deferred_dynamo.NAME, "playground.launch.worker"]


def launch(prepared, job: Job) -> int:
    """Run `job` (jobs.py) on every rank of the prepared run: here, or in one spawned process per local device."""
    topology = prepared.plan.topology
    if topology.spawns:
        return _spawn(prepared, job)
    # A finished run ignores a late stop signal (_guarded); an in-process caller gets its handlers back here, and
    # a command's own exit ignores the signal from there on (cli.exit_command).
    with supervisor.stop_signals_restored():
        code = _guarded(topology.given_local_rank or 0, prepared.resolved, prepared.run_dir, topology, job)
        _free_rank_objects()
    return code


def _guarded(local_rank: int, resolved: ResolvedOpts, run_dir: str, topology: Topology, job: Job,
             spawned: bool = False) -> int:
    """Run one rank here and turn its outcome into an exit code with a message."""
    from playground.launch.worker import run_rank
    rank = topology.global_rank(local_rank)
    try:
        result = run_rank(local_rank, resolved, run_dir, topology, job)
        # The run's results are written: a SIGTERM now (srun's to a finished step, a scheduler's at the time
        # limit) is too late to mean anything, and must not turn a finished run into exit 143.
        supervisor.ignore_stop_signals()
    except Preempted as stop:
        if rank == 0:
            print(f"playground: stopped by {stop}; a checkpoint was written. Re-run the same command "
                  f"(same --run-dir) to resume. Exit code {EXIT_STOPPED}.", file=sys.stderr)
        return EXIT_STOPPED
    except Fenced as err:
        print(fenced_line(err), file=sys.stderr)
        return EXIT_FENCED if spawned else EXIT_STOPPED
    except UserError as err:   # found once the run had started (a corrupt record): the run failed, exit 1
        print(f"playground: error{_on(rank, topology)}: {err}", file=sys.stderr)
        return EXIT_FAILED
    except PeerLost as err:
        print(f"playground: rank {rank} {err}", file=sys.stderr)
        return EXIT_PEER_LOST if spawned else EXIT_FAILED
    except Exception:
        traceback.print_exc()
        print(f"playground: the run failed{_on(rank, topology)} (traceback above)", file=sys.stderr)
        return EXIT_FAILED
    if result is not None:
        print_summary(result, run_dir)
    return EXIT_DONE


def fenced_line(err: Fenced) -> str:
    """The one line a fenced run prints before it exits EXIT_STOPPED."""
    return f"playground: stopped without writing: {err}. Exit code {EXIT_STOPPED}."


def _on(rank: int, topology: Topology) -> str:
    return f" on rank {rank}" if topology.world_size > 1 else ""


def _rank_entry(local_rank: int, resolved: ResolvedOpts, run_dir: str, topology: Topology, job: Job,
                lean: bool = False) -> None:
    """A spawned rank (it dies with this launcher: supervisor.start_ranks); `lean`: playground's own, it may stand
    in for torch._dynamo (launch/deferred_dynamo.py)."""
    if lean:
        deferred_dynamo.permit()
    # A rank that dies in native code (SIGSEGV, SIGABRT) prints the Python stack of each thread first.
    faulthandler.enable(all_threads=True)
    code = _guarded(local_rank, resolved, run_dir, topology, job, spawned=True)
    # This rank is done; a stop signal forwarded late must not turn its exit code into "killed by SIGTERM".
    supervisor.ignore_stop_signals()
    # The trainer is freed while the interpreter is whole (as _free_rank_objects explains), and this process,
    # which ends next, is spared the shutdown's collection over every object torch imported.
    freeze_for_exit()
    if code:
        sys.exit(code)


def _free_rank_objects() -> None:
    """Free the trainer (it holds reference cycles) while the interpreter is whole. Left to interpreter
    shutdown, DDP's process group is destroyed with gloo threads still holding Python objects, and the
    process aborts ("terminate called without an active exception") after a successful run."""
    gc.collect()


def _spawn(prepared, job: Job) -> int:
    topology: Topology = prepared.plan.topology
    if topology.num_shards == 1 and "MASTER_ADDR" not in os.environ:
        # One host: the ranks can meet on loopback (used by env:// rendezvous; spawned children inherit it).
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
    # The ranks get the opts resolved and validated here (pickled), and the job: neither is looked up again. In a
    # command's own process, ranks of a run that does not compile stand in for torch's compiler as it does.
    lean = deferred_dynamo.permitted() and not prepared.resolved.opts["model_param"].get("compile")
    preload = [name for name in RANK_PRELOAD if not (lean and name == deferred_dynamo.NAME)]
    ranks = supervisor.start_ranks(_rank_entry, (prepared.resolved, prepared.run_dir, topology, job, lean),
                                   topology.devices_per_host, preload=preload)

    def forward(_signum: int) -> None:
        for rank in ranks:
            supervisor.signal_child(rank)

    # A stopped rank is no failure: every rank checkpoints the same agreed iteration and exits EXIT_STOPPED.
    with supervisor.stop_signals_call(forward):
        exits, stopped = supervisor.wait_for_children(ranks, tolerated=(EXIT_DONE, EXIT_STOPPED))
    return _outcome(exits, ranks, topology, stopped)


def _outcome(exits: list[tuple[int, int]], processes: list, topology: Topology, stopped: set[int] = frozenset()) -> int:
    """The command's exit code, with one message naming the rank that failed first for a reason of its own,
    or, when the others only lost contact, the rank(s) that hung: still running when this launcher stopped them."""
    failures = [(index, code) for index, code in exits if code != EXIT_DONE]
    if not failures:
        return EXIT_DONE
    if all(code == EXIT_STOPPED for _, code in failures):
        return EXIT_STOPPED
    if any(code == EXIT_FENCED for _, code in failures):   # rank 0 said why; the others only lost it
        return EXIT_STOPPED
    own = [(index, code) for index, code in failures if code not in (EXIT_PEER_LOST, EXIT_STOPPED)]
    if own and all(index in stopped for index, _ in own):
        hung = ", ".join(f"rank {topology.global_rank(i)} (pid {processes[i].pid})" for i, _ in own)
        print(f"playground: {hung} hung: it stopped answering while the other ranks waited for it in a collective "
              "(distributed.collective_timeout), and was stopped. The last completed checkpoint is intact; re-run "
              "the same command to resume.", file=sys.stderr)
        return EXIT_FAILED
    own = [(index, code) for index, code in own if index not in stopped] or own
    if not own:
        print("playground: the ranks on this host stopped because they lost contact with a rank on another host "
              "(their messages above say what they learned); that host's output names it. The last completed "
              "checkpoint is intact; re-run the same command on every host to resume.", file=sys.stderr)
        return EXIT_FAILED
    index, code = own[0]
    rank, pid = topology.global_rank(index), processes[index].pid
    print(f"playground: rank {rank} (pid {pid}) {supervisor.how_it_ended(code)}; the other ranks were stopped. The "
          "last completed checkpoint is intact; re-run the same command to resume.", file=sys.stderr)
    return EXIT_FAILED


def _free_port() -> int:
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def print_summary(result: dict, run_dir: str) -> None:
    from playground.outputs.run_summary import summary_lines
    for line in summary_lines(result, run_dir):
        print(line)
