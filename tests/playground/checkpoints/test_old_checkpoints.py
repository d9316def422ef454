"""Checkpoints written by earlier versions keep resuming: the fixture in tests/data/fixtures/checkpoint_v1_epoch1
was written before the trainer owned its state (the old top-level `model`/`optimizer` layout)."""
from __future__ import annotations

import json
import shutil

from tests.conftest import DATA
from tests.playground.checkpoints.interrupted_runs import (RunFolder, assert_same_records,
                                                           assert_same_training_state)

FIXTURE = DATA / "fixtures" / "checkpoint_v1_epoch1"


def test_a_checkpoint_written_before_the_state_refactor_resumes_to_the_uninterrupted_weights(tmp_path):
    opts = json.loads((FIXTURE / "parameters.json").read_text())["opts"]
    resumed = RunFolder(tmp_path, "resumed", opts)
    shutil.copytree(FIXTURE / "run", resumed.dir, symlinks=True)
    code, output = resumed.run()
    assert code == 0, output
    assert "resumed from" in output and "model_checkpoint_epoch1.pt" in output, output

    whole = RunFolder(tmp_path, "whole", opts)
    code, output = whole.run()
    assert code == 0, output

    assert resumed.checkpoint()["global_iter"] == 8
    assert set(resumed.checkpoint()["models"]) == {"model"}       # continued in the current layout
    assert_same_training_state(resumed.checkpoint(), whole.checkpoint())
    assert_same_records(resumed, whole)
