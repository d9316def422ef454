"""Preemption (playground/checkpoints/preemption.py, checkpointer.py): SIGTERM or SIGINT finishes the iteration,
writes a checkpoint and exits with 75; re-running the same command resumes as if nothing happened."""
from __future__ import annotations

import os
import random
import signal
import time

import pytest

from playground.checkpoints import preemption
from playground.checkpoints.preemption import EXIT_PREEMPTED, Preemption
from tests.conftest import HANG
from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, checkpoint_opts, kill_group,
                                                           wait_gone)


def test_a_signal_is_a_stop_request_and_only_a_late_second_one_interrupts(monkeypatch):
    monkeypatch.setattr(preemption, "REPEAT_GRACE_SECONDS", 0.2)
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    stop = Preemption()
    stop.install()
    try:
        assert not stop.should_stop(world_size=1, global_iter=0)
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.signal_name == "SIGTERM" and stop.should_stop(world_size=1, global_iter=0)
        os.kill(os.getpid(), signal.SIGINT)      # the same request again (e.g. forwarded by the launcher)
        time.sleep(0.3)
        with pytest.raises(KeyboardInterrupt, match="second signal"):
            os.kill(os.getpid(), signal.SIGINT)  # a person insisting: stop now
    finally:
        stop.uninstall()
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


SLOWER = {"PLAYGROUND_TEST_ITER_SLEEP": "0.03"}   # 48 iterations take 1.5 s: two interruptions fit in


def interrupt(run: RunFolder, ranks: int, send, rng: random.Random) -> None:
    """One session stopped by `send(process)` a moment into training: it must exit 75 after a checkpoint."""
    process = run.start()
    assert run.wait_for_training(process, ranks), run.output()
    time.sleep(rng.uniform(0.05, 0.3))
    send(process)
    code = process.wait(timeout=HANG)
    output = run.output()
    assert code == EXIT_PREEMPTED, output
    assert "a checkpoint was written" in output and "Exit code 75" in output
    info = (run.dir / "checkpoints" / "ckpt.log").read_text().splitlines()
    assert any("preemption checkpoint" in line or "epoch checkpoint" in line for line in info[-3:]), info


@pytest.mark.slow
def test_sigterm_and_sigint_stop_a_single_process_run_that_then_resumes_exactly(tmp_path, uninterrupted):
    run = RunFolder(tmp_path, "preempted", checkpoint_opts(), env=SLOWER)
    rng = random.Random(1)
    interrupt(run, 1, lambda p: os.kill(p.pid, signal.SIGTERM), rng)              # the scheduler
    interrupt(run, 1, lambda p: kill_group(p, signal.SIGINT), rng)                # Ctrl-C in a terminal
    code, output = run.run(env=UNHINDERED)
    assert code == 0, output
    assert_same_training_state(run.checkpoint(), uninterrupted(1).run.checkpoint())
    assert_same_records(run, uninterrupted(1).run)


@pytest.mark.slow
def test_sigterm_stops_both_ranks_of_a_gloo_run_that_then_resumes_exactly(tmp_path, uninterrupted):
    run = RunFolder(tmp_path, "preempted2", checkpoint_opts(ranks=2), env=SLOWER)
    rng = random.Random(2)
    interrupt(run, 2, lambda p: os.kill(p.pid, signal.SIGTERM), rng)      # to the launcher, which forwards it
    interrupt(run, 2, lambda p: kill_group(p, signal.SIGTERM), rng)       # to every process of the job at once
    code, output = run.run(env=UNHINDERED)
    assert code == 0, output
    assert_same_training_state(run.checkpoint(), uninterrupted(2).run.checkpoint())
    assert_same_records(run, uninterrupted(2).run)


@pytest.mark.slow
def test_a_sigkill_of_the_launcher_is_reported_as_its_death_and_the_run_resumes_exactly(tmp_path, uninterrupted):
    # The ranks get SIGTERM from the kernel when the launcher dies (PR_SET_PDEATHSIG); nobody sent a SIGTERM.
    run = RunFolder(tmp_path, "orphaned", checkpoint_opts(ranks=2), env=SLOWER)
    process = run.start()
    assert run.wait_for_training(process, 2), run.output()
    pids = list(run.rank_pids().values())
    time.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait(timeout=60) == -signal.SIGKILL
    wait_gone(pids, timeout=120)
    output = run.output()
    assert f"playground: stopped by the death of its launcher (pid {process.pid}); a checkpoint was written" in output
    assert "SIGTERM" not in output, output
    code, output = run.run(env=UNHINDERED)
    assert code == 0, output
    assert_same_training_state(run.checkpoint(), uninterrupted(2).run.checkpoint())
    assert_same_records(run, uninterrupted(2).run)


# Run by each interpreter that starts with the run's PYTHONPATH: in an attempt that --max-restarts starts (its
# command has no --max-restarts), while its interpreter starts, a stop to the whole group, as a scheduler's would be.
STOP_AT_ATTEMPT_START = """
import os, signal, sys
if "--max-restarts" not in sys.orig_argv and "--run-dir" in sys.orig_argv:
    os.killpg(0, signal.SIGTERM)
"""


def test_a_stop_while_an_attempts_interpreter_starts_ends_it_with_75_and_a_checkpoint(tmp_path):
    # The attempt starts with the stop signals blocked until its entry point holds them (start_child holds_stop):
    # before, it died by SIGTERM (143, no checkpoint) and so did the command.
    run = RunFolder(tmp_path, "attempt", checkpoint_opts(), env=UNHINDERED)
    (tmp_path / "sitecustomize.py").write_text(STOP_AT_ATTEMPT_START)
    code, output = run.run("--max-restarts", "2")
    assert code == EXIT_PREEMPTED, output
    assert "a checkpoint was written" in output and "killed by SIGTERM" not in output, output
    assert run.checkpoint()["model"]


@pytest.mark.parametrize("ranks, restarts", [(1, False), (1, True), (2, False)])
def test_a_sigterm_while_the_run_starts_is_kept_and_ends_it_with_75_and_the_rerun_resumes(tmp_path, uninterrupted,
                                                                                          ranks, restarts,
                                                                                          monkeypatch):
    # Before the run's stop handler exists (torch still importing): kept by the entry point (processes/held_stop.py)
    # and taken by the handler; a launcher passes it on to ranks that are themselves still starting. A fresh
    # interpreter, not one forked from the test zygote (which has imported torch: the run would be training).
    monkeypatch.setenv("PLAYGROUND_TEST_ZYGOTE", "0")
    run = RunFolder(tmp_path, "early", checkpoint_opts(ranks=ranks), env=UNHINDERED)
    process = run.start(*(["--max-restarts", "2"] if restarts else []))
    time.sleep(0.3)
    assert process.poll() is None and not run.rank_pids(), run.output()    # still starting
    kill_group(process, signal.SIGTERM)                                     # Slurm: every process of the step
    code = process.wait(timeout=HANG)
    output = run.output()
    assert code == EXIT_PREEMPTED, output
    if restarts:   # the supervisor, asked before its first attempt began, begins none
        assert "stopped before attempt 1 started" in output or "a checkpoint was written" in output, output
    else:
        assert "stopped by SIGTERM; a checkpoint was written" in output, output
    code, output = run.run(env=UNHINDERED)
    assert code == 0, output
    assert_same_training_state(run.checkpoint(), uninterrupted(ranks).run.checkpoint())
    assert_same_records(run, uninterrupted(ranks).run)
