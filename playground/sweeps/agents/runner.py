"""Agent processes: `sweep run` (the initialisation, then N agent slots on this host) and `sweep agent` (N slots
anywhere that sees the sweep folder and the storage, reading the resolved spec from sweep.json).

Any number of agent processes may work on one sweep: each beats its heartbeat (control/agents/), adopts only
trials whose lease expired and fences its writes by claim files (agent.py). Initialisations take turns (an
flock on control/run.lock, held only while the study is created and its planned trials enqueued). SIGINT/SIGTERM
stop claiming and stop the running trials through SIGTERM (checkpoint, exit 75): they are released, and the
next agent resumes their own folders. control/PAUSE (`sweep pause`) does the same, and an agent started on a
paused folder says so and exits 75. A failure in a slot (agent.SlotFailed: a full disk, any error) stops the
other slots the same way, then exits 1 with one line naming it. Exit codes: 0 nothing left to do and no trial
failed, 1 a slot failed or, once nothing is left to do, trials failed (endings.py; 0 with --allow-failed-trials),
2 unusable spec or folder, 75 stopped. The last line says which (endings.py).
"""
from __future__ import annotations

import fcntl
import gc
import os
import signal
import sys
import threading
import time
from typing import IO, Any, Callable

from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_STOPPED
from playground.processes.supervisor import stop_signals_call
from playground.restarts.policy import RestartPolicy
from playground.sweeps.agents.agent import Agent, Outcome, SlotFailed
from playground.sweeps.agents.coordinator import Coordinator
from playground.sweeps.agents.endings import done_ending, stopped_trials
from playground.sweeps.agents.heartbeat import AgentId, Heartbeat, agents_maybe_alive, heartbeat_path, read_heartbeats
from playground.sweeps.errors import SweepError
from playground.sweeps.files.module_maps import record_module_map, use_sweep_module_map
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.prepare import PreparedSweep, prepare_sweep, resumed_sweep
from playground.sweeps.inputs.spec import SweepSpec, agent_settings, parse_spec
from playground.sweeps.inputs.storage_url import JOURNAL
from playground.sweeps.results.live import LiveReports
from playground.sweeps.results.summary import ReportCache, write_summary
from playground.sweeps.search.retrying import StorageUnavailable
from playground.sweeps.search.storages import locate
from playground.sweeps.search.study import BudgetTally, budget, counted, initialize, load_study, space_note


def run_sweep(prepared: PreparedSweep, sweep_dir: str, workers: int, quiet: bool = False,
              storage: str | None = None, allow_failed: bool = False) -> int:
    """`sweep run`: create or check the sweep folder and its study, then work on it as one agent. `storage`:
    --storage URL (default: the spec's `storage`, else what sweep.json recorded, else the journal);
    `allow_failed`: --allow-failed-trials, exit 0 when the sweep is done even if trials failed (endings.py)."""
    spec = prepared.spec
    folder = SweepFolder(sweep_dir)
    lock = init_lock(folder)
    try:
        if folder.exists():
            folder.check_same_sweep(spec.raw, spec.identity())
            folder.record_budget(spec.raw)
        else:
            folder.write_spec(spec.raw, spec.identity())
        record_module_map(folder)
        return _agent(prepared, folder, workers, quiet, lock, storage=storage or prepared.spec.storage,
                      allow_failed=allow_failed)
    finally:
        lock.close()


def run_agent(sweep_dir: str, workers: int, quiet: bool = False, storage: str | None = None,
              allow_failed: bool = False) -> int:
    """`sweep agent DIR`: work on an existing sweep as one more agent (the spec comes from DIR/sweep.json)."""
    folder = SweepFolder(sweep_dir)
    spec = parse_spec(folder.read_spec()["spec"], folder.root, origin=folder.spec_file)
    use_sweep_module_map(folder, spec.base)
    light = resumed_sweep(spec)
    lock = init_lock(folder)
    try:
        if light is None:
            return _agent(prepare_sweep(spec), folder, workers, quiet, lock, storage=storage, allow_failed=allow_failed)
        return _agent(light, folder, workers, quiet, lock, prepare=lambda: prepare_sweep(spec), storage=storage,
                      allow_failed=allow_failed)
    finally:
        lock.close()


