"""`sweep run`: the initialisation (study, planned trials) plus N agent slots in this process, on this host.

One `sweep run` per folder at a time (an flock on control/run.lock). SIGINT/SIGTERM stop claiming and stop the
running trials through SIGTERM (checkpoint, exit 75); they stay RUNNING in the study and the next `sweep run`
adopts them, resuming their own folders. control/PAUSE (`sweep pause`) does the same, and
a `sweep run` on a paused folder says so and exits 75. Failed attempts are retried by the restart policy. Re-running a finished sweep says "nothing to do" and exits 0.
"""
from __future__ import annotations

import fcntl
import os
import signal
import sys
import threading
import time
from typing import Any

from playground.restarts.policy import RestartPolicy
from playground.sweeps.agent import Agent, Outcome
from playground.sweeps.coordinator import Coordinator
from playground.sweeps.errors import SweepError
from playground.sweeps.folder import SweepFolder
from playground.sweeps.prepare import PreparedSweep
from playground.sweeps.study import budget, counted, initialize, load_study
from playground.sweeps.summary import write_summary

EXIT_STOPPED = 75


def run_sweep(prepared: PreparedSweep, sweep_dir: str, workers: int, quiet: bool = False) -> int:
    spec = prepared.spec
    folder = SweepFolder(sweep_dir)
    lock = lock_folder(folder)
    try:
        _clear_stale_journal_lock(folder)
        if folder.exists():
            folder.check_same_sweep(spec.raw, spec.identity())
        else:
            folder.write_spec(spec.raw, spec.identity())
        study = load_study(folder, spec.searcher, spec.objectives, create=True)
        initialize(study, spec, prepared.upf_lines, prepared.priors)
        total = budget(spec, prepared.upf_lines)
        if folder.paused():
            _say(f"sweep {folder.root} is paused ({folder.pause_flag}); `playground sweep resume {folder.root}`, "
                 f"then re-run this command to continue. Exit code {EXIT_STOPPED}.", quiet)
            return EXIT_STOPPED
        if _finished(study, total):
            write_summary(study, folder, spec.objectives)
            _say(f"sweep {folder.root}: nothing to do ({total} trials finished)", quiet)
            return 0
        return _run_slots(study, spec, folder, total, workers, quiet)
    finally:
        lock.close()


def _run_slots(study: Any, spec, folder: SweepFolder, total: int, workers: int, quiet: bool) -> int:
    coordinator = Coordinator(study, spec, folder, total)
    stopping = threading.Event()
    summary_lock = threading.Lock()
    done = [sum(1 for t in counted(study.get_trials(deepcopy=False)) if t.state.is_finished())]

    def on_end(trial_id: str, outcome: Outcome) -> None:
        with summary_lock:
            done[0] += 1
            value = "" if not outcome.values else " " + ", ".join(
                f"{o.metric}={v:.6g}" for o, v in zip(spec.objectives, outcome.values))
            _say(f"[sweep] {trial_id} {outcome.state}{value} ({outcome.seconds:.1f} s) {done[0]}/{total}", quiet)
            write_summary(study, folder, spec.objectives)

    policy = RestartPolicy(spec.max_restarts, spec.log_policies, used=folder.restarts_used())
    agent = Agent(spec, folder, coordinator, stopping, workers, on_end, policy)

    def stop(signum: int, _frame: Any) -> None:
        stopping.set()
        agent.stop_all()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    _say(f"sweep {folder.root}: {spec.searcher_name}, {total} trials, {workers} slot(s)", quiet)
    threads = [threading.Thread(target=agent.run_slot, args=(slot,), name=f"slot{slot}", daemon=True)
               for slot in range(workers)]
    for thread in threads:
        thread.start()
    try:
        while any(t.is_alive() for t in threads):
            time.sleep(0.1)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    write_summary(study, folder, spec.objectives)
    if folder.paused() and not stopping.is_set():
        _say(f"sweep paused; running trials checkpointed. `playground sweep resume {folder.root}`, then re-run "
             f"the same command to continue them. Exit code {EXIT_STOPPED}.", quiet)
        return EXIT_STOPPED
    if stopping.is_set():
        _say(f"sweep stopped; running trials checkpointed. Re-run the same command to continue. "
             f"Exit code {EXIT_STOPPED}.", quiet)
        return EXIT_STOPPED
    return 0


def _finished(study: Any, total: int) -> bool:
    trials = study.get_trials(deepcopy=False)   # extra trials (sweep continue) too: they must run
    return len(counted(trials)) >= total and all(t.state.is_finished() for t in trials)


def lock_folder(folder: SweepFolder):
    """The folder's run lock (flock on control/run.lock): one writer of the study at a time."""
    os.makedirs(folder.control, exist_ok=True)
    handle = open(os.path.join(folder.control, "run.lock"), "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise SweepError(f"{folder.root}: another `sweep run` is working on this folder") from None
    return handle


def _clear_stale_journal_lock(folder: SweepFolder) -> None:
    """A sweep killed while writing the journal leaves optuna's lock file; we hold the folder's run lock, so no
    other writer exists and waiting out optuna's 30 s grace period would only delay the resume."""
    try:
        os.unlink(folder.journal + ".lock")
    except FileNotFoundError:
        pass


def _say(line: str, quiet: bool) -> None:
    if not quiet:
        print(line, file=sys.stderr, flush=True)
