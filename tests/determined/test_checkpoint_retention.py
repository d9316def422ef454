"""checkpoint_storage's save_trial_latest / save_trial_best / save_experiment_best with Determined's defaults
(1, 1, 0): a completed trial keeps its newest checkpoint and its best by the searcher metric, and no other;
more of either when asked; the newest is kept even with save_trial_latest 0 (a resume needs it). Real runs of
`playground run EXPERIMENT.yaml`: a Trial-API trial (the conformance one-weight trial, whose validation loss
falls, ranked with smaller_is_better false so that its best is its first) and a Core-API script."""
from __future__ import annotations

import shutil
import textwrap

import pytest

from tests.conftest import run_cli
from tests.determined.conformance.trial_runs import TRIALS
from playground.determined import core_files

TRIAL_YAML = """\
    name: retention
    entrypoint: onevar:OneVarTrial
    hyperparameters: {{global_batch_size: 4}}
    searcher: {{name: single, metric: val_loss, smaller_is_better: false, max_length: {{batches: 12}}}}
    min_validation_period: {{batches: 2}}
    min_checkpoint_period: {{batches: 2}}
    {storage}
    """


def trial_run(tmp_path, storage: str = "") -> list[str]:
    context = tmp_path / "context"
    shutil.copytree(TRIALS, context)
    (context / "exp.yaml").write_text(textwrap.dedent(TRIAL_YAML.format(storage=storage)))
    done = run_cli("run", str(context / "exp.yaml"), "--run-dir", str(tmp_path / "run"), script="playground")
    assert done.returncode == 0, done.stderr[-3000:]
    return sorted(p.name for p in (tmp_path / "run" / "checkpoints").glob("*.pt"))


@pytest.mark.parametrize("storage, expected", [
    ("", [2, 12]),                                                                  # Determined's defaults
    ("checkpoint_storage: {save_trial_best: 2}", [2, 4, 12]),
    ("checkpoint_storage: {save_trial_latest: 3, save_trial_best: 0}", [8, 10, 12]),
    ("checkpoint_storage: {save_trial_latest: 0, save_trial_best: 0}", [12]),       # a resume needs the newest
    ("checkpoint_storage: {save_trial_best: 0, save_experiment_best: 2}", [2, 4, 12]),
])
def test_a_completed_trial_keeps_its_newest_and_its_best_checkpoints(tmp_path, storage, expected):
    assert trial_run(tmp_path, storage) == sorted(f"model_checkpoint_batch{n}.pt" for n in expected)


CORE_SCRIPT = """\
import determined as det

with det.core.init() as core:
    for step in range(1, 7):
        loss = [5.0, 1.0, 4.0, 3.0, 2.0, 6.0][step - 1]
        core.train.report_validation_metrics(steps_completed=step, metrics={"loss": loss})
        with core.checkpoint.store_path({"steps_completed": step}) as (path, storage_id):
            (path / "weights").write_text(str(step))
"""


def test_a_core_api_trial_keeps_its_newest_and_its_best_checkpoints(tmp_path):
    (tmp_path / "script.py").write_text(CORE_SCRIPT)
    (tmp_path / "exp.yaml").write_text(textwrap.dedent("""\
        name: retention
        entrypoint: python3 script.py
        searcher: {name: single, metric: loss, smaller_is_better: true}
        checkpoint_storage: {save_trial_latest: 2, save_trial_best: 1}
        """))
    done = run_cli("run", str(tmp_path / "exp.yaml"), "--run-dir", str(tmp_path / "run"), script="playground")
    assert done.returncode == 0, done.stderr[-3000:]
    kept = core_files.checkpoints(str(tmp_path / "run"))           # the entries whose folder is still there
    assert [e["steps_completed"] for e in kept] == [2, 5, 6]       # the best (2), the newest two (5, 6)
    assert sorted(p.name for p in (tmp_path / "run" / "checkpoints").iterdir()) == sorted(e["storage_id"] for e in kept)