def init_lock(folder: SweepFolder) -> IO:
    """Agents start one at a time (an flock on control/run.lock, waited for): each is released once its study
    is open and initialised, so any number of agents then work alongside."""
    os.makedirs(folder.control, exist_ok=True)
    handle = open(os.path.join(folder.control, "run.lock"), "a+")
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def _agent(prepared: PreparedSweep, folder: SweepFolder, workers: int, quiet: bool, lock: IO,
           prepare: Callable[[], PreparedSweep] | None = None, storage: str | None = None,
           allow_failed: bool = False) -> int:
    """One agent process on `folder`, started under the init `lock`. `prepare`: `prepared` is resumed_sweep's
    (nothing validated); prepare() validates and plans, needed only when the study lacks its planned trials."""
    spec = prepared.spec
    heartbeat_seconds, grace = agent_settings(spec.raw)
    me = AgentId.this_process()
    if locate(folder, storage).storage.kind == JOURNAL:
        _clear_stale_journal_lock(folder, me)   # never under a `sweep serve`, the journal's writer then
    if spec.searcher_name == "adaptive_asha":
        _refuse_a_second_asha_agent(folder, me)
    coordinators: list[Coordinator] = []
    heartbeat = Heartbeat(folder.control, me, heartbeat_seconds,
                          lambda: coordinators[0].trials() if coordinators else [])
    heartbeat.start()
    try:
        study = load_study(folder, spec.searcher, spec.objectives, create=True, storage=storage)
        if prepare is not None and not study.user_attrs.get("initialized"):
            prepared = prepare()     # the first agent of a submitted sweep: checks and plans every trial
            spec = prepared.spec
        initialize(study, spec, prepared.upf_lines, prepared.priors)
        total = budget(spec, prepared.upf_lines)
        if folder.paused():
            _say(f"sweep {folder.root} is paused ({folder.pause_flag}); `playground sweep resume {folder.root}`, "
                 f"then re-run this command to continue. Exit code {EXIT_STOPPED}.", quiet)
            return EXIT_STOPPED
        if _finished(study, total):
            write_summary(study, folder, spec.objectives)
            _say(f"sweep {folder.root}: nothing to do ({total} trials finished)", quiet)
            return _done(study, allow_failed, quiet)
        coordinators.append(Coordinator(study, spec, folder, total, me=me, grace=grace))
        lock.close()     # started: the next agent may start alongside
        code = _run_slots(coordinators[0], study, spec, folder, total, workers, quiet)
        return _done(study, allow_failed, quiet) if code == EXIT_DONE else code
    finally:
        heartbeat.stop()


def _run_slots(coordinator: Coordinator, study: Any, spec: SweepSpec, folder: SweepFolder, total: int,
               workers: int, quiet: bool) -> int:
    stopping = threading.Event()
    summary_lock = threading.Lock()
    ended_here = [0]
    cache = ReportCache(seed_from_summary=True)   # this agent may join a sweep of thousands of finished trials
    tally = BudgetTally()

    def refresh() -> None:
        first = not cache.rows
        write_summary(study, folder, spec.objectives, cache)
        if first:
            _keep_out_of_collections()   # the rows of every trial, made once

    reports = LiveReports(refresh)
    cache.pace = reports.pace
    _keep_out_of_collections()           # the study's trials, replayed at the start

    def on_end(trial_id: str, outcome: Outcome) -> None:
        with summary_lock:
            ended_here[0] += 1
            now = coordinator.total      # the budget as last read: `sweep run` may change it meanwhile
            done = tally.update(study.get_trials(deepcopy=False)).finished_in_budget(now)
            value = "" if not outcome.values else " " + ", ".join(
                f"{o.metric}={v:.6g}" for o, v in zip(spec.objectives, outcome.values))
            extra = trial_id in tally.extra
            _say(f"[sweep] {trial_id} {outcome.state}{value} ({outcome.seconds:.1f} s) "
                 + (f"extra, outside the budget ({done}/{now})" if extra else f"{done}/{now}"), quiet)
        reports.update()

    policy = RestartPolicy(spec.max_restarts, spec.log_policies, used=folder.restarts_used())
    agent = Agent(spec, folder, coordinator, stopping, workers, on_end, policy)

    def stop(_signum: int) -> None:
        stopping.set()
        agent.stop_all()

    try:
        with stop_signals_call(stop):   # the running trials checkpoint and exit 75
            note = space_note(spec)
            if note:
                _say(note, quiet)
            _say(f"sweep {folder.root}: {spec.searcher_name}, {total} trials, agent {coordinator.me.name} with "
                 f"{workers} slot(s)", quiet)
            lost: list[StorageUnavailable] = []
            failed: list[SlotFailed] = []

            def run_slot(slot: int) -> None:
                try:
                    agent.run_slot(slot)
                except StorageUnavailable as err:   # past the retry bound: stop every slot, trials checkpoint
                    lost.append(err)
                    stop(signal.SIGTERM)
                except SlotFailed as err:           # anything else: the same, then exit 1 naming it
                    failed.append(err)
                    stop(signal.SIGTERM)

            threads = [threading.Thread(target=run_slot, args=(slot,), name=f"slot{slot}", daemon=True)
                       for slot in range(workers)]
            for thread in threads:
                thread.start()
            while any(t.is_alive() for t in threads):
                time.sleep(0.1)
    except BaseException:
        reports.close(final=False)
        raise
    finally:
        agent.close()
    if failed or lost:
        reports.close(final=False)
    trials_left = stopped_trials(agent.left, agent.limits.grace)
    if failed:
        more = f" ({len(failed) - 1} more slot(s) failed while stopping)" if len(failed) > 1 else ""
        others = f"the other running trials: {trials_left}" if agent.left else "no other trial was running"
        print(f"sweep failed: {failed[0]}{more}; {others}. Mend the cause, then re-run the same command to "
              f"continue. Exit code {EXIT_FAILED}.", file=sys.stderr, flush=True)
        return EXIT_FAILED
    if lost:
        _say(f"sweep stopped: {lost[0]}; {trials_left}. Exit code {EXIT_STOPPED}.", quiet)
        return EXIT_STOPPED
    halted = stopping.is_set() or folder.paused()
    # the final reports; an agent whose trials were all adopted away leaves them alone
    reports.close(final=halted or ended_here[0] > 0)
    if folder.paused() and not stopping.is_set():
        _say(f"sweep paused: {trials_left}. `playground sweep resume {folder.root}`, then re-run the same command "
             f"to continue. Exit code {EXIT_STOPPED}.", quiet)
        return EXIT_STOPPED
    if stopping.is_set():
        _say(f"sweep stopped: {trials_left}. Re-run the same command to continue. Exit code {EXIT_STOPPED}.", quiet)
        return EXIT_STOPPED
    return EXIT_DONE


