"""The Determined experiment YAML: every key checked as Determined's schema does, every problem at once with
its key path and line, keys that mean nothing locally listed once, hyperparameter forms and the
global_batch_size split."""
from __future__ import annotations

import textwrap

import pytest

from playground.determined.experiment_config import ExperimentConfigError, load_experiment
from playground.determined.hyperparameters import per_slot_batch_size
from playground.determined.searcher_config import searcher_length
from playground.determined.trial_setup import cluster_info, parse_sets, trial_hparams
from tests.conftest import REPO

EXAMPLES = REPO / "experiments" / "determined_digits"


def write(tmp_path, text: str, name: str = "exp.yaml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def problems_of(path: str) -> list[str]:
    with pytest.raises(ExperimentConfigError) as caught:
        load_experiment(path)
    return caught.value.problems


def test_every_problem_is_reported_at_once_with_its_key_path_and_line(tmp_path):
    path = write(tmp_path, """\
        name: broken
        entrypoint: model_def:MNistTrial
        hyperparameters:
          lr: {type: double, minval: 1.0, maxval: 0.1}
          layers: {type: int, minval: 1, maxval: 3, step: 1}
          opt:
            kind: {type: categorical, vals: []}
            momentum: {type: loq, minval: -3, maxval: 0}
        searcher:
          name: random
          metric: loss
          max_length: {minutes: 3}
        max_restart: 3
        resources: {slots_per_trial: -1}
        min_validation_period: {batches: -1}
        """)
    problems = problems_of(path)
    expected = [
        (13, "max_restart: not a key of Determined's experiment configuration; did you mean max_restarts?"),
        (9, "searcher.max_trials: required for random"),
        (12, "searcher.max_length: a length is one of {batches: N}, {records: N}, {epochs: N}"),
        (4, "hyperparameters.lr: minval (1.0) must be below maxval (0.1)"),
        (5, "hyperparameters.layers.step: not a key of type int"),
        (7, "hyperparameters.opt.kind.vals: expected a non-empty list"),
        (8, "hyperparameters.opt.momentum.type: 'loq' is not a hyperparameter type"),
        (14, "resources.slots_per_trial: expected a whole number >= 0, got -1"),
        (15, "min_validation_period.batches: expected a whole number >= 0, got -1"),
    ]
    for line, text in expected:
        assert any(p.startswith(f"{path}, line {line}: {text}") for p in problems), (text, problems)
    assert len(problems) == len(expected)


def test_yaml_syntax_errors_name_line_and_column(tmp_path):
    path = write(tmp_path, "entrypoint: model_def:T\nsearcher:\n  name: single\n   metric: x\n")
    [problem] = problems_of(path)
    assert problem.startswith(f"{path}, line 4, column 10: not valid YAML")


def test_a_yaml_without_entrypoint_is_not_an_experiment(tmp_path):
    [problem] = problems_of(write(tmp_path, "searcher: {name: single, metric: x}\n"))
    assert "not a Determined experiment configuration (no `entrypoint` key)" in problem


def test_keys_that_mean_nothing_locally_are_listed_once_in_a_note(tmp_path):
    path = write(tmp_path, """\
        entrypoint: python3 train.py
        searcher: {name: single, metric: loss}
        bind_mounts: [{host_path: /data, container_path: /data}]
        environment:
          image: determinedai/pytorch:latest
          environment_variables: [MY_FLAG=1]
        resources: {slots_per_trial: 2, resource_pool: gpus}
        profiling: {enabled: true}
        workspace: team
        data: {url: https://example.com/mnist.tgz}
        """)
    experiment = load_experiment(path)
    assert experiment.notes == [f"{path}: ignored on a local run: bind_mounts, profiling, workspace, "
                                "environment.image, resources.resource_pool"]
    assert experiment.environment_variables == {"MY_FLAG": "1"}
    assert experiment.slots_per_trial == 2
    assert experiment.config["data"] == {"url": "https://example.com/mnist.tgz"}   # user data, passed on


@pytest.mark.parametrize("text, expected", [
    ("checkpoint_storage: {type: s3, bucket: b}", "checkpoint_storage.type: s3 stores checkpoints in a cloud bucket"),
    ("optimizations: {mixed_precision: O1}", "optimizations.mixed_precision: 'O1' is NVIDIA apex's AMP"),
    ("searcher: {name: pbt, metric: x}", "searcher.name: 'pbt' is not supported"),
    ("searcher: {name: custom, metric: x}", "a custom searcher runs on Determined's master"),
    ("searcher: {name: single, metric: x, source_trial_id: 3}", "searcher.source_trial_id: starting from another"),
    ("searcher: {name: adaptive_asha, metric: x, max_trials: 4, time_metric: val_acc, max_time: 3}",
     "searcher.time_metric: 'val_acc' cannot be ranked on locally"),
    ("entrypoint: python3 -m determined.launch.deepspeed train.py", "runs scripts on deepspeed"),
])
def test_a_key_whose_meaning_cannot_be_honoured_is_an_error_naming_it(tmp_path, text, expected):
    base = {"entrypoint": "entrypoint: model_def:T", "searcher": "searcher: {name: single, metric: loss}"}
    key = text.split(":")[0]
    lines = [text] + [line for k, line in base.items() if k != key]
    problems = problems_of(write(tmp_path, "\n".join(lines) + "\n"))
    assert any(expected in p for p in problems), problems


def test_checkpoint_storage_shared_fs_is_a_host_folder(tmp_path):
    path = write(tmp_path, """\
        entrypoint: python3 train.py
        searcher: {name: single, metric: loss}
        checkpoint_storage: {type: shared_fs, host_path: ckpts, storage_path: exp1, save_trial_best: 2}
        """)
    experiment = load_experiment(path)
    assert experiment.checkpoint_dir == str(tmp_path / "ckpts" / "exp1")
    assert not any("save_trial_best" in note for note in experiment.notes)     # honoured: the Trial API's retention


def test_adaptive_asha_takes_the_old_max_length_or_the_new_max_time_not_both(tmp_path):
    both = write(tmp_path, """\
        entrypoint: python3 train.py
        searcher: {name: adaptive_asha, metric: loss, max_trials: 4, max_length: {batches: 8},
                   time_metric: batches, max_time: 8}
        """)
    assert any("not both" in p for p in problems_of(both))
    old = load_experiment(write(tmp_path, """\
        entrypoint: python3 train.py
        searcher: {name: adaptive_asha, metric: loss, max_trials: 4, max_length: {records: 640}}
        """, "old.yaml"))
    new = load_experiment(write(tmp_path, """\
        entrypoint: python3 train.py
        searcher: {name: adaptive_asha, metric: loss, max_trials: 4, time_metric: epochs, max_time: 3}
        """, "new.yaml"))
    assert (old.max_length(), new.max_length()) == ({"records": 640}, None)   # 0.38: the script's fit decides
    assert (searcher_length(old.searcher), searcher_length(new.searcher)) == (("records", 640), ("epochs", 3))
    assert (old.searcher["divisor"], old.searcher["max_rungs"], old.searcher["mode"]) == (4, 5, "standard")


def test_grid_needs_count_on_ranges(tmp_path):
    path = write(tmp_path, """\
        entrypoint: python3 train.py
        searcher: {name: grid, metric: loss}
        hyperparameters: {lr: {type: log, base: 10, minval: -3, maxval: -1}, depth: {type: int, minval: 1, maxval: 3, count: 3}}
        """)
    assert problems_of(path) == [f"{path}, line 3: hyperparameters.lr.count: the grid searcher needs `count` on log "
                                 "hyperparameters"]


def test_hyperparameter_forms_give_one_trials_nested_values(tmp_path):
    experiment = load_experiment(write(tmp_path, """\
        entrypoint: model_def:T
        searcher: {name: random, metric: loss, max_trials: 2}
        resources: {slots_per_trial: 3}
        hyperparameters:
          global_batch_size: 64
          dropout: {type: const, val: 0.5}
          optimizer:
            lr: {type: log, base: 10, minval: -4, maxval: -1}
            kind: {type: categorical, vals: [sgd, adam]}
          layers: {type: int, minval: 1, maxval: 4}
        """))
    hparams = trial_hparams(experiment, parse_sets(["optimizer.lr=0.001", "optimizer.kind=adam", "layers=2"]))
    assert hparams == {"global_batch_size": 64, "dropout": 0.5, "optimizer": {"lr": 0.001, "kind": "adam"},
                       "layers": 2}
    info = cluster_info(experiment, hparams, str(tmp_path / "run"), test_mode=False)
    assert (info["global_batch_size"], info["slots_per_trial"], info["max_length"]) == (64, 3, None)
    assert per_slot_batch_size(hparams, 3) == (21, None)      # 64 // 3, as Determined splits it
    with pytest.raises(ExperimentConfigError) as caught:
        trial_hparams(experiment, parse_sets(["optimizer.kind=rmsprop", "layers=2.5"]))
    assert caught.value.problems == [
        "--set optimizer.kind=\"rmsprop\": 'rmsprop' is not one of ['sgd', 'adam'] (hyperparameters.optimizer.kind)",
        "--set layers=2.5: expected an integer, got 2.5 (hyperparameters.layers)",
        f"{experiment.path}: searcher random samples optimizer.lr; one run needs a value for each (--set "
        f"NAME=VALUE), or run the search: playground sweep run {experiment.path}"]


def test_global_batch_size_below_the_slots_is_an_error(tmp_path):
    path = write(tmp_path, """\
        entrypoint: model_def:T
        searcher: {name: single, metric: loss}
        resources: {slots_per_trial: 8}
        hyperparameters: {global_batch_size: 4}
        """)
    assert problems_of(path) == [f"{path}, line 4: hyperparameters.global_batch_size: 4 is below "
                                 "resources.slots_per_trial (8); every slot needs at least one record per batch"]


def test_the_example_yamls_load_without_notes():
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        experiment = load_experiment(str(path))
        assert experiment.notes == [], path
