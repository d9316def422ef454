"""`playground sweep run|preview EXPERIMENT.yaml`: a Determined experiment as a sweep, with exact trial counts.

The sweeps are real (study, agents, processes, ASHA's SIGTERMs); each trial is tests/determined/stand_in_trial.py
(the same arguments as `playground run EXPERIMENT.yaml`, checked by the real loader) until det-core's runner is
merged; the spec it runs is the one the real translation made from the YAML.
"""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from playground.cli import main
from playground.sweeps.agents.trial_process import trial_command
from playground.sweeps.inputs.spec import load_spec, read_spec_file
from playground.sweeps.operations.reports import open_sweep

STAND_IN = [sys.executable, str(Path(__file__).resolve().parent / "stand_in_trial.py")]
HPARAMS = textwrap.dedent("""\
    hyperparameters:
      global_batch_size: 8
      lr: {type: log, base: 10, minval: -3, maxval: 0}
      net:
        width: {type: int, minval: 4, maxval: 8}
        act: {type: categorical, vals: [relu, tanh]}
    """)
GRID = """\
    entrypoint: model_def:T
    searcher: {name: grid, metric: validation_loss, max_length: {batches: 2}, max_concurrent_trials: 2}
    hyperparameters:
      global_batch_size: 8
      lr: {type: log, base: 10, minval: -3, maxval: -1, count: 3}
      depth: {type: int, minval: 0, maxval: 5, count: 3}
      drop: {type: double, minval: 0.2, maxval: 0.4, count: 1}
      opt: {kind: {type: categorical, vals: [sgd, adam]}}
    """
ASHA_OLD = textwrap.dedent("""\
    entrypoint: model_def:T
    searcher: {name: adaptive_asha, metric: validation_loss, max_trials: 6, max_length: {batches: 16},
               divisor: 2, max_rungs: 3, mode: aggressive, max_concurrent_trials: 3}
    """) + HPARAMS
ASHA_NEW = textwrap.dedent("""\
    entrypoint: python3 train.py --epochs 1
    searcher: {name: adaptive_asha, metric: validation_loss, max_trials: 6, time_metric: batches, max_time: 16,
               divisor: 2, max_rungs: 3, mode: aggressive, max_concurrent_trials: 3}
    """) + HPARAMS


def write(tmp_path, text: str, name: str = "exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def preview(capsys, path: Path) -> str:
    assert main(["sweep", "preview", str(path)]) == 0
    return capsys.readouterr().out


def sweep(tmp_path, path: Path, *args: str) -> list:
    """Run the sweep the translation makes of `path`, with the stand-in as each trial's program."""
    spec = {**read_spec_file(str(path)), "trial_program": STAND_IN}
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    folder = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec_file), "--sweep-dir", str(folder), "--quiet", *args]) == 0
    return open_sweep(str(folder))[2].get_trials()


def test_the_translation_maps_every_searcher_key(tmp_path):
    spec = load_spec(str(write(tmp_path, ASHA_OLD + "max_restarts: 3\nresources: {slots_per_trial: 2}\n")))
    assert spec.experiment == str(tmp_path / "exp.yaml")
    assert [(o.metric, o.mode) for o in spec.objectives] == [("validation_loss", "min")]
    assert spec.searcher == {"name": "adaptive_asha", "max_trials": 6, "max_concurrent_trials": 3,
                             "time_metric": "iteration", "max_time": 16, "divisor": 2, "max_rungs": 3,
                             "mode": "aggressive", "seed": 0}
    assert (spec.max_restarts, spec.slots_per_trial) == (3, 2)
    assert {p.key: p.type for p in spec.space} == {"global_batch_size": "const", "lr": "log", "net.width": "int",
                                                    "net.act": "categorical"}
    assert trial_command(spec, {"lr": 0.01, "net.width": 5}, "/runs/t0001") == [
        sys.executable, "-m", "playground", "run", spec.experiment, "--max-restarts", "0", "--set", "lr=0.01",
        "--set", "net.width=5", "--run-dir", "/runs/t0001"]


@pytest.mark.parametrize("length, time_metric, max_time", [
    ("max_length: {records: 640}", "samples", 640), ("max_length: {epochs: 3}", "epochs", 3),
    ("time_metric: epochs\n  max_time: 3", "epochs", 3), ("time_metric: records\n  max_time: 640", "samples", 640)])
def test_lengths_map_onto_the_sweeps_time_metric(tmp_path, length, time_metric, max_time):
    path = write(tmp_path, f"entrypoint: model_def:T\nsearcher:\n  name: adaptive_asha\n  metric: acc\n"
                           f"  smaller_is_better: false\n  max_trials: 8\n  {length}\n")
    spec = load_spec(str(path))
    assert (spec.searcher["time_metric"], spec.searcher["max_time"]) == (time_metric, max_time)
    assert spec.objectives[0].mode == "max"