def _done(study: Any, allow_failed: bool, quiet: bool) -> int:
    """The last line of an agent with nothing left to do, and its exit code: 1 when trials failed (endings.py);
    said also with --quiet then, as every failure is."""
    code, line = done_ending(study.get_trials(deepcopy=False), allow_failed)
    _say(line, quiet and code == EXIT_DONE)
    return code


def _keep_out_of_collections() -> None:
    """The objects alive now (a study of thousands of trials, their report rows) live as long as the agent: the
    garbage collector's full passes leave them out (gc.freeze), or each pass would stop every slot for the time
    it takes to scan them all (about a second at 10,000 trials on a loaded machine)."""
    gc.freeze()


def _finished(study: Any, total: int) -> bool:
    trials = study.get_trials(deepcopy=False)   # extra trials (sweep continue) too: they must run
    return len(counted(trials)) >= total and all(t.state.is_finished() for t in trials)


def lock_folder(folder: SweepFolder):
    """The folder to oneself (for `summary --rebuild`): no agent starting, none that might be alive."""
    os.makedirs(folder.control, exist_ok=True)
    handle = open(os.path.join(folder.control, "run.lock"), "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise SweepError(f"{folder.root}: an agent is starting on this folder") from None
    alive = agents_maybe_alive(folder.control)
    if alive:
        handle.close()
        raise SweepError(f"{folder.root}: agents may be working on this folder ({', '.join(alive)}); stop them "
                         f"first (an agent on another host that is gone: remove its control/agents/<name>.json)")
    return handle


def _clear_stale_journal_lock(folder: SweepFolder, me: AgentId) -> None:
    """A process killed while appending to the journal leaves optuna's lock file, which optuna breaks only after
    30 s. It is removed at once when no agent that might be alive remains: every other heartbeat is of this
    host with its process gone (those heartbeats are removed too). Runs under the init lock, before this
    agent's own heartbeat exists, so two starting agents never both decide it."""
    if agents_maybe_alive(folder.control, me):
        return
    others = [b for b in read_heartbeats(folder.control) if b.get("agent") != me.name]
    for beat in others:
        try:
            os.unlink(heartbeat_path(folder.control, str(beat.get("agent"))))
        except (FileNotFoundError, TypeError):
            pass
    try:
        os.unlink(folder.journal + ".lock")
    except FileNotFoundError:
        pass


def _refuse_a_second_asha_agent(folder: SweepFolder, me: AgentId) -> None:
    """Adaptive ASHA's rungs live in this process and searcher.json: a second agent would overwrite them."""
    others = agents_maybe_alive(folder.control, me)
    if others:
        raise SweepError(f"{folder.root}: adaptive_asha runs in one agent process (its rungs live in searcher.json) "
                         f"and {', '.join(others)} may be working on it; give that agent more --workers instead "
                         f"(an agent on another host that is gone: remove its control/agents/<name>.json)")


def _say(line: str, quiet: bool) -> None:
    if not quiet:
        print(line, file=sys.stderr, flush=True)
