"""SIGKILL chaos with every training-step feature on (bf16, accumulation, clipping, EMA) and a user hook with
state, in one process: the resumed run ends bitwise where an uninterrupted run ends, hook states
included, with the same record points (machinery of tests/playground/checkpoints/test_resume_chaos.py); and EMA
evaluation of a batch-norm network on 2 gloo ranks, killed and resumed, with the same records."""
from __future__ import annotations

import glob
import os
import textwrap
import time

import pytest

from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, _assert_equal_tensors,
                                                           assert_same_records, assert_same_training_state,
                                                           checkpoint_opts)
from tests.playground.checkpoints.test_resume_chaos import kill_at_random_moments
from tests.playground.trainer.conftest import STEP_COUNTER

pytestmark = pytest.mark.slow


def feature_opts(ranks: int) -> dict:
    opts = checkpoint_opts(ranks=ranks)
    opts["model"]["hooks_py"] = ["step_counter"]
    opts["model_param"].update(precision="bf16", grad_accum_steps=2, grad_clip_norm=1.0, ema_decay=0.9,
                               ema_eval=True)
    opts["epoch_iter"]["num_train_iteration_per_test"] = 3    # 8 iterations of 2 x 16 samples per epoch
    return opts


# Kills and resumes on 2 gloo ranks are test_resume_chaos.py's [two_gloo_ranks] case; the features' state is
# the same on every rank, so a 2-rank variant here would repeat that test for two more minutes of suite time.
def test_resume_after_kills_with_every_feature_and_a_user_hook_matches_an_uninterrupted_run(tmp_path, ranks=1):
    (tmp_path / "step_counter.py").write_text(textwrap.dedent(STEP_COUNTER))
    whole = RunFolder(tmp_path, "whole", feature_opts(ranks))
    started = time.time()
    code, output = whole.run()
    ended = time.time()
    assert code == 0, output
    began = min(os.path.getmtime(m) for m in glob.glob(str(whole.dir / "training.*")))

    opts = feature_opts(ranks)
    opts["output"]["ckpt_every_n_iters"] = 2
    chaos = RunFolder(tmp_path, "chaos", opts)
    seen = kill_at_random_moments(chaos, kills=2, ranks=ranks, startup=began - started, training=ended - began,
                                  seed=4242 + ranks)
    print(f"chaos with every feature, {ranks} rank(s): {seen}")
    code, output = chaos.run(env=UNHINDERED)
    assert code == 0, output
    a, b = chaos.checkpoint(), whole.checkpoint()
    assert_same_training_state(a, b)
    timing = {"interval_timer"}
    _assert_equal_tensors({k: v for k, v in a["hooks"].items() if k not in timing},
                          {k: v for k, v in b["hooks"].items() if k not in timing}, "hooks")
    assert a["hooks"]["step_counter"] == {"steps": 3 * 8} and a["hooks"]["ema"]["updates"] == 3 * 8
    assert_same_records(chaos, whole)


def test_ema_evaluation_on_two_ranks_with_batch_norm_resumes_with_the_same_records(tmp_path):
    # Each rank's batch-norm statistics follow its own batches, so each rank's average of them differs while a
    # checkpoint holds rank 0's: every rank must evaluate with rank 0's average, or a resumed run's test
    # records differ from an uninterrupted run's although weights, optimizer and hook states are equal.
    def opts() -> dict:
        o = checkpoint_opts(ranks=2)
        o["model"]["forward_pass_py"] = "small_cnn_forward"
        o["model_param"].update(ema_decay=0.9, ema_eval=True)
        o["output"]["ckpt_every_n_iters"] = 3
        return o

    whole = RunFolder(tmp_path, "whole", opts())
    code, output = whole.run(env=UNHINDERED)
    assert code == 0, output
    resumed = RunFolder(tmp_path, "resumed", opts())
    # rank 0 dies right after its third checkpoint is published (iteration 9 of 48; the file is written in the
    # background, so on a loaded machine the run may be a record point further on when it dies)
    code, output = resumed.run(env=dict(UNHINDERED, PLAYGROUND_TEST_KILL_AFTER="playground.checkpoints.published.set_pointer:3"))
    assert code != 0 and 2 <= len(resumed.records()) < len(whole.records()), output
    code, output = resumed.run(env=UNHINDERED)
    assert code == 0, output
    a, b = resumed.checkpoint(), whole.checkpoint()
    assert_same_training_state(a, b)
    _assert_equal_tensors(a["hooks"]["ema"], b["hooks"]["ema"], "hooks.ema")
    assert_same_records(resumed, whole)
