"""The rows of docs/determined.md's key table and option table that no other test reaches, each as the page states
it: keys noted once, keys refused with their path, keys honoured and where they go (the cluster info, the sweep
spec, the run folder), `playground run` flags an experiment refuses, and `playground submit` of an experiment.
Checked where they act: the loader, `--dry-run`, the sweep translation; one tiny run for what a run does with
environment_variables and --test."""
from __future__ import annotations

import textwrap

import pytest

from playground.cli import main
from playground.compat.determined._info import from_cluster_file
from playground.determined.experiment_config import ExperimentConfigError, load_experiment
from playground.sweeps.inputs.spec import load_spec
from tests.conftest import run_cli
from tests.determined.test_run_experiment import cluster_info_of, dry_run

BASE = textwrap.dedent("""\
    name: forms
    entrypoint: python3 script.py
    hyperparameters: {global_batch_size: 8}
    searcher: {name: single, metric: loss, max_length: {batches: 2}}
    """)


def write(tmp_path, text: str, name: str = "exp.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def problems_of(path: str) -> list[str]:
    with pytest.raises(ExperimentConfigError) as caught:
        load_experiment(path)
    return caught.value.problems


NOTED = {   # docs/determined.md's `noted` rows, each with a value that is not empty
    "tensorboard_storage": "{type: shared_fs, host_path: /tb}", "log_policies": "[{pattern: OOM, action: cancel_retries}]",
    "profiling": "{enabled: true}", "debug": "true", "preemption_timeout": "60", "retention_policy": "{log_retention_days: 3}",
    "project": "p", "workspace": "w", "security": "{authz: x}", "integrations": "{pachyderm: {}}",
    "internal": "{x: 1}", "slurm": "{gpu_type: a100}", "pbs": "{x: 1}", "data_layer": "{type: shared_fs}",
    "bind_mounts": "[{host_path: /d, container_path: /d}]"}
NOTED_SECTIONS = {
    "checkpoint_storage": ["propagation", "checkpoint_path", "tensorboard_path"],
    "environment": ["image", "proxy_ports", "ports", "registry_auth", "force_pull_image", "pod_spec",
                    "add_capabilities", "drop_capabilities"],
    "resources": ["resource_pool", "priority", "weight", "shm_size", "agent_label", "devices", "max_slots",
                  "native_parallel", "is_single_node", "slots"],
    "optimizations": ["auto_tune_tensor_fusion", "average_aggregated_gradients", "average_training_metrics",
                      "gradient_compression", "grad_updates_size_file", "tensor_fusion_cycle_time",
                      "tensor_fusion_threshold"]}


def test_every_key_the_page_calls_noted_is_accepted_and_named_in_one_note(tmp_path):
    lines = [f"{key}: {value}" for key, value in NOTED.items()]
    lines += [f"{section}:\n" + "".join(f"  {key}: x\n" for key in keys) for section, keys in NOTED_SECTIONS.items()]
    experiment = load_experiment(write(tmp_path, BASE + "\n".join(lines) + "\n"))
    [note] = experiment.notes
    named = note.split("ignored on a local run: ", 1)[1].split(", ")
    expected = list(NOTED) + [f"{section}.{key}" for section, keys in NOTED_SECTIONS.items() for key in keys]
    assert sorted(named) == sorted(expected)
    quiet = load_experiment(write(tmp_path, BASE + "debug: false\n", "quiet.yaml"))     # noted only when true
    assert quiet.notes == []


@pytest.mark.parametrize("line, expected", [
    *[(f"searcher: {{name: {name}, metric: x}}", f"searcher.name: '{name}' is not supported; {name} was removed from "
       "Determined, use") for name in ("async_halving", "adaptive", "adaptive_simple", "sync_halving", "pbt")],
    ("searcher: {name: single, metric: x, source_checkpoint_uuid: abc}", "searcher.source_checkpoint_uuid: starting "
     "from another trial's checkpoint needs Determined's checkpoint registry"),
    *[(f"checkpoint_storage: {{type: {kind}}}", f"checkpoint_storage.type: {kind} stores checkpoints in a "
       "cloud bucket") for kind in ("gcs", "azure")],
    ("entrypoint: python3 -m determined.launch.tensorflow train.py", "runs scripts on tensorflow"),
    *[(f"optimizations: {{mixed_precision: {level}}}", f"optimizations.mixed_precision: '{level}' is NVIDIA apex's AMP")
      for level in ("O2", "O3")],
    ("optimizations: {aggregation_frequency: 0}", "optimizations.aggregation_frequency: expected a whole number >= 1"),
    ("searcher: {name: single}", "searcher.metric: required"),
    ("searcher: {name: single, metric: x, smaller_is_better: maybe}", "searcher.smaller_is_better: expected true or "
     "false"),
    ("resources: {slotz_per_trial: 2}", "resources.slotz_per_trial: not a key of resources; did you mean "
     "slots_per_trial?"),
])
def test_a_refused_form_is_one_problem_naming_its_key(tmp_path, line, expected):
    key = line.split(":")[0]
    kept = [row for row in textwrap.dedent(BASE).splitlines() if not row.startswith(key + ":")]
    problems = problems_of(write(tmp_path, "\n".join(kept + [line]) + "\n"))
    assert len(problems) == 1 and expected in problems[0], problems


def test_honoured_keys_reach_the_cluster_info(tmp_path, capsys, monkeypatch):
    """labels, description, data, records_per_epoch, the experiment seed (ClusterInfo.trial.trial_seed: seed +
    trial id), environment_variables per device type (cpu here), checkpoint_storage of type directory, the
    accepted optimizations and stop_once; the run folder's default name is runs/<name>-<time> in the cwd."""
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, BASE + textwrap.dedent("""\
        labels: [digits, small]
        description: a tiny run
        data: {url: /data/digits}
        records_per_epoch: 96
        reproducibility: {experiment_seed: 7}
        environment: {environment_variables: {cpu: [FLAG=cpu], cuda: [FLAG=cuda]}}
        checkpoint_storage: {type: directory, container_path: ckpts}
        optimizations: {aggregation_frequency: 4, mixed_precision: O0}
        """))
    experiment = load_experiment(path)
    assert experiment.notes == [] and experiment.environment_variables == {"FLAG": "cpu"}
    assert experiment.checkpoint_dir == str(tmp_path / "ckpts")
    code, out, err = dry_run(capsys, path)
    assert code == 0 and err == ""
    assert f"run dir: {tmp_path / 'runs' / 'forms-'}" in out
    info = cluster_info_of(out)
    config = info["experiment_config"]
    assert (config["labels"], config["description"], config["data"]) == (["digits", "small"], "a tiny run",
                                                                        {"url": "/data/digits"})
    assert (info["records_per_epoch"], info["checkpoint_dir"]) == (96, str(tmp_path / "ckpts"))
    assert from_cluster_file(info).trial.trial_seed == 7 + 1
    assert from_cluster_file(info).user_data == {"url": "/data/digits"}
    asha = write(tmp_path, BASE.replace("searcher: {name: single, metric: loss, max_length: {batches: 2}}",
                                        "searcher: {name: adaptive_asha, metric: loss, max_trials: 4, stop_once: true, "
                                        "max_length: {batches: 16}}"), "asha.yaml")
    assert load_experiment(asha).notes == []


