"""Determined's PyTorchTrial (the 0.26 MNIST trial's shape) through the trial harness, on 1 and 2 ranks: trained by
playground's loop, resumed exactly after a SIGKILL, checkpointed and exiting 75 after a SIGTERM."""
from __future__ import annotations

import json
import signal

import pytest

from playground.processes.exit_codes import EXIT_STOPPED
from tests.determined.ranks import (assert_same_training, final_state, interrupt, kill_and_rerun, output, records, run,
                                    trial_main)

MNIST = trial_main("mnist_trial:MNistTrial")


def mnist_info(**extra) -> dict:
    """2 epochs of 6 global batches of 8 (48 samples), validating and checkpointing every 2 batches."""
    return dict(experiment_config={"min_validation_period": {"batches": 2}, "min_checkpoint_period": {"batches": 2}},
                hparams={"global_batch_size": 8, "n_filters1": 4, "dropout": 0.25, "learning_rate": 1.0},
                trial_id=1, experiment_id=1, max_length={"epochs": 2}, **extra)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The uninterrupted run on 1 and 2 ranks, made once for the module."""
    made = {}

    def get(ranks: int):
        if ranks not in made:
            made[ranks] = tmp_path_factory.mktemp(f"mnist{ranks}") / "run"
            run(MNIST, made[ranks], mnist_info(), ranks)
        return made[ranks]
    return get


@pytest.mark.parametrize("ranks", [1, 2])
def test_a_trial_trains_into_the_run_folder_with_validation_and_training_records(uninterrupted, ranks):
    run_dir = uninterrupted(ranks)
    found = records(run_dir)
    # every 2 batches one validation, the epoch ends (batches 6 and 12) included once: each a full pass record
    assert [(r["kind"], r["iteration"], r["epochs"]) for r in found] == [
        ("epoch", 2, 2 / 6), ("epoch", 4, 4 / 6), ("epoch", 6, 1.0), ("epoch", 8, 1 + 2 / 6), ("epoch", 10, 1 + 4 / 6),
        ("epoch", 12, 2.0)]
    assert [r["samples"] for r in found] == [16, 32, 48, 64, 80, 96]     # records, a searcher unit: 8 a batch
    assert all(r["train_loss"] > 0 and r["validation_loss"] > 0 and 0 <= r["accuracy"] <= 1 for r in found)
    assert found[-1]["train_loss"] < found[0]["train_loss"]
    state = final_state(run_dir)
    assert list(state["models"]) == ["model"] and list(state["optimizers"]) == ["optimizer"]
    assert state["world_size"] == ranks
    assert (run_dir / "plot0_training_metrics.png").is_file() and (run_dir / "results.json").is_file()


@pytest.mark.parametrize("ranks", [1, 2])
def test_a_trial_killed_mid_run_resumes_to_the_uninterrupted_result_bitwise(uninterrupted, tmp_path, ranks):
    kill_and_rerun(MNIST, tmp_path / "run", mnist_info(), ranks, uninterrupted(ranks))


def test_a_sigterm_checkpoints_exits_75_and_the_rerun_ends_as_the_uninterrupted_run(uninterrupted, tmp_path):
    run_dir = tmp_path / "run"
    codes = interrupt(MNIST, run_dir, mnist_info(), 2, signal.SIGTERM, after="checkpoints/model_checkpoint_batch2.pt")
    assert codes == [EXIT_STOPPED] * 2, output(run_dir)
    assert "stopped by SIGTERM; a checkpoint was written" in output(run_dir)
    run(MNIST, run_dir, mnist_info(), 2)
    assert_same_training(run_dir, uninterrupted(2))


def test_the_harness_refuses_a_missing_class_with_exit_2(tmp_path):
    from tests.determined.ranks import start, wait
    run_dir = tmp_path / "run"
    codes = wait(start(trial_main("mnist_trial:NoSuchTrial"), run_dir, mnist_info(), 1), run_dir)
    assert codes == [2]
    assert "mnist_trial defines no class NoSuchTrial" in output(run_dir)


def test_full_dataset_validation_a_custom_reducer_a_callback_and_a_stop_request_on_2_ranks(tmp_path):
    """evaluate_full_dataset runs on rank 0 only, over the whole validation set, as Determined's controller runs it;
    every rank's on_validation_end gets rank 0's metrics (Determined broadcasts them to the callbacks)."""
    run_dir = tmp_path / "run"
    info = dict(mnist_info(), experiment_config={"min_validation_period": {"batches": 2}})
    run(trial_main("full_dataset_trial:FullDatasetTrial"), run_dir, info, 2)
    found = records(run_dir)
    # stopped after batch 4, which its period had just validated: no second validation before the checkpoint
    assert [(r["kind"], r["iteration"]) for r in found] == [("epoch", 2), ("epoch", 4)]
    assert all(r["validated"] == 16 and r["evaluated_on_rank"] == 0 and 0 <= r["validation_error"] <= 1
               and "note" not in r for r in found)
    said = output(run_dir).splitlines()
    assert [line for line in said if "evaluate_full_dataset" in line] == ["rank 0 evaluate_full_dataset"] * 2
    for rank in (0, 1):
        seen = [line for line in said if line.startswith(f"rank {rank} on_validation_end")]
        assert seen == [f"rank {rank} on_validation_end "
                        f"{sorted({'evaluated_on_rank': 0.0, 'validated': 16.0, 'validation_error': r['validation_error']}.items())}"
                        for r in found], said
    assert [r["train_samples_seen"] for r in found] == [16, 16]   # 2 batches of 8
    state = final_state(run_dir)
    assert state["global_iter"] == 4 and state["hooks"]["determined"]["callbacks"] == {"validation_log": {"validations": 2}}
    logged = [json.loads(line) for line in (run_dir / "tensorboard" / "scalars.jsonl").read_text().splitlines()]
    assert [s["value"] for s in logged] == [r["validation_error"] for r in found]


def test_a_trial_without_any_length_is_refused_with_one_line_and_exit_2(tmp_path):
    from tests.determined.ranks import start, wait
    run_dir = tmp_path / "run"
    codes = wait(start(MNIST, run_dir, dict(mnist_info(), max_length=None), 1), run_dir)
    assert codes == [2]
    said = output(run_dir)
    assert "playground: error: fit(): max_length is required" in said and "Traceback" not in said
