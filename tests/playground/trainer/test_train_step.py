"""The training-step features as opts (playground/trainer/train_step.py and hooks/): fp16 with its scaler,
channels_last, accumulation (epoch length, throughput, 2 ranks x B = 1 rank x 2B), clipping, EMA, profiler."""
from __future__ import annotations

import json

import pytest
import torch

from playground.api import run
from tests.conftest import run_cli, tiny_opts


def records(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_fp16_channels_last_clipping_and_ema_checkpoint_their_state(tmp_path):
    opts = tiny_opts(model_param={"precision": "fp16", "channels_last": True, "grad_clip_norm": 0.5,
                                  "ema_decay": 0.9, "ema_eval": True}, epoch_iter={"num_epochs": 1})
    result = run(opts, run_dir=str(tmp_path / "run"))
    state = torch.load(result["model"], weights_only=True)
    hooks = state["hooks"]
    assert hooks["mixed_precision"]["scaler"]["scale"] > 0            # the fp16 gradient scaler's state
    assert hooks["ema"]["updates"] == 4 and set(hooks["ema"]["shadow"]) <= set(state["model"])
    assert hooks["grad_clip"]["count"] == 0                           # reset by the last record point
    assert not all(torch.equal(hooks["ema"]["shadow"][k], state["model"][k]) for k in hooks["ema"]["shadow"])
    points = records(tmp_path / "run")
    assert all(p["grad_norm"] > 0 for p in points if p["kind"] == "interval")


def test_an_ema_evaluated_at_test_passes_leaves_the_trained_weights_bitwise_untouched(tmp_path):
    base = {"ema_decay": 0.5, "ema_warmup": False}
    plain = run(tiny_opts(model_param=dict(base)), run_dir=str(tmp_path / "plain"))
    ema = run(tiny_opts(model_param=dict(base, ema_eval=True)), run_dir=str(tmp_path / "ema"))
    a = torch.load(plain["model"], weights_only=True)
    b = torch.load(ema["model"], weights_only=True)
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
    assert plain["metrics"]["train_loss"] == ema["metrics"]["train_loss"]
    assert plain["metrics"]["test_loss"] != ema["metrics"]["test_loss"]   # the test passes saw other weights


def test_accumulation_keeps_the_epoch_in_samples_and_counts_throughput_in_samples(tmp_path):
    opts = tiny_opts(model_param={"grad_accum_steps": 2},
                     epoch_iter={"num_epochs": 1, "num_train_sample_per_epoch": 64, "batch_per_device": 8,
                                 "num_train_iteration_per_test": 2})
    run(opts, run_dir=str(tmp_path / "run"))
    points = records(tmp_path / "run")
    # 64 samples / (8 x 2 per iteration) = 4 iterations; a record point every 2 iterations (32 samples)
    assert [(p["iteration"], p["epochs"]) for p in points if p["kind"] == "interval"] == [(2, 0.5), (4, 1.0)]
    for point in points:
        if point["samples_per_sec"]:
            assert point["samples_per_sec"] * point["secs_per_train"] == pytest.approx(16)


def test_two_ranks_of_b_accumulating_k_match_one_rank_of_2b_accumulating_k(tmp_path):
    def opts(ranks: int) -> dict:
        o = tiny_opts(model={"forward_pass_py": "mlp_forward"}, model_param={"grad_accum_steps": 2, "mlp_hidden": [16]},
                      epoch_iter={"num_epochs": 1, "num_train_sample_per_epoch": 64, "batch_per_device": 16 // ranks,
                                  "num_train_iteration_per_test": 2, "num_test_iter": 0})
        o["distributed"]["num_cpus"] = ranks
        o["output"]["plots"] = []
        return o
    one = run(opts(1), run_dir=str(tmp_path / "one"))
    two = run(opts(2), run_dir=str(tmp_path / "two"))
    a = torch.load(one["model"], weights_only=True)
    b = torch.load(two["model"], weights_only=True)
    assert a["global_iter"] == b["global_iter"] == 2 and a["epoch_iterations"] == b["epoch_iterations"] == 2
    for key in a["model"]:
        torch.testing.assert_close(a["model"][key], b["model"][key], rtol=1e-5, atol=1e-6)
    for point in records(tmp_path / "two"):
        if point["samples_per_sec"]:
            assert point["samples_per_sec"] * point["secs_per_train"] == pytest.approx(64 // 2)


def test_the_profiler_traces_a_window_of_iterations_into_the_run_folder(tmp_path):
    opts = tiny_opts(output={"profile_start_iter": 1, "profile_num_iters": 2}, epoch_iter={"num_epochs": 1})
    run(opts, run_dir=str(tmp_path / "run"))
    trace = json.loads((tmp_path / "run" / "profile" / "trace.json").read_text())
    assert any("aten::" in str(event.get("name")) for event in trace["traceEvents"])
    assert list((tmp_path / "run" / "profile" / "tensorboard").glob("rank0*.pt.trace.json"))
    log = (tmp_path / "run" / "train.log").read_text()
    assert "profile of 2 iteration(s) from iteration 1" in log and "Self CPU" in log


def test_tensorboard_without_its_package_is_an_opts_error_naming_the_key_and_the_fix(tmp_path, opts_file):
    try:
        import tensorboard  # noqa: F401
        pytest.skip("tensorboard is installed here: the event files are written instead")
    except ImportError:
        pass
    opts = tiny_opts(output={"tensorboard": True}, epoch_iter={"num_epochs": 1})
    proc = run_cli("--parameters-file", opts_file(opts), "--run-dir", str(tmp_path / "run"))
    assert proc.returncode == 2, proc.stderr
    assert "opts.output.tensorboard: true, but the tensorboard package is not installed" in proc.stderr
    assert "pip install tensorboard" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


def test_the_profiler_on_a_cpu_run_prints_no_gpu_errors(tmp_path, opts_file):
    opts = tiny_opts(output={"profile_start_iter": 1, "profile_num_iters": 1}, epoch_iter={"num_epochs": 1})
    opts["output"]["plots"] = []
    proc = run_cli("--parameters-file", opts_file(opts), "--run-dir", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "run" / "profile" / "trace.json").exists()
    assert "gpuGetDeviceCount" not in proc.stderr + proc.stdout and "USDT" not in proc.stderr + proc.stdout
