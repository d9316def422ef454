"""`sweep summary --rebuild` (rebuild.py): the study rebuilt from the run folders alone gives back the same
reports byte for byte, whether the journal was deleted or is still there (then kept, renamed)."""
from __future__ import annotations

import json

import pytest

from playground.cli import main
from playground.sweeps.operations.reports import open_sweep

SAMPLED = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0},
           "model_param.weight_decay": {"type": "double", "minval": 0.0, "maxval": 0.003},
           "epoch_iter.num_epochs": 4}
GRID = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0, "count": 3},
        "model_param.weight_decay": {"type": "double", "minval": 0.0, "maxval": 0.003, "count": 1},
        "epoch_iter.num_epochs": 2}
ASHA = {"name": "adaptive_asha", "max_trials": 4, "max_time": 4, "divisor": 2, "max_rungs": 3,
        "mode": "aggressive", "max_concurrent_trials": 4, "seed": 0}
REPORTS = ("summary.csv", "summary.md", "output.csv", "best.json")


@pytest.mark.parametrize("kind", ["asha_with_priors_journal_deleted", "grid_journal_kept"])
def test_rebuild_from_the_run_folders_reproduces_summary_csv_byte_for_byte(write_spec, base_file, tmp_path,
                                                                             capsys, kind):
    sweep = tmp_path / "sweep"
    if kind.startswith("asha"):
        opts = json.loads(base_file.read_text())
        opts["opts"]["model_param"]["contract_epoch_seconds"] = 0.25   # time for ASHA to stop trials mid-run
        base_file.write_text(json.dumps(opts))
        prior = tmp_path / "prior.csv"
        prior.write_text("y,model_param.base_learning_rate,model_param.weight_decay\n0.7,0.1,0.0\n3.0,0.001,0.001\n")
        spec = write_spec(ASHA, SAMPLED)
        # one trial at a time: the order the trials reach each rung, and so which are pruned, is their order, not
        # the machine's load (with 4 at once, a loaded machine once let every trial report in improving order)
        extra = ["--restart-file", str(prior), "--workers", "1"]
    else:
        spec = write_spec({"name": "grid"}, GRID)
        extra = ["--workers", "3"]
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet", *extra]) == 0
    before = {name: (sweep / name).read_bytes() for name in REPORTS}
    journal = (sweep / "study.journal").read_bytes()
    _, _, study = open_sweep(str(sweep))
    states = [t.state.name for t in study.get_trials()]
    if kind.startswith("asha"):
        assert "PRUNED" in states and len(states) == 6    # 2 priors + 4: the pruned values must come back too
        (sweep / "study.journal").unlink()
    for name in REPORTS:
        (sweep / name).unlink()

    capsys.readouterr()
    assert main(["sweep", "summary", str(sweep), "--rebuild"]) == 0
    assert "rebuilt" in capsys.readouterr().out
    for name in REPORTS:
        assert (sweep / name).read_bytes() == before[name], name
    _, _, rebuilt = open_sweep(str(sweep))
    assert [t.state.name for t in rebuilt.get_trials()] == states
    replaced = sorted(sweep.glob("study.journal.replaced-*"))
    if kind.startswith("grid"):
        assert len(replaced) == 1 and replaced[0].read_bytes() == journal
    else:
        assert replaced == []
    # the rebuilt study is the sweep's study: re-running finds nothing to do
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), *extra]) == 0
    assert "nothing to do" in capsys.readouterr().err