def test_the_searchers_seed_is_the_experiment_seed_and_a_single_searcher_draws_from_it(tmp_path, capsys):
    random = write(tmp_path, BASE.replace("name: single,", "name: random, max_trials: 3,") +
                   "reproducibility: {experiment_seed: 7}\n", "random.yaml")
    spec = load_spec(random)
    assert spec.searcher["seed"] == 7 and "max_concurrent_trials" not in spec.searcher     # 1 worker unless given
    single = BASE.replace("{global_batch_size: 8}", "{global_batch_size: 8, lr: {type: double, minval: 0, maxval: 1}}")
    draws = []
    for seed in (7, 7, 8):
        path = write(tmp_path, single + f"reproducibility: {{experiment_seed: {seed}}}\n", f"single{seed}.yaml")
        code, out, err = dry_run(capsys, path)
        assert code == 0 and f"searcher single draws lr=" in err and f"(seed {seed};" in err
        draws.append(cluster_info_of(out)["hparams"]["lr"])
    assert draws[0] == draws[1] != draws[2]       # a re-run draws the same; another seed, another draw


def test_bracket_rungs_reach_the_sweep_and_its_preview(tmp_path, capsys):
    path = write(tmp_path, BASE.replace("searcher: {name: single, metric: loss, max_length: {batches: 2}}",
                                        "searcher: {name: adaptive_asha, metric: loss, max_trials: 8, max_length: "
                                        "{batches: 64}, max_rungs: 3, mode: conservative, bracket_rungs: [3]}"))
    assert load_spec(path).searcher["bracket_rungs"] == [3]
    assert main(["sweep", "preview", path]) == 0
    out = capsys.readouterr().out
    assert "1 brackets:" in out and "bracket 0: 3 rungs at [4, 16, 64] iteration, 8 trials" in out


@pytest.mark.parametrize("flag", [["--defaults-file", "d.json"], ["--shard-id", "0"], ["--resume"],
                                  ["--module-map", "m.py"]])
def test_opts_only_flags_are_refused_for_an_experiment(tmp_path, capsys, monkeypatch, flag):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.json").write_text("{}")
    (tmp_path / "m.py").write_text("MODULE_MAP = {}\n")
    code, _, err = dry_run(capsys, write(tmp_path, BASE), *flag)
    assert code == 2 and f"{flag[0]}: not for a Determined experiment" in err


def test_submit_refuses_an_experiment_naming_what_to_do(tmp_path, capsys):
    path = write(tmp_path, BASE)
    assert main(["submit", path]) == 2
    err = capsys.readouterr().err
    assert "a Determined experiment is not submitted yet" in err and f"playground run {path}" in err


SCRIPT = """\
import os
import determined as det
print("FLAG", os.environ.get("FLAG"), "RUN", det.get_cluster_info().master_url, flush=True)
"""


def test_a_test_run_gets_the_environment_variables_and_a_temporary_folder(tmp_path):
    """environment_variables are set for the command; --test without --run-dir runs in a temporary folder, so
    nothing is left in the working directory."""
    (tmp_path / "script.py").write_text(SCRIPT)
    path = write(tmp_path, BASE + "environment: {environment_variables: [FLAG=from-yaml]}\n")
    work = tmp_path / "work"
    work.mkdir()
    done = run_cli("run", path, "--test", cwd=work, script="playground")
    assert done.returncode == 0, done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert "FLAG from-yaml RUN local://" in said and "/playground-test-" in said.split("RUN local://", 1)[1]
    assert list(work.iterdir()) == []
