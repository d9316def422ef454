"""`sweep run --test`: one tiny trial through the whole machinery; it passes whenever the base passes `run --test`,
even when the space samples the batch size, and a trial that fails is reported with its output."""
from __future__ import annotations

import json

from playground.cli import main


def test_sweep_test_passes_on_a_space_that_samples_batch_sizes_above_the_bases(write_spec, capsys):
    # the tiny base's global batch is 16: an epoch of two of them (32 samples) holds no batch of 48 or 64
    spec = write_spec({"name": "random", "max_trials": 4, "seed": 0},
                      {"epoch_iter.batch_per_device": {"type": "categorical", "vals": [48, 64]}}, contract=False)
    assert main(["sweep", "run", str(spec), "--test"]) == 0
    assert "sweep --test passed" in capsys.readouterr().out


def test_sweep_test_reports_a_failing_trial_with_its_output(write_spec, base_file, capsys):
    opts = json.loads(base_file.read_text())
    opts["opts"]["model_param"]["contract_fail_attempts"] = 9
    base_file.write_text(json.dumps(opts))
    spec = write_spec({"name": "random", "max_trials": 2}, {"epoch_iter.num_epochs": 1})
    assert main(["sweep", "run", str(spec), "--test"]) == 1
    err = capsys.readouterr().err
    assert "the trial did not complete (fail, sweep exit 0)" in err and "failing attempt 1 on purpose" in err