def test_preview_counts_the_grid_as_determined_does(tmp_path, capsys):
    out = preview(capsys, write(tmp_path, GRID))
    assert "18 trials:" in out             # lr 3 x depth 3 x drop 1 x opt.kind 2
    assert "depth: [0, 3, 5]" in out        # Determined rounds 2.5 half away from zero
    assert "drop: [0.30000000000000004]" in out       # count 1: the midpoint, (0.2 + 0.4) / 2 in floats
    assert "t0000 lr=0.001, depth=0, drop=0.30000000000000004, opt.kind='sgd'" in out


def test_preview_of_adaptive_asha_old_and_new_lengths_is_the_same_search(tmp_path, capsys):
    old, new = preview(capsys, write(tmp_path, ASHA_OLD, "old.yaml")), preview(capsys, write(tmp_path, ASHA_NEW))
    expected = ("6 trials, mode aggressive, divisor 2, max_time 16 iteration; 1 brackets:\n"
                "  bracket 0: 3 rungs at [4, 8, 16] iteration, 6 trials, 3 at once")
    assert expected in old and expected in new


def test_a_broken_experiment_is_exit_2_naming_the_key(tmp_path, capsys):
    path = write(tmp_path, "entrypoint: model_def:T\nsearcher: {name: grid, metric: x}\n"
                           "hyperparameters: {lr: {type: double, minval: 0, maxval: 1}}\n")
    assert main(["sweep", "preview", str(path)]) == 2
    assert f"{path}, line 3: hyperparameters.lr.count: the grid searcher needs `count`" in capsys.readouterr().err


def test_a_const_experiment_is_one_trial(tmp_path):
    trials = sweep(tmp_path, write(tmp_path, """\
        entrypoint: model_def:T
        searcher: {name: single, metric: validation_loss, max_length: {batches: 3}}
        hyperparameters: {global_batch_size: 8, lr: 0.1, net: {width: 4}}
        """))
    assert [t.state.name for t in trials] == ["COMPLETE"]
    assert trials[0].user_attrs["sets"] == {"global_batch_size": 8, "lr": 0.1, "net.width": 4}


def test_random_runs_exactly_max_trials(tmp_path):
    trials = sweep(tmp_path, write(tmp_path, "entrypoint: model_def:T\nsearcher: {name: random, metric: "
                                             "validation_loss, max_trials: 3, max_length: {batches: 2}}\n" + HPARAMS),
                   "--workers", "2")
    assert len(trials) == 3 and {t.state.name for t in trials} == {"COMPLETE"}
    assert len({json.dumps(t.user_attrs["sets"], sort_keys=True) for t in trials}) == 3


SMALL_SPACE = """\
    entrypoint: model_def:T
    hyperparameters: {global_batch_size: 8, increment_by: {type: int, minval: 1, maxval: 8}}
    searcher: {name: SEARCHER, metric: validation_loss, max_trials: 10, max_length: {batches: 4}, max_concurrent_trials: 2}
    """


@pytest.mark.parametrize("searcher", ["random", "adaptive_asha"])
def test_a_search_over_a_small_space_samples_with_replacement_and_runs_max_trials(tmp_path, capsys, searcher):
    """Determined's searchers draw every trial's hyperparameters independently: 8 points and max_trials 10 make
    10 trials (the shape of Determined's Core API tutorial, stage 3), so at least one point runs twice. A
    playground sweep of the same space runs each point once (tests/playground/sweeps/agents/test_distinct_proposals.py)."""
    path = write(tmp_path, SMALL_SPACE.replace("SEARCHER", searcher))
    said = preview(capsys, path)
    assert "distinct points" not in said and ("10 trials" in said)
    trials = sweep(tmp_path, path)
    assert len(trials) == 10 and {t.state.name for t in trials} <= {"COMPLETE", "PRUNED"}
    drawn = [t.user_attrs["sets"]["increment_by"] for t in trials]
    assert set(drawn) <= set(range(1, 9)) and len(set(drawn)) < 10, drawn
    assert not any(t.user_attrs.get("extra") for t in trials)


def test_grid_runs_exactly_every_point_once(tmp_path):
    trials = sweep(tmp_path, write(tmp_path, GRID), "--workers", "3")
    points = {json.dumps(t.user_attrs["sets"], sort_keys=True) for t in trials}
    assert len(trials) == 18 and len(points) == 18 and {t.state.name for t in trials} == {"COMPLETE"}
    assert {t.user_attrs["sets"]["depth"] for t in trials} == {0, 3, 5}


@pytest.mark.parametrize("text", [ASHA_OLD, ASHA_NEW], ids=["max_length", "max_time"])
def test_adaptive_asha_runs_exactly_max_trials_and_stops_trials_at_rungs(tmp_path, text):
    slow = text.replace("  global_batch_size: 8\n", "  global_batch_size: 8\n  stand_in_seconds: 0.1\n")
    trials = sweep(tmp_path, write(tmp_path, slow))     # 0.1 s a batch: time for the agent to stop one at a rung
    states = [t.state.name for t in trials]
    assert len(trials) == 6 and set(states) == {"COMPLETE", "PRUNED"}
    for trial in trials:
        folder = tmp_path / "sweep" / "trials" / f"t{trial.number:04d}"
        assert json.loads((folder / "opts.json").read_text())["rungs"] == [4, 8, 16]     # given as --rungs
        records = [json.loads(line) for line in open(folder / "metrics.jsonl")]
        if trial.state.name == "COMPLETE":
            assert records[-1]["iteration"] == 16
        else:
            assert 4 <= records[-1]["iteration"] < 16      # stopped once past a rung below the top


