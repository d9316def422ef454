"""Runs a Determined experiment's entrypoint command on N ranks, as Determined's agent and launch layer did:
the runner of `playground run EXPERIMENT.yaml` (det-config turns the YAML into `run_command`'s arguments).

- Each attempt: det_cluster.json (cluster_file.py) with the trial's newest complete Core API checkpoint as
  `latest_checkpoint` (core_files.py), then the command (playground/processes/child_group.py), cwd the context
  dir: once per slot with torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
  GROUP_WORLD_SIZE, MASTER_ADDR, MASTER_PORT: gloo on loopback) when the entrypoint is a Trial class or has
  Determined's launch layer prefix, else once per node (this host) without them, as Determined starts an
  entrypoint once per container (entrypoint.py: launches_per_slot); every process gets PLAYGROUND_DETERMINED
  (the cluster file), PLAYGROUND_DETERMINED_PORT (DistributedContext's object exchange), PYTHONPATH with
  playground/compat/determined/on_path first, so `import determined` is playground's in these processes only,
  and this interpreter's folder first on PATH (a script's own `python3 -m determined.launch...` is this one).
- Their output goes to this terminal and the run folder's train.log (`[rank N] ` before each line of a rank
  other than 0); CUDA out-of-memory lines cancel retries (restarts/policy.py).
- SIGTERM/SIGINT here is passed on to every rank (should_preempt() becomes True; the script checkpoints and
  returns); a second one stops them. When one rank fails, the others get a grace period, then are stopped.
- Exit codes: 0 done; 75 stopped: a rank exited 75, or the script returned after acknowledging a preemption
  (det_preempted), or the ranks died of the stop signals this runner passed on (the checkpoints stay; re-run to
  resume); 2 the command cannot be run or a rank exited 2 (argparse's usage error); 1 failed. Failures are
  retried up to max_restarts (restarts/policy.py), each attempt a line of attempts.jsonl (only when
  max_restarts > 0, as `playground run --max-restarts`: a sweep's agent keeps that file for its trials).
- The run folder's contract: opts.json (`{"opts": {experiment_config, hparams, command}, "determined": true}`),
  train.log; metrics.jsonl is the API's (the Core API writes it, compat/determined/core/_reports.py).
"""
from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from typing import Any, Callable

from playground.determined import checkpoint_retention, core_files
from playground.determined.cluster_file import CLUSTER_ENV, write_cluster_file
from playground.determined.entrypoint import launches_per_slot, entrypoint_command, entrypoint_problem
from playground.determined.object_exchange import PORT_ENV   # DistributedContext's object exchange
from playground.outputs.atomic_files import write_json
from playground.outputs.run_folder import RunFolder
from playground.processes import supervisor
from playground.processes.child_group import ChildGroup, Ending
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_STOPPED, EXIT_USAGE
from playground.restarts.attempts import append_attempt, next_attempt
from playground.restarts.fence import Fence
from playground.restarts.policy import LogPolicy, RestartPolicy
from playground.restarts.supervisor import attempt_ended

# playground/compat/determined/on_path holds the module `determined`; found by path, so this floor never imports
# the compatibility layer.
ON_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat", "determined",
                       "on_path")


