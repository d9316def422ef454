"""Real runs on a CUDA device (marked gpu; skipped with the reason on machines without one, run by
benchmarks/gpu_check.sh where a GPU is lent): training in each precision, a SIGKILL and resume ending bitwise
equal to an uninterrupted run, a CUDA checkpoint read back on the CPU, JPEGs decoded on the device."""
from __future__ import annotations

import json
import time

import pytest
import torch

from tests.conftest import HANG, run_cli
from tests.image_lmdbs import make_image_lmdb
from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, checkpoint_opts, kill_group,
                                                           wait_gone)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


def cuda_opts(precision: str) -> dict:
    opts = checkpoint_opts()
    opts["distributed"].update(num_gpus=1, first_gpu_id=0)
    opts["model_param"]["precision"] = precision
    opts["output"]["ckpt_every_n_iters"] = 3
    return opts


@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
def test_a_cuda_run_killed_and_resumed_ends_bitwise_equal_to_an_uninterrupted_one(tmp_path, precision):
    reference = RunFolder(tmp_path, "reference", cuda_opts(precision), env=UNHINDERED)
    code, output = reference.run()
    assert code == 0, output
    state = reference.checkpoint()
    assert all(tensor.device.type == "cpu" for tensor in state["model"].values()), "checkpoints hold CPU tensors"
    losses = [r["train_loss"] for r in reference.records() if r.get("train_loss") is not None]
    assert losses and all(loss == loss and abs(loss) < 1e4 for loss in losses), losses   # finite, trained

    chaos = RunFolder(tmp_path, "chaos", cuda_opts(precision), env={"PLAYGROUND_TEST_ITER_SLEEP": "0.03"})
    process = chaos.start()
    assert chaos.wait_for_training(process, ranks=1), chaos.output()
    deadline = time.monotonic() + HANG
    while chaos.progress() == 0.0:          # the kill lands after a checkpoint, whatever CUDA's start-up costs
        assert process.poll() is None and time.monotonic() < deadline, chaos.output()
        time.sleep(0.01)
    time.sleep(0.05)
    pids = list(chaos.rank_pids().values())
    kill_group(process)
    process.wait(timeout=HANG)
    wait_gone(pids)
    assert 0.0 < chaos.progress() < 1.0, f"the kill should land mid-training (progress {chaos.progress():.2f})"
    code, output = chaos.run(env=UNHINDERED)
    assert code == 0, output
    assert "resum" in output.lower(), output
    assert_same_training_state(chaos.checkpoint(), reference.checkpoint())
    assert_same_records(chaos, reference)


def test_a_cuda_checkpoint_is_evaluated_on_the_cpu(tmp_path):
    run = RunFolder(tmp_path, "run", cuda_opts("fp32"), env=UNHINDERED)
    code, output = run.run()
    assert code == 0, output
    proc = run_cli("eval", str(run.dir), "--set", "distributed.num_gpus=0", "--run-dir", str(tmp_path / "eval"),
                   script="playground.cli", env={"CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    evaluated = json.loads((tmp_path / "eval" / "eval.json").read_text())
    assert evaluated["checkpoint"].startswith(str(run.dir / "checkpoints")), evaluated
    assert evaluated["metrics"]["test_loss"] == evaluated["metrics"]["test_loss"], evaluated   # a number, not NaN


def test_jpegs_decoded_on_the_device_train_an_epoch(tmp_path, opts_file):
    from tests.components.inputs.test_gfs_IN1k import image_opts
    db = make_image_lmdb(tmp_path, classes=2, per_class=12)
    opts = image_opts(str(db), gpu_decode=True, color_jitter=False, color_lighting=False)
    opts["distributed"].update(num_gpus=1, first_gpu_id=0)
    proc = run_cli("--parameters-file", opts_file(opts), "--run-dir", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert any("train_loss" in row for row in rows), rows
