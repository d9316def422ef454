"""The Core-API example (experiments/determined_digits/core_api) and a resumable script of the same shape
(core_api_mnist/), run by playground's runner on 1 and 2 ranks (gloo): checkpoints stored and restored,
SIGKILL of the whole run then a re-run ending bitwise equal to an uninterrupted run, SIGTERM -> should_preempt
-> checkpoint -> exit 75, searcher operations, metrics.jsonl records."""
from __future__ import annotations

import json
import sys

import pytest
import torch

from playground.processes.exit_codes import EXIT_DONE, EXIT_STOPPED
from tests.determined.det_runs import (checkpoint_entries, cluster_info, context_dir, example_dir, kill_group, lines,
                                       records, run, start, stopped_after_a_checkpoint, wait_for, without_times)

EXAMPLE_ARGS = ["--batch-size", "160", "--test-batch-size", "200", "--log-interval", "3"]
BATCHES = 1438 // 160 + 1          # the digits in batches of 160, the last one short: 9 an epoch


def test_the_example_stores_checkpoints_reports_metrics_and_resumes_from_its_latest(tmp_path):
    context, run_dir = example_dir(tmp_path), tmp_path / "run"
    command = ["python3", "model_def.py", "--epochs", "2", *EXAMPLE_ARGS]
    info = cluster_info()        # every checkpoint kept (the retention of a completed trial: its own tests)
    info["experiment_config"]["checkpoint_storage"] = {"save_trial_latest": 5}
    code, output = run(command, context, run_dir, info)
    assert code == EXIT_DONE, output

    entries = checkpoint_entries(run_dir)
    assert [e["steps_completed"] for e in entries] == [BATCHES, 2 * BATCHES]
    for entry in entries:
        folder = run_dir / "checkpoints" / entry["storage_id"]
        assert sorted(p.name for p in folder.iterdir()) == ["checkpoint.pt", "metadata.json", "state"]
        assert json.loads((folder / "metadata.json").read_text()) == {"steps_completed": entry["steps_completed"]}
        assert set(torch.load(folder / "checkpoint.pt", weights_only=True)) >= {"conv1.weight", "fc2.bias"}
    epochs = records(run_dir, "epoch")
    assert [(r["index"], r["iteration"], r["epochs"]) for r in epochs] == [(3, BATCHES, 1), (7, 2 * BATCHES, 2)]
    assert all(isinstance(r["test_loss"], float) for r in epochs)
    assert [r["iteration"] for r in records(run_dir, "train")] == [3, 6, 9, 12, 15, 18]
    assert json.loads((run_dir / "opts.json").read_text())["determined"] is True
    assert "Test set: Average loss" in (run_dir / "train.log").read_text()

    # the same run folder with a longer --epochs: the script reads latest_checkpoint, restores, goes on
    code, output = run(["python3", "model_def.py", "--epochs", "3", *EXAMPLE_ARGS], context, run_dir, info)
    assert code == EXIT_DONE, output
    cluster = json.loads((run_dir / "det_cluster.json").read_text())
    assert cluster["latest_checkpoint"] == entries[-1]["storage_id"]
    assert [r["epochs"] for r in records(run_dir, "epoch")] == [1, 2, 3]
    assert [r["index"] for r in records(run_dir)] == list(range(12))
    assert [e["steps_completed"] for e in checkpoint_entries(run_dir)] == [BATCHES, 2 * BATCHES, 3 * BATCHES]


def test_sigterm_makes_should_preempt_true_and_the_example_checkpoints_and_exits_75(tmp_path):
    context, run_dir = example_dir(tmp_path), tmp_path / "run"
    command = ["python3", "model_def.py", "--epochs", "200", *EXAMPLE_ARGS]
    process = start(command, context, run_dir, cluster_info())
    output = stopped_after_a_checkpoint(process, run_dir)
    assert process.returncode == EXIT_STOPPED, output
    entries = checkpoint_entries(run_dir)
    assert 1 <= len(entries) < 200
    state = (run_dir / "checkpoints" / entries[-1]["storage_id"] / "state").read_text()
    assert state == f"{len(entries)},1"            # epochs completed, trial id: the example's own file
    assert not (run_dir / "det_preempted").exists()