def run_command(command: list[str], context_dir: str, run_dir: str, cluster_info: dict, slots: int,
                max_restarts: int, test_mode: bool, per_slot: bool | None = None) -> int:
    """Run `command` on `slots` slots in `run_dir`, once per slot or once per node (`per_slot`; None: as the
    command says, entrypoint.launches_per_slot), attempts as the module doc says; playground's exit code."""
    problem = _usage_problem(command, context_dir, slots, max_restarts)
    if problem:
        print(f"playground: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    per_slot = launches_per_slot(command) if per_slot is None else per_slot
    command = entrypoint_command(command)    # a leading python is this one; Determined's launch layer dropped
    run_dir = os.path.abspath(run_dir)
    try:
        os.makedirs(run_dir, exist_ok=True)
        Fence.from_env(run_dir).check("opts.json")
        write_json(RunFolder(run_dir).opts, {
            "opts": {"experiment_config": cluster_info.get("experiment_config"),
                     "hparams": cluster_info.get("hparams"), "command": command}, "determined": True})
    except OSError as err:
        print(f"playground: error: run folder {run_dir}: cannot write there: {err.strerror}", file=sys.stderr)
        return EXIT_USAGE
    runner = _Runner(command, os.path.abspath(context_dir), run_dir, cluster_info, slots, test_mode, per_slot)
    # SIGTERM/SIGINT: SIGTERM to every rank (they checkpoint and return); a second: SIGKILL them now.
    ranks = ChildGroup(scan=RestartPolicy(0).matching, tolerated=(EXIT_DONE, EXIT_STOPPED),
                       kill_on_second_stop=True, whole_lines=True)
    code = ranks.run(_attempts(runner, run_dir, max_restarts))
    if code == EXIT_DONE:     # the trial completed: Determined's retention (checkpoint_retention.py)
        checkpoint_retention.apply(run_dir, cluster_info.get("experiment_config") or {})
    return code


def _attempts(runner: "_Runner", run_dir: str, max_restarts: int) -> Callable[[ChildGroup], int | None]:
    """One attempt of the run, for ChildGroup.run: its exit code, or None when the restart policy retries it."""
    if not max_restarts:      # one attempt, no attempts.jsonl: as `playground run` without --max-restarts
        return lambda ranks: runner.attempt(ranks)[0]   # (a sweep's agent keeps that file for its trials)
    policy = RestartPolicy(max_restarts)

    def attempt(ranks: ChildGroup) -> int | None:
        number = next_attempt(run_dir)
        started = time.time()
        append_attempt(run_dir, {"attempt": number, "start": started})
        code, matched = runner.attempt(ranks)
        decision = policy.decide(code, matched, stop_asked=ranks.stops > 0)
        return None if attempt_ended(run_dir, number, started, code, decision) else code
    return attempt


def _usage_problem(command: list[str], context_dir: str, slots: int, max_restarts: int) -> str | None:
    if not command or not all(isinstance(part, str) for part in command):
        return f"entrypoint: expected a command (a list of strings), got {command!r}"
    if entrypoint_problem(command):
        return entrypoint_problem(command)
    if not os.path.isdir(context_dir):
        return f"context directory {context_dir}: no such folder (the experiment configuration's folder)"
    if not isinstance(slots, int) or slots < 1:
        return f"resources.slots_per_trial: expected a whole number of at least 1, got {slots!r}"
    if not isinstance(max_restarts, int) or max_restarts < 0:
        return f"max_restarts: expected a whole number of at least 0, got {max_restarts!r}"
    return None


TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
                      "ROLE_RANK", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def rank_environment(rank: int | None, slots: int, cluster_path: str, context_dir: str, master_port: int,
                     exchange_port: int) -> dict[str, str]:
    """The environment of rank `rank` of `slots`, or (rank None) of the one process of a node."""
    env = {k: v for k, v in os.environ.items() if rank is not None or k not in TORCHRUN_VARIABLES}
    path = [ON_PATH, context_dir, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env.update({CLUSTER_ENV: cluster_path, PORT_ENV: str(exchange_port), "PYTHONPATH": os.pathsep.join(path),
                "PATH": os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", os.defpath)]),
                "PYTHONUNBUFFERED": "1"})
    if rank is not None:
        env.update({"RANK": str(rank), "WORLD_SIZE": str(slots), "LOCAL_RANK": str(rank),
                    "LOCAL_WORLD_SIZE": str(slots), "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1",
                    "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": str(slots), "MASTER_ADDR": "127.0.0.1",
                    "MASTER_PORT": str(master_port)})
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Runner:
    def __init__(self, command: list[str], context_dir: str, run_dir: str, cluster_info: dict, slots: int,
                 test_mode: bool, per_slot: bool = True) -> None:
        self.command, self.context_dir, self.run_dir = command, context_dir, run_dir
        self.cluster_info, self.slots, self.test_mode = cluster_info, slots, test_mode
        self.per_slot = per_slot or slots == 1     # one slot: the node's process is rank 0 of 1
        self.fence = Fence.from_env(run_dir)

    def cluster_record(self) -> dict[str, Any]:
        latest = core_files.latest_checkpoint(self.run_dir)
        return {**self.cluster_info, "run_dir": self.run_dir, "slots_per_trial": self.slots,
                "checkpoint_dir": self.cluster_info.get("checkpoint_dir") or RunFolder(self.run_dir).checkpoints,
                "latest_checkpoint": latest["storage_id"] if latest else self.cluster_info.get("latest_checkpoint"),
                "test_mode": bool(self.test_mode)}

    def attempt(self, ranks: ChildGroup) -> tuple[int, LogPolicy | None]:
        """Start the command once per slot (or once), their output teed to train.log too; the attempt's exit
        code and the log policy their output matched."""
        cluster_path = write_cluster_file(self.run_dir, self.cluster_record())
        core_files.take_preempted(self.run_dir)
        ports = (free_port(), free_port())
        with open(RunFolder(self.run_dir).log, "a", encoding="utf-8") as log:
            def to_log(text: str) -> None:
                if not self.fence.superseded():
                    log.write(text)
                    log.flush()

            for rank in range(self.slots if self.per_slot else 1):
                env = rank_environment(rank if self.per_slot else None, self.slots, cluster_path, self.context_dir,
                                       *ports)
                try:
                    ranks.start(self.command, prefix=f"[rank {rank}] " if rank else "", log=to_log,
                                cwd=self.context_dir, env=env, stdin=subprocess.DEVNULL)
                except OSError as err:
                    print(f"playground: error: entrypoint {shlex.join(self.command)}: cannot start it: "
                          f"{err.strerror}", file=sys.stderr)
                    ranks.abandon()
                    return EXIT_USAGE, None
            ending = ranks.wait()
        return self._outcome(ending, ranks.stops), ending.found

    def _stored_checkpoints(self) -> bool:
        """Whether the trial has a checkpoint to resume from: a Core API one, or a Trial API one."""
        folder = RunFolder(self.run_dir).checkpoints
        return bool(core_files.checkpoints(self.run_dir)) or (
            os.path.isdir(folder) and any(name.endswith(".pt") for name in os.listdir(folder)))

    def _outcome(self, ending: Ending, stops: int) -> int:
        codes = ending.codes
        preempted = core_files.take_preempted(self.run_dir)
        if all(code == EXIT_DONE for code in codes):
            return EXIT_STOPPED if preempted else EXIT_DONE
        if all(code in (EXIT_DONE, EXIT_STOPPED) for code in codes):
            return EXIT_STOPPED
        stop_deaths = (-signal.SIGTERM, -signal.SIGINT)     # the stop signal this runner passed on, and
        if stops > 1:                                       # the kill of a second one
            stop_deaths += (-signal.SIGKILL,)
        if stops and all(code in (EXIT_DONE, EXIT_STOPPED, *stop_deaths) for code in codes):
            print("playground: the ranks ended on the stop signal; the trial's checkpoints are kept (re-run to "
                  "resume from the latest)", file=sys.stderr)
            return EXIT_STOPPED
        # the first to fail on its own comes first
        rank, code = next((rank, code) for rank, code in ending.exits if code not in (EXIT_DONE, EXIT_STOPPED))
        if code == EXIT_USAGE:
            print(f"playground: rank {rank} of {shlex.join(self.command)} exited with code 2 (a usage error; its "
                  "message is above)", file=sys.stderr)
            return EXIT_USAGE
        kept = ("the checkpoints it stored are kept (re-run to resume)" if self._stored_checkpoints()
                else "it stored no checkpoint (a re-run starts afresh)")
        print(f"playground: rank {rank} (pid {ending.children[rank].pid}) of {shlex.join(self.command)} "
              f"{supervisor.how_it_ended(code)}; {kept}", file=sys.stderr)
        return EXIT_FAILED
