"""`playground run EXPERIMENT.yaml`: everything up to the runner's call (dry-run prints the command, the cluster
info and the notes), the refusals, and exit 2 before anything starts."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest

from playground.cli import main
from tests.conftest import run_cli

CONST = """\
    name: tiny_const
    entrypoint: python3 -m determined.launch.torch_distributed python3 train.py --epochs 1
    hyperparameters: {global_batch_size: 8, lr: 0.5}
    max_restarts: 2
    resources: {slots_per_trial: 2}
    bind_mounts: [{host_path: /data, container_path: /data}]
    searcher: {name: single, metric: validation_loss, max_length: {epochs: 2}}
    """
ADAPTIVE = """\
    entrypoint: model_def:MNistTrial
    hyperparameters:
      global_batch_size: 16
      lr: {type: double, minval: 0.01, maxval: 1.0}
      net: {width: {type: int, minval: 4, maxval: 8}}
    searcher: {name: adaptive_asha, metric: validation_loss, max_trials: 4, time_metric: batches, max_time: 8}
    """


@pytest.fixture
def experiment(tmp_path):
    def write(text: str, name: str = "exp.yaml") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return str(path)
    return write


def dry_run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["run", *args, "--dry-run"])
    out, err = capsys.readouterr()
    return code, out, err


def cluster_info_of(out: str) -> dict:
    return json.loads(out.split("cluster info (det_cluster.json):\n", 1)[1])


def test_dry_run_prints_the_command_the_cluster_info_and_the_notes(experiment, tmp_path, capsys):
    path = experiment(CONST)
    code, out, err = dry_run(capsys, path, "--run-dir", str(tmp_path / "run"))
    assert code == 0
    assert f"command: {sys.executable} train.py --epochs 1" in out
    assert f"context dir (cwd): {tmp_path}" in out
    assert "slots (ranks): 2; max restarts: 2" in out          # the YAML's max_restarts, as Determined
    assert "global_batch_size 8: 4 per slot on 2 slot(s)" in out
    info = cluster_info_of(out)
    assert info["hparams"] == {"global_batch_size": 8, "lr": 0.5}
    assert (info["max_length"], info["trial_id"], info["test_mode"]) == ({"epochs": 2}, 1, False)
    assert info["checkpoint_dir"] == str(tmp_path / "run" / "checkpoints")
    config = info["experiment_config"]          # Determined's defaults filled, as get_experiment_config() has them
    assert (config["scheduling_unit"], config["max_restarts"], config["resources"]) == (
        100, 2, {"slots_per_trial": 2})
    assert err.strip() == f"playground: note: {path}: ignored on a local run: bind_mounts"
    assert not (tmp_path / "run").exists()


def test_a_trial_of_its_own_length_a_continued_trial_and_a_wrong_one_refused(experiment, tmp_path, capsys):
    path = experiment(CONST)
    code, out, _ = dry_run(capsys, path, "--run-dir", str(tmp_path / "run"), "--set", "searcher.max_length.epochs=5")
    assert code == 0 and cluster_info_of(out)["max_length"] == {"epochs": 5}
    assert 'length: {"epochs": 5} (--set searcher.max_length' in out
    code, _, err = dry_run(capsys, path, "--set", "searcher.max_length.batches=5")
    assert code == 2 and "the experiment's length is in epochs" in err


def test_a_sweeps_trial_folder_gives_determineds_trial_id(experiment, tmp_path, capsys):
    path = experiment(CONST)
    out = dry_run(capsys, path, "--run-dir", str(tmp_path / "sweep" / "trials" / "t0004"))[1]
    assert cluster_info_of(out)["trial_id"] == 5


def test_a_sweeps_rungs_reach_the_cluster_info(experiment, capsys):
    path = experiment(CONST)
    assert cluster_info_of(dry_run(capsys, path, "--rungs", "4,16,64")[1])["rungs"] == [4, 16, 64]
    code, _, err = dry_run(capsys, path, "--rungs", "16,4")
    assert code == 2 and "--rungs '16,4': expected increasing positive lengths" in err


def test_max_restarts_and_test_flags_override_the_yaml(experiment, capsys):
    path = experiment(CONST)
    assert "max restarts: 0" in dry_run(capsys, path, "--max-restarts", "0")[1]
    code, out, _ = dry_run(capsys, path, "--test")
    assert "max restarts: 0" in out and cluster_info_of(out)["test_mode"] is True


def test_parameters_file_naming_an_experiment_yaml_is_the_same_run(experiment, capsys):
    path = experiment(CONST)
    code, out, _ = dry_run(capsys, "--parameters-file", path, "--run-dir", "r")
    assert code == 0 and "experiment tiny_const" in out


def test_a_search_is_one_run_only_with_every_sampled_value_set(experiment, capsys):
    path = experiment(ADAPTIVE)
    code, _, err = dry_run(capsys, path)
    assert code == 2
    assert (f"searcher adaptive_asha samples lr, net.width; one run needs a value for each (--set NAME=VALUE), or "
            f"run the search: playground sweep run {path}") in err
    code, out, _ = dry_run(capsys, path, "--set", "lr=0.1", "--set", "net.width=5", "--run-dir", "r")
    assert code == 0
    info = cluster_info_of(out)
    assert info["hparams"] == {"global_batch_size": 16, "lr": 0.1, "net": {"width": 5}}
    assert info["max_length"] is None       # 0.38's time_metric + max_time: the script's fit(max_length) decides
    assert "length: none from the searcher (time_metric batches, max_time 8" in out
    assert f"-m playground.determined.trial_main model_def:MNistTrial" in out


def test_opts_only_flags_are_refused_for_an_experiment(experiment, capsys):
    code, _, err = dry_run(capsys, experiment(CONST), "--strict")
    assert code == 2 and "--strict: not for a Determined experiment" in err


def test_a_broken_experiment_exits_2_with_every_problem_and_no_traceback(experiment, tmp_path):
    path = experiment("entrypoint: model_def:T\nsearcher: {name: random, metric: x}\nmax_restarts: -1\n")
    done = run_cli("run", path, "--run-dir", str(tmp_path / "run"), script="playground")
    assert done.returncode == 2
    assert done.stderr == (f"playground: error: 2 problems in the experiment configuration:\n"
                           f"  - {path}, line 2: searcher.max_trials: required for random (the number of trials)\n"
                           f"  - {path}, line 3: max_restarts: expected a whole number >= 0, got -1\n")
    assert not (tmp_path / "run").exists()


def test_runs_the_trial_through_the_runner(experiment, tmp_path):
    pytest.importorskip("playground.determined.command_run",
                        reason="det-core's runner (playground.determined.command_run) is not in this branch yet")
    (tmp_path / "train.py").write_text("import determined as det\nprint(det.get_cluster_info().trial.hparams)\n")
    done = run_cli("run", experiment(CONST.replace("slots_per_trial: 2", "slots_per_trial: 1")), "--run-dir",
                   str(tmp_path / "run"), script="playground")
    assert done.returncode == 0, done.stderr
    assert "'lr': 0.5" in (tmp_path / "run" / "train.log").read_text()


@pytest.mark.parametrize("line, expected", [
    ("checkpoint_policy: latest", "checkpoint_policy: 'latest'; use one of best, all, none"),
    ("checkpoint_policy: 0", "checkpoint_policy: 0; use one of best, all, none"),
    ("checkpoint_storage: {save_trial_best: -1}", "checkpoint_storage.save_trial_best: expected a whole number >= 0, "
                                                  "got -1"),
    ("checkpoint_storage: {save_trial_latest: 1.5}", "checkpoint_storage.save_trial_latest: expected a whole number "
                                                     ">= 0, got 1.5"),
    ("checkpoint_storage: {type: shared_fs, host_path: ck, save_experiment_best: two}",
     "checkpoint_storage.save_experiment_best: expected a whole number >= 0, got 'two'"),
    ("checkpoint_storage: {save_trial_latest: true}", "checkpoint_storage.save_trial_latest: expected a whole number "
                                                      ">= 0, got True"),
])
def test_checkpoint_policy_and_the_save_counts_are_range_checked_before_anything_starts(experiment, tmp_path,
                                                                                        capsys, line, expected):
    path = experiment(CONST + line + "\n")
    code, out, err = dry_run(capsys, path, "--run-dir", str(tmp_path / "run"))
    assert code == 2 and out == ""
    assert err.startswith(f"playground: error: {path}, line 8: {expected}") and err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()