def resumable(tmp_path, slots: int, pause: float = 0.0, epochs: int = 4):
    context = context_dir(tmp_path, "model_def_resumable.py")
    command = [sys.executable, "-m", "determined.launch.torch_distributed", sys.executable, "model_def_resumable.py",
               "--batch-size", str(16 // slots), "--pause", str(pause)]
    return command, context, cluster_info(max_length={"epochs": epochs})


def final_state(run_dir) -> dict:
    entry = checkpoint_entries(run_dir)[-1]
    return torch.load(run_dir / "checkpoints" / entry["storage_id"] / "state.pt", weights_only=True)


@pytest.mark.parametrize("slots", [1, 2])
def test_a_run_killed_whole_then_run_again_ends_bitwise_equal_to_an_uninterrupted_run(tmp_path, slots):
    command, context, info = resumable(tmp_path, slots)
    slowed, _, _ = resumable(tmp_path, slots, pause=0.4)   # the killed session only: time to kill it mid-run
    whole = tmp_path / "uninterrupted"
    code, output = run(command, context, whole, info, slots=slots)
    assert code == EXIT_DONE, output
    completed = lines(whole / "det_searcher.jsonl")
    assert [(c["length"], c["searcher_metric"]) for c in completed] == [(4, records(whole, "epoch")[-1]["test_loss"])]
    assert [r["epochs"] for r in records(whole, "epoch")] == [1, 2, 3, 4]     # the op's length: max_length

    killed = tmp_path / "killed"
    process = start(slowed, context, killed, info, slots=slots)
    try:
        wait_for(lambda: checkpoint_entries(killed), process, "a first checkpoint")
        kill_group(process)                          # runner and ranks at once: nothing can clean up
        process.wait(timeout=60)
    finally:
        kill_group(process)
    done_before = len(checkpoint_entries(killed))
    assert 1 <= done_before < 4
    code, output = run(command, context, killed, info, slots=slots)
    assert code == EXIT_DONE, output
    assert f"resumed from {checkpoint_entries(killed)[done_before - 1]['storage_id']}" in output

    expected, resumed = final_state(whole), final_state(killed)
    assert resumed["epochs"] == expected["epochs"] == 4
    for part in ("model", "optimizer"):
        flat_expected, flat_resumed = _tensors(expected[part]), _tensors(resumed[part])
        assert flat_expected.keys() == flat_resumed.keys()
        assert all(torch.equal(flat_expected[k], flat_resumed[k]) for k in flat_expected), part
    assert without_times(records(killed)) == without_times(records(whole))


def _tensors(state, prefix: str = "") -> dict:
    out = {}
    items = state.items() if isinstance(state, dict) else enumerate(state) if isinstance(state, list) else []
    for key, value in items:
        if torch.is_tensor(value):
            out[f"{prefix}{key}"] = value
        else:
            out.update(_tensors(value, f"{prefix}{key}."))
    return out


def test_sigterm_on_two_ranks_stops_both_at_the_chiefs_decision_after_a_checkpoint(tmp_path):
    command, context, info = resumable(tmp_path, 2, pause=0.3, epochs=200)
    run_dir = tmp_path / "run"
    process = start(command, context, run_dir, info, slots=2)
    output = stopped_after_a_checkpoint(process, run_dir)
    assert process.returncode == EXIT_STOPPED, output
    done = len(checkpoint_entries(run_dir))
    assert f"rank 0 preempted after epoch {done}" in output and f"rank 1 preempted after epoch {done}" in output
    code, output = run(command, context, run_dir, {**info, "max_length": {"epochs": done + 1}}, slots=2)
    assert code == EXIT_DONE, output
    assert [r["epochs"] for r in records(run_dir, "epoch")] == list(range(1, done + 2))
