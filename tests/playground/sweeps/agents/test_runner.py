"""`sweep run` end to end with the contract trial program: exact budgets, distinct grid points, resume,
pruning through SIGTERM, restart files, and refusal of a changed spec."""
from __future__ import annotations

import csv
import json
import os
import re
import threading
import time

import pytest

from playground.cli import main
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.operations.reports import open_sweep
from tests.conftest import HANG

GRID_SPACE = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0, "count": 3},
              "model_param.weight_decay": {"type": "double", "minval": 0.0, "maxval": 0.003, "count": 4},
              "epoch_iter.num_epochs": 2}
SAMPLED_SPACE = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0},
                 "model_param.weight_decay": {"type": "double", "minval": 0.0, "maxval": 0.003},
                 "epoch_iter.num_epochs": 2}


def _trials(sweep_dir):
    folder, spec, study = open_sweep(str(sweep_dir))
    return study.get_trials()


def test_grid_3x4_with_3_workers_runs_exactly_12_distinct_trials(write_spec, tmp_path):
    spec = write_spec({"name": "grid"}, GRID_SPACE)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--workers", "3", "--sweep-dir", str(sweep), "--quiet"]) == 0
    trials = _trials(sweep)
    points = {json.dumps(t.user_attrs["sets"], sort_keys=True) for t in trials}
    assert len(trials) == 12 and len(points) == 12
    assert {t.state.name for t in trials} == {"COMPLETE"}
    assert sorted(os.listdir(sweep / "trials")) == [f"t{i:04d}" for i in range(12)]
    slots = {json.loads(line)["slot"] for d in (sweep / "trials").iterdir() for line in open(d / "attempts.jsonl")}
    assert slots == {0, 1, 2}
    with open(sweep / "summary.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 12 and rows[0]["test_loss"] == min(r["test_loss"] for r in rows)
    best = json.loads((sweep / "best.json").read_text())["opts"]
    assert best["model_param"]["weight_decay"] == 0.0


def test_tpe_with_4_workers_ends_with_exactly_20_terminal_trials(write_spec, tmp_path):
    spec = write_spec({"name": "tpe", "max_trials": 20, "seed": 3}, SAMPLED_SPACE)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--workers", "4", "--sweep-dir", str(sweep), "--quiet"]) == 0
    trials = _trials(sweep)
    assert len(trials) == 20
    assert all(t.state.is_finished() for t in trials)
    assert len(os.listdir(sweep / "trials")) == 20


def test_rerun_of_a_finished_sweep_has_nothing_to_do_and_a_changed_spec_is_refused(write_spec, tmp_path, capsys):
    spec = write_spec({"name": "random", "max_trials": 3}, SAMPLED_SPACE)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    journal = (sweep / "study.journal").read_bytes()
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep)]) == 0
    assert "nothing to do" in capsys.readouterr().err
    assert (sweep / "study.journal").read_bytes() == journal
    # a bigger budget is allowed and runs exactly the extra trials
    bigger = write_spec({"name": "random", "max_trials": 5}, SAMPLED_SPACE)
    assert main(["sweep", "run", str(bigger), "--sweep-dir", str(sweep), "--quiet"]) == 0
    assert len(_trials(sweep)) == 5
    changed = write_spec({"name": "random", "max_trials": 5}, {**SAMPLED_SPACE, "epoch_iter.num_epochs": 3})
    assert main(["sweep", "run", str(changed), "--sweep-dir", str(sweep)]) == 2
    err = capsys.readouterr().err
    assert "different sweep" in err and "epoch_iter.num_epochs" in err


def test_adaptive_asha_stops_trials_through_sigterm_and_keeps_their_checkpoints(write_spec, base_file, tmp_path):
    opts = json.loads(base_file.read_text())
    opts["opts"]["model_param"]["contract_epoch_seconds"] = 0.3  # time for the agent to stop a trial mid-run
    base_file.write_text(json.dumps(opts))
    searcher = {"name": "adaptive_asha", "max_trials": 4, "max_time": 4, "divisor": 2, "max_rungs": 3,
                "mode": "aggressive", "max_concurrent_trials": 4, "seed": 0}
    spec = write_spec(searcher, {**SAMPLED_SPACE, "epoch_iter.num_epochs": 4})
    sweep = tmp_path / "sweep"
    # one trial at a time: which trials are pruned follows their order, not the machine's load (4 at once may all
    # reach each rung in improving order on a loaded machine: none pruned; seen in test_rebuild.py)
    assert main(["sweep", "run", str(spec), "--workers", "1", "--sweep-dir", str(sweep), "--quiet"]) == 0
    trials = _trials(sweep)
    states = sorted(t.state.name for t in trials)
    assert len(trials) == 4 and "PRUNED" in states and "COMPLETE" in states
    for trial in trials:
        folder = sweep / "trials" / trial.user_attrs.get("trial_id", f"t{trial.number:04d}")
        attempts = [json.loads(line) for line in open(folder / "attempts.jsonl")]
        if trial.state.name == "PRUNED":
            assert attempts[-1]["exit_code"] == 75
            assert json.loads((folder / "checkpoint.json").read_text())["epochs_done"] < 4
            assert (folder / "result.txt").exists()
    asha = json.loads((sweep / "searcher.json").read_text())
    assert len(asha["trial_bracket"]) == 4