def test_sweep_test_runs_one_trial_of_the_experiment_with_its_own_test_mode(tmp_path, capsys):
    spec = {**read_spec_file(str(write(tmp_path, ASHA_NEW))), "trial_program": STAND_IN}
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    assert main(["sweep", "run", str(spec_file), "--test"]) == 0
    out = capsys.readouterr().out      # the trial got --test: two batches, so the loss ends with 2 / 2
    assert "sweep --test passed" in out and "full test pass has {\"validation_loss\"" in out and "and iteration" in out


def test_sweep_continue_takes_an_undotted_hyperparameter(tmp_path, capsys):
    sweep(tmp_path, write(tmp_path, """\
        entrypoint: model_def:T
        searcher: {name: single, metric: validation_loss, max_length: {batches: 2}}
        hyperparameters: {global_batch_size: 8, lr: 0.1}
        """))
    capsys.readouterr()
    assert main(["sweep", "continue", str(tmp_path / "sweep"), "t0000", "--set", "lr=0.05"]) == 0
    assert "added trial t0001: continues t0000" in capsys.readouterr().out
    assert json.loads((tmp_path / "sweep" / "trials" / "t0001" / "warm_start.json").read_text())["sets"]["lr"] == 0.05


def test_sweep_continue_takes_a_new_length_and_checks_it_at_once(tmp_path, capsys):
    """Determined's "continue trial" with a longer max_length: the new length in the experiment's unit, checked
    when `sweep continue` is typed (exit 2, nothing added); the continued trial trains to it."""
    sweep(tmp_path, write(tmp_path, """\
        entrypoint: model_def:T
        searcher: {name: single, metric: validation_loss, max_length: {batches: 2}}
        hyperparameters: {global_batch_size: 8, lr: 0.1}
        """))
    capsys.readouterr()
    folder = str(tmp_path / "sweep")
    assert main(["sweep", "continue", folder, "t0000", "--set", "searcher.max_length.epochs=4"]) == 2
    assert "the experiment's length is in batches" in capsys.readouterr().err
    assert main(["sweep", "continue", folder, "t0000", "--set", "searcher.max_length.batches=0"]) == 2
    assert "a positive whole number of batches" in capsys.readouterr().err
    assert not (tmp_path / "sweep" / "trials" / "t0001").exists()
    assert main(["sweep", "continue", folder, "t0000", "--set", "searcher.max_length.batches=5"]) == 0
    assert "added trial t0001: continues t0000" in capsys.readouterr().out
    spec_file = tmp_path / "spec.json"
    assert main(["sweep", "run", str(spec_file), "--sweep-dir", folder, "--quiet"]) == 0
    records = [json.loads(line) for line in open(tmp_path / "sweep" / "trials" / "t0001" / "metrics.jsonl")]
    assert records[-1]["iteration"] == 5


CORE_API_SCRIPT = '''\
import math, time
import determined as det

with det.core.init() as core:
    lr = det.get_cluster_info().trial.hparams["lr"]
    for op in core.searcher.operations():
        for step in range(1, op.length + 1):
            time.sleep(0.1)
            loss = (math.log10(lr) + 1.0) ** 2 + 2.0 / step
            core.train.report_validation_metrics(steps_completed=step, metrics={"validation_loss": loss})
            op.report_progress(step)
            if core.preempt.should_preempt():
                raise SystemExit(0)
        op.report_completed(loss)
    time.sleep(1.5)          # work after the last report (a final test pass, say): the top rung's stop finds it
    if core.preempt.should_preempt():
        raise SystemExit(0)
'''


def test_a_core_api_search_through_the_runner_ends_with_exactly_max_trials(tmp_path):
    import importlib.util
    if importlib.util.find_spec("playground.determined.command_run") is None:
        pytest.skip("det-core's runner (playground.determined.command_run) is not in this branch yet")
    (tmp_path / "search.py").write_text(CORE_API_SCRIPT)
    path = write(tmp_path, ASHA_OLD.replace("model_def:T", "python3 search.py"))
    folder = tmp_path / "sweep"
    assert main(["sweep", "run", str(path), "--sweep-dir", str(folder), "--quiet", "--workers", "3"]) == 0
    trials = open_sweep(str(folder))[2].get_trials()
    assert len(trials) == 6 and {t.state.name for t in trials} == {"COMPLETE", "PRUNED"}
    # a trial ranked at the top rung trained the full length: complete, even though the stop found it still busy
    for trial in trials:
        last = json.loads((folder / "trials" / f"t{trial.number:04d}" / "metrics.jsonl").read_text().splitlines()[-1])
        assert (trial.state.name == "COMPLETE") == (last["iteration"] == 16), (trial.number, trial.state, last)
