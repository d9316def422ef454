"""`playground sweep run adaptive.yaml` of a Trial API experiment whose searcher length is in batches: adaptive
ASHA ranks each trial at every validation, so a trial is stopped at a rung inside its first epoch, not at the
epoch's end. Real sweep, real trials: the Trial-API example of experiments/determined_digits through the runner
and the trial harness. A trial given the sweep's rungs (`--rungs`, cluster info `rungs`) validates at
them too, as Determined 0.2x's searcher operations ended there."""
from __future__ import annotations

import json
import shutil
import textwrap

from playground.cli import main
from playground.determined.trials.fit import rung_batches
from playground.sweeps.files.metrics_tail import MetricsTail
from playground.sweeps.operations.reports import open_sweep
from tests.conftest import REPO
from tests.determined.ranks import records, run, trial_main

EXAMPLES = REPO / "experiments" / "determined_digits"
EPOCH_BATCHES = -(-1438 // 16)      # the digits' training set in global batches of 16, the short last one counted
ADAPTIVE = textwrap.dedent("""\
    name: digits_mid_epoch_asha
    hyperparameters:
      global_batch_size: 16
      learning_rate: {type: categorical, vals: [0.0, 1.0]}   # 0.0 never learns: it loses at its first rung
      n_filters1: 4
      n_filters2: 4
      dropout1: {type: categorical, vals: [0.25, 0.3]}
      dropout2: 0.5
    searcher:
      name: adaptive_asha
      metric: validation_loss
      smaller_is_better: true
      max_trials: 4
      max_length: {batches: 80}      # rungs 20, 40, 80: a stopped trial has 40-60 batches left to be stopped in
      divisor: 2
      max_rungs: 3
      mode: aggressive
      max_concurrent_trials: 1
    min_validation_period: {batches: 10}
    entrypoint: model_def:DigitsTrial
    """)


def test_adaptive_asha_stops_a_trial_api_trial_at_a_rung_inside_its_first_epoch(tmp_path):
    experiment = tmp_path / "determined_digits" / "trial_api"
    shutil.copytree(EXAMPLES / "trial_api", experiment)
    shutil.copy(EXAMPLES / "digits_data.py", experiment.parent)       # model_def.py's ../digits_data.py
    (experiment / "adaptive.yaml").write_text(ADAPTIVE)
    folder = tmp_path / "sweep"
    assert main(["sweep", "run", str(experiment / "adaptive.yaml"), "--sweep-dir", str(folder), "--quiet"]) == 0

    trials = open_sweep(str(folder))[2].get_trials()
    assert len(trials) == 4 and {t.state.name for t in trials} <= {"COMPLETE", "PRUNED"}
    pruned = [t for t in trials if t.state.name == "PRUNED"]
    never_learns = [t for t in trials if t.params["learning_rate"] == 0.0]
    # the seeded sampler's draws, with replacement as Determined's searchers draw
    assert trials[0].params["learning_rate"] == 1.0 and len(never_learns) == 1
    assert all(t in pruned for t in never_learns), [(t.number, t.params, t.state.name) for t in trials]
    state = json.loads((folder / "searcher.json").read_text())
    assert 80 < EPOCH_BATCHES     # every rung (20, 40, 80 batches) lies inside the first epoch
    for trial in pruned:
        name = f"t{trial.number:04d}"
        validations = [json.loads(line) for line in open(folder / "trials" / name / "metrics.jsonl")]
        steps = [r["iteration"] for r in validations]
        assert steps == list(range(10, steps[-1] + 1, 10)) and steps[-1] < EPOCH_BATCHES   # stopped mid-epoch
        assert all(r["kind"] == "epoch" and r["epochs"] == r["iteration"] / EPOCH_BATCHES for r in validations)
        rung = state["trial_rung"][name]
        ranked = [entry[0] for entry in state["rungs"][state["trial_bracket"][name]][rung]]
        assert name in ranked and rung < 2 and name in state["finished"]       # ranked, and stopped, below the top
        assert [20, 40][rung] * 16 in trial.intermediate_values          # reported at the rung's batch, in samples


def test_a_trial_validates_at_its_period_counted_across_epochs_at_its_rungs_and_at_the_end(tmp_path):
    """The tiny trial: epochs of 6 batches of 8, 9 batches in all; rungs at 2 and 3 batches; a period of 4."""
    info = dict(experiment_config={"min_validation_period": {"batches": 4}},
                hparams={"global_batch_size": 8, "n_filters1": 4, "dropout": 0.25, "learning_rate": 1.0},
                trial_id=1, experiment_id=1, max_length={"batches": 9}, rungs=[2, 3, 9])
    run(trial_main("mnist_trial:MNistTrial"), tmp_path / "run", info, 1)
    found = records(tmp_path / "run")
    # rungs 2, 3; period 4, 8 (the 8th batch of the trial, not the 4th of epoch 2); the end, 9; the epoch end
    # at 6 ends no window (Determined's controller stops at its boundaries only): no record
    assert [(r["kind"], r["iteration"]) for r in found] == [("epoch", 2), ("epoch", 3), ("epoch", 4),
                                                            ("epoch", 8), ("epoch", 9)]
    # what the sweep's agent reads: each validation at its step, samples = batches x 8 (the searcher's unit)
    assert [(r["iteration"], r["samples"]) for r in MetricsTail(str(tmp_path / "run")).new_epoch_records()] == [
        (2, 16), (3, 24), (4, 32), (8, 64), (9, 72)]


def test_rungs_in_records_are_the_first_batch_reaching_them_and_epoch_rungs_are_epoch_ends():
    assert rung_batches({"max_length": {"records": 640}, "rungs": [40, 160, 640]}, 32) == {2, 5, 20}
    assert rung_batches({"max_length": {"batches": 64}, "rungs": [4, 16, 64]}, 32) == {4, 16, 64}
    assert rung_batches({"max_length": {"epochs": 9}, "rungs": [1, 3, 9]}, 32) == set()
    assert rung_batches({"max_length": None, "rungs": [4, 16]}, 32) == set()     # 0.38: time_metric, no length