def test_restart_file_rows_become_completed_trials_outside_the_budget(write_spec, tmp_path):
    prior = tmp_path / "prior.csv"
    prior.write_text("y,model_param.base_learning_rate,model_param.weight_decay\n0.7,0.1,0.0\n3.0,0.001,0.001\n")
    spec = write_spec({"name": "tpe", "max_trials": 2}, SAMPLED_SPACE)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--restart-file", str(prior), "--sweep-dir", str(sweep),
                 "--quiet"]) == 0
    trials = _trials(sweep)
    imported = [t for t in trials if t.user_attrs.get("imported")]
    assert [t.value for t in imported] == [0.7, 3.0]
    assert len(trials) == 4 and all(t.state.name == "COMPLETE" for t in trials)


def test_unknown_space_key_exits_2_with_the_closest_name_before_anything_runs(write_spec, tmp_path, capsys):
    spec = write_spec({"name": "random", "max_trials": 2},
                      {"model_param.base_learning_rat": {"type": "double", "minval": 0.01, "maxval": 0.1}})
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep)]) == 2
    err = capsys.readouterr().err
    assert "model_param.base_learning_rat" in err and "Did you mean 'model_param.base_learning_rate'?" in err
    assert not sweep.exists()


def test_sweep_status_summary_preview_and_plots_read_the_folder(write_spec, tmp_path, capsys):
    spec = write_spec({"name": "grid"}, {**GRID_SPACE, "model_param.weight_decay": {
        "type": "double", "minval": 0.0, "maxval": 0.001, "count": 2}})
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--workers", "2", "--sweep-dir", str(sweep), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["sweep", "status", str(sweep)]) == 0
    assert "6 complete" in capsys.readouterr().out
    (sweep / "summary.md").unlink()
    assert main(["sweep", "summary", str(sweep)]) == 0
    assert (sweep / "summary.md").read_text().count("| t00") == 6
    assert main(["sweep", "plots", str(sweep)]) == 0
    drawn = sorted(os.listdir(sweep / "plots"))
    assert drawn == ["history.png", "importances.png", "learning_curves.png", "parallel_coordinates.png",
                     "timeline.png"]
    assert main(["sweep", "preview", str(spec)]) == 0
    assert "6 trials" in capsys.readouterr().out
    assert SweepFolder(str(sweep)).exists()


@pytest.mark.parametrize("searcher", [
    {"name": "single"},
    {"name": "random", "max_trials": 3},
    {"name": "gp", "max_trials": 3},
    {"name": "hyperband", "max_trials": 3, "sampler": "random"},
])
def test_each_searcher_runs_exactly_its_budget(write_spec, tmp_path, searcher):
    spec = write_spec(searcher, SAMPLED_SPACE)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--workers", "2", "--sweep-dir", str(sweep), "--quiet"]) == 0
    trials = _trials(sweep)
    assert len(trials) == searcher.get("max_trials", 1)
    assert all(t.state.is_finished() for t in trials)


def test_a_several_key_objective_is_multi_objective(write_spec, tmp_path):
    spec = write_spec({"name": "random", "max_trials": 2}, SAMPLED_SPACE,
                      objective=[{"metric": "test_loss", "mode": "min"},
                                 {"metric": "test_accuracy_top1", "mode": "max"}])
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    trials = _trials(sweep)
    assert all(len(t.values) == 2 and t.values[1] == pytest.approx(1 - t.values[0] / 4) for t in trials)


def _progress(err: str) -> list[tuple[int, int]]:
    """The (finished, budget) counts of the `[sweep] <trial> <state> ... N/M` progress lines."""
    return [(int(n), int(m)) for n, m in re.findall(r"^\[sweep\] \S+ \w+.* (\d+)/(\d+)$", err, re.M)]


