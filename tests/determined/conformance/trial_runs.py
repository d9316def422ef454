"""Running a conformance trial (trials/) through playground's trial harness as Determined's harness tests run
theirs: real rank processes (gloo on CPU), the test's configuration as the cluster info, and what the trial's
callbacks were given read back from their log (trials/observe.py)."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.determined.ranks import output, start, wait

TRIALS = Path(__file__).resolve().parent / "trials"
HPARAMS = {"global_batch_size": 4, "dataloader_type": "determined"}


def config(max_batches: int = 100, validation: int = sys.maxsize, checkpoint: int = sys.maxsize,
           scheduling_unit: int = 1, hparams: dict | None = None, **experiment) -> dict:
    """The cluster info of Determined's create_trial_and_trial_controller defaults: lengths in batches,
    scheduling_unit 1, no validation or checkpoint period unless given (sys.maxsize: never)."""
    hparams = dict(HPARAMS, **(hparams or {}))
    never = lambda n: 0 if n == sys.maxsize else n      # noqa: E731 (the configuration's 0: never)
    experiment_config = {"min_validation_period": {"batches": never(validation)},
                         "min_checkpoint_period": {"batches": never(checkpoint)},
                         "scheduling_unit": scheduling_unit, "hyperparameters": hparams,
                         "searcher": {"name": "single", "metric": "val_loss", "smaller_is_better": True,
                                      "max_length": {"batches": max_batches}}, **experiment}
    return dict(experiment_config=experiment_config, hparams=hparams, trial_id=1, experiment_id=1,
                max_length={"batches": max_batches})


@dataclass
class Observed:
    """What rank 0's callbacks were given, in order."""
    training: list[dict] = field(default_factory=list)      # avg_metrics of each training workload
    batches: list[dict] = field(default_factory=list)       # every batch's metrics
    validation: list[dict] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)
    counts: dict = field(default_factory=dict)


def run_trial(spec: str, run_dir: Path, info: dict, ranks: int = 1, expect: int = 0) -> Observed:
    """One session of `module:Class` to its end in `run_dir`; its exit codes must be `expect`. What this
    session's callbacks saw (a session of its own: an earlier one's calls are not in it)."""
    sessions = len(list(run_dir.parent.glob(f"{run_dir.name}.observed*.rank0")))
    log = run_dir.parent / f"{run_dir.name}.observed{sessions}"
    command = [sys.executable, "-m", "playground.determined.trial_main", spec]
    codes = wait(start(command, run_dir, info, ranks, env={"CONFORMANCE_LOG": str(log)}, cwd=TRIALS), run_dir)
    assert codes == [expect] * ranks, output(run_dir)
    return observed(log)


def observed(log: Path) -> Observed:
    found = Observed()
    path = Path(f"{log}.rank0")
    for line in path.read_text().splitlines() if path.exists() else []:
        entry = json.loads(line)
        stage = entry.pop("stage")
        if stage == "training":
            found.training.append(entry["avg"])
            found.batches.extend(entry["batches"])
        elif stage == "validation":
            found.validation.append(entry["metrics"])
        elif stage == "checkpoint":
            found.checkpoints.append(entry["uuid"])
        elif stage == "counts":
            found.counts = entry
    return found


def records(run_dir: Path, kind: str | None = None) -> list[dict]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if kind is None or r["kind"] == kind]
