"""0.38's Trainer API script (`python3 train.py --epochs 2`: det.pytorch.init() and Trainer(trial).fit(...)) on 1
and 2 ranks, resumed bitwise after a SIGKILL; the same script bare, without cluster info, in local mode; and a
(context, hparams) trial through the harness."""
from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

from tests.conftest import HANG
from tests.determined.ranks import ON_PATH, REPO, TRIALS, final_state, kill_and_rerun, output, records, run, trial_main

TRAIN = [sys.executable, "train.py", "--epochs", "2"]


def info(**extra) -> dict:
    """No searcher length: the script's own fit(max_length=...) rules."""
    return dict(experiment_config={}, hparams={"global_batch_size": 8, "n_filters1": 4, "dropout": 0.25,
                                               "learning_rate": 1.0}, trial_id=1, experiment_id=1, **extra)


@pytest.mark.parametrize("ranks", [2])   # one rank's resume: test_pytorch_trial.py (the same trial state, saved once)
def test_a_trainer_api_script_killed_mid_run_resumes_to_the_uninterrupted_result_bitwise(tmp_path, ranks):
    whole = tmp_path / "whole"
    run(TRAIN, whole, info(), ranks)
    assert [(r["kind"], r["iteration"]) for r in records(whole)] == [("epoch", i) for i in (2, 4, 6, 8, 10, 12)]
    kill_and_rerun(TRAIN, tmp_path / "cut", info(), ranks, whole)


def test_the_searcher_length_wins_over_the_scripts_and_perform_initial_validation_validates_first(tmp_path):
    run(TRAIN, tmp_path / "run", dict(info(max_length={"batches": 3}),
                                      experiment_config={"perform_initial_validation": True}), 1)
    found = records(tmp_path / "run")
    assert max(r["iteration"] for r in found) == 3
    assert (found[0]["kind"], found[0]["iteration"], found[0]["epochs"]) == ("epoch", 0, 0)
    assert found[0]["validation_loss"] > 0 and "train_loss" not in found[0]   # nothing trained yet


def bare(*path) -> dict:
    """The environment of a script run bare (no cluster info, local mode), with `path` importable."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, (ON_PATH, REPO, *path))))
    env.pop("PLAYGROUND_DETERMINED", None)
    return env


def test_a_bare_script_without_cluster_info_trains_locally_into_runs(tmp_path):
    done = subprocess.run([sys.executable, str(TRIALS / "train.py"), "--batches", "2"], cwd=tmp_path, env=bare(),
                          capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stdout + done.stderr
    folders = glob.glob(str(tmp_path / "runs" / "determined-*"))
    assert len(folders) == 1
    # Batch(2) validates after batch 2, the last: one validation, not one for the period and one for the end
    assert [(r["kind"], r["iteration"]) for r in records(type(tmp_path)(folders[0]))] == [("epoch", 2)]


def test_a_reporting_period_in_epochs_is_refused_with_one_line_and_exit_2_before_any_folder_is_made(tmp_path):
    (tmp_path / "script.py").write_text(
        "from determined import pytorch\nimport train\n"
        "with pytorch.init(hparams=train.LOCAL_HPARAMS) as context:\n"
        "    trial = train.MNistTrial(context, hparams=context.get_hparams())\n"
        "    pytorch.Trainer(trial, context).fit(max_length=pytorch.Batch(2), reporting_period=pytorch.Epoch(1))\n")
    done = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, env=bare(TRIALS), capture_output=True, text=True,
                          timeout=HANG)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "playground: error: fit(): reporting_period must be pytorch.Batch(...), got Epoch(" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()


def test_the_harness_builds_a_trial_that_takes_context_and_hparams(tmp_path):
    run(trial_main("train:MNistTrial"), tmp_path / "run", info(max_length={"batches": 2}), 1)
    assert max(r["iteration"] for r in records(tmp_path / "run")) == 2


def test_test_mode_trains_one_batch_then_validates_and_checkpoints(tmp_path):
    run(TRAIN, tmp_path / "run", info(test_mode=True), 1)
    found = records(tmp_path / "run")
    assert found[-1]["kind"] == "epoch" and found[-1]["iteration"] == 1 and "validation_loss" in found[-1]
    assert final_state(tmp_path / "run")["global_iter"] == 1


def test_a_script_shorter_than_the_searchers_max_time_trains_its_own_length_and_says_the_rungs_are_missed(tmp_path):
    """0.38's time_metric: the script's fit(max_length) rules (2 epochs of 6 batches here); the searcher's max_time
    (937 batches) and its rungs beyond 12 batches are never reached, which the trial says once."""
    config = {"searcher": {"name": "adaptive_asha", "metric": "validation_loss", "time_metric": "batches",
                           "max_time": 937}}
    run(TRAIN, tmp_path / "run", dict(info(), experiment_config=config, rungs=[8, 58, 937]), 1)
    assert max(r["iteration"] for r in records(tmp_path / "run")) == 12
    said = output(tmp_path / "run")
    assert said.count("playground: warning: this trial trains 12 batches") == 1, said
    assert "adaptive ASHA's rungs at 58, 937 batches are never reached" in said, said


def test_init_in_local_mode_takes_every_argument_and_seeds_as_trial_1(monkeypatch):
    """det.pytorch.init(hparams, exp_conf, distributed, aggregation_frequency, enable_tensorboard_logging) without
    cluster info: the context answers with init's own arguments; the seed is trial 1's (experiment seed + 1)."""
    import torch

    from playground.compat.determined import pytorch
    from playground.determined.cluster_file import CLUSTER_ENV
    from playground.compat.determined.core import DummyDistributedContext
    monkeypatch.delenv(CLUSTER_ENV, raising=False)
    exp_conf = {"reproducibility": {"experiment_seed": 11}, "data": {"rows": 3}}
    with pytorch.init(hparams={"global_batch_size": 6}, exp_conf=exp_conf, distributed=DummyDistributedContext(),
                      aggregation_frequency=2, enable_tensorboard_logging=False) as context:
        drawn = torch.rand(3)
        assert context.get_hparams() == {"global_batch_size": 6} and context.get_per_slot_batch_size() == 6
        assert context.get_data_config() == {"rows": 3} and context.get_trial_seed() == 12
        assert context.get_enable_tensorboard_logging() is False
    torch.manual_seed(12)
    assert torch.equal(drawn, torch.rand(3))        # init seeded torch with the trial seed
