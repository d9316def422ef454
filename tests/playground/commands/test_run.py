"""The command line of a run: AnyExpOnTerm.py / playground run, --dry-run, errors before any work."""
from __future__ import annotations

import json
import os

import pytest

from tests.conftest import HANG, DATA, REPO, load_experiment, run_cli


def printed_opts(stdout: str) -> dict:
    """The resolved opts a dry run prints after its plan."""
    return json.loads(stdout.split("resolved opts:\n", 1)[1])["opts"]


def test_dry_run_prints_the_plan_and_the_resolved_opts_and_creates_nothing(tmp_path, opts_file):
    run_dir = tmp_path / "run"
    proc = run_cli("--parameters-file", opts_file(load_experiment("smoke.json")), "--run-dir", str(run_dir),
                   "--set", "epoch_iter.batch_per_device=16", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "world size:           1" in out
    assert "global batch:         16 (16 per device x 1)" in out
    assert "iterations per epoch: 64" in out
    assert "model.forward_pass_py" in out and "small_cnn_forward.py" in out
    assert "input.synthetic_shape" in out and "(read by synthetic_input)" in out
    assert f"checkpoint folder:    {run_dir}/checkpoints" in out
    assert not run_dir.exists()
    resolved = printed_opts(out)
    assert resolved["epoch_iter"]["batch_per_device"] == 16
    assert resolved["model_param"]["lr_policy"] == "fixed"          # defaults are filled in

    (tmp_path / "resolved.json").write_text(json.dumps({"opts": resolved}))
    proc2 = run_cli("--parameters-file", str(tmp_path / "resolved.json"), "--dry-run", cwd=tmp_path)
    assert proc2.returncode == 0, proc2.stderr
    assert printed_opts(proc2.stdout) == resolved
    assert sorted(os.listdir(tmp_path)) == ["opts.json", "resolved.json"]      # no runs/ folder either


def test_bad_opts_exit_2_with_the_problem_and_start_nothing(tmp_path, opts_file):
    opts = load_experiment("smoke.json")
    opts["model"]["forward_pass_py"] = "smal_cnn_forward"
    run_dir = tmp_path / "never"
    proc = run_cli("--parameters-file", opts_file(opts), "--run-dir", str(run_dir))
    assert proc.returncode == 2
    assert "opts.model.forward_pass_py: unknown component 'smal_cnn_forward'" in proc.stderr
    assert "small_cnn_forward" in proc.stderr
    assert not run_dir.exists()


def test_malformed_parameters_json_reports_line_and_column():
    proc = run_cli("--parameters-json", '{"opts": {"input": [}}')
    assert proc.returncode == 2
    assert "--parameters-json: malformed JSON at line 1, column 21" in proc.stderr


def test_a_blob_of_the_caffe2_readme_shape_with_two_gpus_fails_with_the_cpu_advice(tmp_path):
    blob = (DATA / "caffe2_shaped_opts.json").read_text()
    proc = run_cli("--parameters-json", blob, "--run-dir", str(tmp_path / "r"), "--dry-run")
    assert proc.returncode == 2
    assert "opts.distributed.num_gpus: 2 GPUs asked for, but this machine has no CUDA device" in proc.stderr
    assert "--set distributed.num_gpus=0" in proc.stderr


def test_defaults_file_and_set_layers_through_the_command_line(tmp_path, opts_file):
    opts = load_experiment("smoke.json")
    del opts["epoch_iter"]["num_test_iter"]
    defaults = tmp_path / "defaults.ini"
    defaults.write_text("[Global_Params]\nepoch_iter.num_test_iter = 5\nepoch_iter.num_epochs = 40\n")
    proc = run_cli("--parameters-file", opts_file(opts), "--defaults-file", str(defaults),
                   "--set", "model_param.lr_policy=cosine", "--run-dir", str(tmp_path / "r"), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    resolved = printed_opts(proc.stdout)
    assert resolved["epoch_iter"]["num_test_iter"] == 5       # from the defaults file
    assert resolved["epoch_iter"]["num_epochs"] == 3          # the blob wins over the defaults file
    assert resolved["model_param"]["lr_policy"] == "cosine"   # --set wins over everything


def test_playground_run_is_the_same_program(tmp_path, opts_file):
    proc = run_cli("run", "--parameters-file", opts_file(load_experiment("smoke.json")), "--run-dir",
                   str(tmp_path / "r"), "--dry-run", script="playground.cli")
    assert proc.returncode == 0, proc.stderr
    assert "global batch:         32" in proc.stdout


def test_the_smoke_experiment_trains_and_leaves_its_outputs(tmp_path):
    run_dir = tmp_path / "smoke"
    proc = run_cli("--parameters-file", "experiments/smoke.json", "--run-dir", str(run_dir),
                   "--set", "epoch_iter.num_epochs=2", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "epoch 1.00 (end of epoch)" in proc.stderr            # progress lines (not a terminal)
    assert "run finished" in proc.stdout and "final test_accuracy_top1" in proc.stdout
    for name in ("opts.json", "metrics.jsonl", "results.json", "train.log", "plot0_train_and_test_loss.png",
                 "plot1_accuracy.png", "checkpoints/model_checkpoint_epoch1.pt", "checkpoints/model_checkpoint_epoch2.pt"):
        assert (run_dir / name).is_file(), name


@pytest.mark.slow
def test_a_stopped_run_without_run_dir_prints_its_folder_and_resume_command_and_resume_finds_it(tmp_path):
    import glob
    import signal
    import subprocess
    import sys
    import time

    from tests.playground.checkpoints.interrupted_runs import OVERRIDE, OVERRIDE_NAME, UNHINDERED, checkpoint_opts
    (tmp_path / f"{OVERRIDE_NAME}.py").write_text(OVERRIDE)
    (tmp_path / "exp.json").write_text(json.dumps({"opts": checkpoint_opts()}))
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(tmp_path), PLAYGROUND_TEST_ITER_SLEEP="0.05")
    command = [sys.executable, str(REPO / "AnyExpOnTerm.py"), "--parameters-file", "exp.json"]
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + HANG
    while not glob.glob(str(tmp_path / "runs" / "*" / "training.rank0.*")):
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.02)
    process.send_signal(signal.SIGTERM)
    stderr = process.communicate(timeout=HANG)[1]
    assert process.returncode == 75, stderr
    [run_dir] = glob.glob(str(tmp_path / "runs" / "*"))
    assert f"the run folder is {run_dir}; resume it with:\n  python {REPO / 'AnyExpOnTerm.py'} --parameters-file " \
           f"exp.json --run-dir {run_dir}\n" in stderr

    other = dict(checkpoint_opts(), epoch_iter=dict(checkpoint_opts()["epoch_iter"], num_epochs=9))
    os.makedirs(tmp_path / "runs" / "other")       # a newer folder of other opts is not picked
    (tmp_path / "runs" / "other" / "opts.json").write_text(json.dumps({"opts": other}))
    resumed = subprocess.run(command + ["--resume"], cwd=tmp_path, env=dict(env, **UNHINDERED), capture_output=True,
                             text=True, timeout=HANG)   # no signal aimed at this session: full speed
    assert resumed.returncode == 0, resumed.stderr
    assert f"--resume: resuming {run_dir}, the newest of 1 run folder(s)" in resumed.stderr
    assert "resum" in (tmp_path / "runs" / os.path.basename(run_dir) / "train.log").read_text().lower()
    assert sorted(os.listdir(tmp_path / "runs")) == sorted([os.path.basename(run_dir), "other"])


MINIMAL_MLP = {
    "input": {"input_name_py": "digits_arrays", "num_classes": 10, "decode_threads": 0},
    "model": {"forward_pass_py": "mlp_forward", "optimizer_py": "sgd_optimizer"},
    "model_param": {"base_learning_rate": 0.05, "mlp_hidden": [16]},
    "epoch_iter": {"num_train_sample_per_epoch": 0, "num_test_sample": 0, "num_epochs": 1,
                   "num_train_iteration_per_test": 1000, "batch_per_device": 64, "num_test_iter": 0},
    "distributed": {"num_shards": 1, "num_gpus": 0, "first_gpu_id": 0, "num_cpus": 1},
    "output": {"progress": "log"},
}


def test_an_mlp_blob_without_the_keys_only_caffe2_components_need_trains(tmp_path, opts_file):
    """No model_name_py, rendezvous_py, gen_output_py, pretrained_model, memonger, combine_spatial_bn."""
    run_dir = tmp_path / "run"
    proc = run_cli("--parameters-file", opts_file(MINIMAL_MLP), "--run-dir", str(run_dir))
    assert proc.returncode == 0, proc.stderr
    results = json.loads((run_dir / "results.json").read_text())
    assert results["records"] == 1 and results["metrics"]["train_loss"][0] > 0
    resolved = json.loads((run_dir / "opts.json").read_text())["opts"]
    assert resolved["model_param"]["memonger"] is False and resolved["model"]["rendezvous_py"] == "rendezvous_env"