def test_an_agent_finishing_a_trial_of_a_raised_budget_counts_against_that_budget_never_past_it(
        write_spec, base_file, tmp_path, capsys):
    opts = json.loads(base_file.read_text())
    # epochs long enough that the third trial is still training when the pause, asked after its first epoch,
    # reaches it (with 0.1 s epochs a loaded machine let it finish first: nothing left for the agent to adopt)
    opts["opts"]["model_param"]["contract_epoch_seconds"] = 0.4
    base_file.write_text(json.dumps(opts))
    space = {**SAMPLED_SPACE, "epoch_iter.num_epochs": 3}
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(write_spec({"name": "random", "max_trials": 2}, space)),
                 "--sweep-dir", str(sweep), "--quiet"]) == 0
    raised = write_spec({"name": "random", "max_trials": 3}, space, name="raised.json")

    def pause_once_the_third_trains() -> None:   # the third trial is left paused (RUNNING) for the agent to adopt
        deadline = time.monotonic() + HANG
        while not (sweep / "trials" / "t0002" / "metrics.jsonl").is_file() and time.monotonic() < deadline:
            time.sleep(0.05)
        main(["sweep", "pause", str(sweep)])

    pauser = threading.Thread(target=pause_once_the_third_trains, daemon=True)
    pauser.start()
    assert main(["sweep", "run", str(raised), "--sweep-dir", str(sweep), "--quiet"]) == 75
    pauser.join()
    assert main(["sweep", "resume", str(sweep)]) == 0
    capsys.readouterr()
    # `sweep agent` reads the sweep from sweep.json: the budget the sweep was resumed with, 3, not its first, 2
    assert main(["sweep", "agent", str(sweep)]) == 0
    assert _progress(capsys.readouterr().err) == [(3, 3)]


def test_the_progress_count_is_the_budgets_finished_trials_and_never_exceeds_the_budget():
    import optuna
    from optuna.trial import TrialState, create_trial
    from playground.sweeps.search.study import finished_in_budget

    def trial(state: TrialState, **attrs) -> optuna.trial.FrozenTrial:
        return create_trial(state=state, value=1.0 if state == TrialState.COMPLETE else None, user_attrs=attrs)

    mine = [trial(TrialState.COMPLETE), trial(TrialState.PRUNED), trial(TrialState.FAIL), trial(TrialState.RUNNING)]
    others = [trial(TrialState.COMPLETE, extra=True), trial(TrialState.COMPLETE, imported=True)]
    assert finished_in_budget(mine + others, 4) == 3
    # a budget lowered below the trials already started (they still run to their end): spent, never "4/2"
    assert finished_in_budget(mine + [trial(TrialState.COMPLETE)], 2) == 2


@pytest.mark.parametrize("first, changed", [(3, 2), (1, 2)])
def test_an_agent_at_work_takes_up_a_budget_changed_meanwhile(write_spec, base_file, tmp_path, capsys, first,
                                                              changed):
    """`sweep run` with another max_trials on a folder that agents work on records it in sweep.json: a running
    agent stops at a lowered budget instead of running past it, and goes on to a raised one instead of leaving."""
    hold = tmp_path / "go"        # the first trial waits for this file: the budget changes while it runs
    opts = json.loads(base_file.read_text())
    opts["opts"]["model_param"]["contract_hold_file"] = str(hold)
    base_file.write_text(json.dumps(opts))
    sweep = tmp_path / "sweep"

    def change_the_budget_while_the_first_trial_runs() -> None:
        deadline = time.monotonic() + HANG
        while not (sweep / "trials" / "t0000" / "claim-1").is_file() and time.monotonic() < deadline:
            time.sleep(0.05)
        folder = SweepFolder(str(sweep))
        raw = folder.read_spec()["spec"]
        raw["searcher"]["max_trials"] = changed
        folder.record_budget(raw)      # what `sweep run` with the changed spec writes before it works itself
        hold.write_text("go")

    changer = threading.Thread(target=change_the_budget_while_the_first_trial_runs, daemon=True)
    changer.start()
    spec = write_spec({"name": "random", "max_trials": first}, SAMPLED_SPACE)
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep)]) == 0
    changer.join()
    assert [t.state.name for t in _trials(sweep)] == ["COMPLETE"] * changed
    assert _progress(capsys.readouterr().err)[-1] == (changed, changed)


def test_cmaes_runs_its_budget_of_distinct_points_and_reports_the_best(write_spec, tmp_path):
    spec = write_spec({"name": "cmaes", "max_trials": 12, "seed": 4}, SAMPLED_SPACE)
    sweep = tmp_path / "sweep"   # one worker: each trial is asked after the last is told, so the points are fixed
    assert main(["sweep", "run", str(spec), "--workers", "1", "--sweep-dir", str(sweep), "--quiet"]) == 0
    trials = _trials(sweep)
    points = {json.dumps(t.params, sort_keys=True) for t in trials}
    assert len(trials) == 12 and len(points) == 12
    assert {t.state.name for t in trials} == {"COMPLETE"}
    best = min(trials, key=lambda t: t.value)
    chosen = json.loads((sweep / "best.json").read_text())["opts"]["model_param"]
    assert (chosen["base_learning_rate"], chosen["weight_decay"]) == (
        best.params["model_param.base_learning_rate"], best.params["model_param.weight_decay"])
    # the contract trial's loss floor is (log10(lr) + 1)^2 + 100 * decay: the search improves on its first guess
    assert best.value < trials[0].value
