"""Exact resume under SIGKILL at random moments, single-process and 2-process gloo (playground/checkpoints/checkpointer.py,
the trainer's state, batch_stream.py): the same command, re-run after each kill, must end where an uninterrupted
run ends, bitwise, with the same record points."""
from __future__ import annotations

import glob
import os
import random
import signal
import time

import pytest

from tests.conftest import HANG
from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, checkpoint_opts, kill_group,
                                                           wait_gone)

pytestmark = pytest.mark.slow


def kill_at_random_moments(run: RunFolder, kills: int, ranks: int, startup: float, training: float,
                           seed: int) -> dict[str, int]:
    """Start the command, SIGKILL it at a seeded random moment, `kills` times; count what the kills hit.

    A kill lands in start-up and restore one time in five, else within the training still to do (estimated
    from the `last` checkpoint). With several ranks, kills alternate between the whole process group and one
    rank (the launcher then stops the other).
    """
    rng = random.Random(seed)
    seen = {"kills": 0, "in_start_up": 0, "during_a_write": 0, "session_finished_first": 0}
    for kill in range(kills):
        remaining = training * (1.0 - run.progress())
        process = run.start()
        if rng.random() < 0.2:
            time.sleep(rng.uniform(0.2, startup))
            seen["in_start_up"] += 1
        elif run.wait_for_training(process, ranks):
            time.sleep(rng.uniform(0.0, 0.8 * remaining))
        if process.poll() is not None:
            assert process.returncode == 0, run.output()
            seen["session_finished_first"] += 1
            break
        pids = list(run.rank_pids().values())
        if ranks > 1 and pids and kill % 2:
            os.kill(rng.choice(pids), signal.SIGKILL)     # one rank dies; the launcher stops the other
        else:
            kill_group(process)                           # the whole job: launcher, ranks, loader workers
        process.wait(timeout=HANG)
        wait_gone(pids)
        seen["kills"] += 1
        seen["during_a_write"] += write_in_flight(run)
    return seen


def write_in_flight(run: RunFolder) -> bool:
    """Whether a checkpoint write was cut short: a temporary file, or a newer checkpoint than `last`."""
    folder = run.dir / "checkpoints"
    if glob.glob(str(folder / ".*.tmp")):
        return True
    files = sorted(glob.glob(str(folder / "*.pt")), key=os.path.getmtime)
    return bool(files) and os.path.realpath(folder / "last") != os.path.realpath(files[-1])


@pytest.mark.parametrize("ranks", [1, 2], ids=["one_process", "two_gloo_ranks"])
def test_resume_after_kills_at_random_moments_matches_an_uninterrupted_run(tmp_path, uninterrupted, ranks):
    reference = uninterrupted(ranks)
    opts = checkpoint_opts(ranks=ranks)
    opts["output"]["ckpt_every_n_iters"] = 3      # frequent writes, not aligned with the record points
    chaos = RunFolder(tmp_path, "chaos", opts, env={"PLAYGROUND_TEST_FSYNC_SLEEP": "0.03"})
    seen = kill_at_random_moments(chaos, kills=4 if ranks == 1 else 3, ranks=ranks, startup=reference.startup,
                                  training=reference.training, seed=20240 + ranks)
    print(f"chaos with {ranks} rank(s): {seen}; reference start-up {reference.startup:.1f} s, "
          f"training {reference.training:.1f} s")
    code, output = chaos.run(env=UNHINDERED)
    assert code == 0, output
    assert_same_training_state(chaos.checkpoint(), reference.run.checkpoint())
    assert_same_records(chaos, reference.run)


# Each step of a checkpoint write, in order; a kill right after it must lose nothing that was complete.
WRITE_STEPS = [
    "playground.checkpoints.keep.info_path:1", # the keep limit deleted an old state file, not yet its info file
    "torch.save:2",                           # the state is in a temporary file, not yet renamed
    "playground.checkpoints.checkpointer.save_state:2",     # the state file is in place, its info file is not
    "playground.checkpoints.checkpointer.write_info:2",     # the checkpoint is complete; 'last' still names the one before
    "playground.checkpoints.published.set_pointer:2",       # 'last' moved; ckpt.log and the keep limit not yet done
]


def test_a_kill_at_each_step_of_a_checkpoint_write_loses_nothing(tmp_path, uninterrupted):
    reference = uninterrupted(1)
    opts = checkpoint_opts()
    opts["output"].update(ckpt_every_n_iters=3, ckpt_keep_limit=2)
    run = RunFolder(tmp_path, "steps", opts)
    # killed after two record points and before the first checkpoint: the next session starts afresh and its
    # metrics.jsonl must hold only its own points (the killed session's lines are kept aside). Hooks see a record
    # (the progress line is printed) before it is appended, so the third progress line comes after two appends.
    code, output = run.run("--set", "output.ckpt_every_n_iters=0",
                           env={"PLAYGROUND_TEST_KILL_AFTER": "playground.trainer.progress.format_record:3"})
    assert code == -9 and len(run.records()) == 2, output
    assert not (run.dir / "checkpoints" / "last").exists()
    for step in WRITE_STEPS:
        code, output = run.run(env={"PLAYGROUND_TEST_KILL_AFTER": step})
        assert code == -9, f"{step}: the session was not killed (exit {code}):\n{output}"
        assert run.checkpoint()["format"] == "playground-checkpoint", step
    code, output = run.run(env=UNHINDERED)
    assert code == 0, output
    assert_same_training_state(run.checkpoint(), reference.run.checkpoint())
    assert_same_records(run, reference.run)
    assert len((run.dir / "earlier").iterdir().__next__().joinpath("metrics.jsonl").read_text().splitlines()) == 2
    assert not glob.glob(str(run.dir / "checkpoints" / ".*.tmp"))
