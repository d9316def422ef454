"""No two trials of a sweep get the same parameters: across agent processes, across a pause and resume (a fresh
sampler in a new process), and in a space with fewer points than the budget, which the sweep says and stops
at. Real `sweep run` / `sweep agent` processes and the contract trial program."""
from __future__ import annotations

import json
import threading

import pytest

from playground.cli import main
from playground.sweeps.operations.reports import open_sweep
from tests.playground.sweeps.agents.test_agent import _contract, _finish, _initialise, _start, _wait_for

CONTINUOUS = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0},
              "model_param.weight_decay": {"type": "double", "minval": 0.0, "maxval": 0.003},
              "epoch_iter.num_epochs": 2}


def _points(sweep) -> list[str]:
    """Each trial's sampled parameters, as one comparable string, in trial order."""
    _, spec, study = open_sweep(str(sweep))
    sampled = [p.key for p in spec.space if p.sampled]
    return [json.dumps({k: t.params.get(k) for k in sampled}, sort_keys=True) for t in study.get_trials()]


def test_two_agents_on_one_seeded_sweep_never_run_the_same_point(write_spec, base_file, tmp_path):
    spec = write_spec({"name": "random", "max_trials": 6, "seed": 0}, CONTINUOUS,
                      agents={"heartbeat_seconds": 0.2, "grace_seconds": 30})
    sweep = tmp_path / "sweep"
    _initialise(spec, sweep)
    agents = [_start(["sweep", "agent", str(sweep), "--quiet"], f"host-{name}", tmp_path / f"{name}.log")
              for name in "ab"]
    assert [_finish(a, tmp_path / f"{n}.log") for a, n in zip(agents, "ab")] == [0, 0]
    points = _points(sweep)
    assert len(points) == 6 and len(set(points)) == 6, points


@pytest.mark.parametrize("searcher", [
    {"name": "random"}, {"name": "tpe"}, {"name": "gp"}, {"name": "cmaes"},
    {"name": "hyperband", "sampler": "tpe"},
    {"name": "adaptive_asha", "max_time": 2, "divisor": 2, "max_rungs": 2, "mode": "aggressive"}],
    ids=["random", "tpe", "gp", "cmaes", "hyperband", "adaptive_asha"])
def test_a_paused_and_resumed_sweep_never_proposes_a_point_again(write_spec, base_file, tmp_path, searcher):
    _contract(base_file, contract_epoch_seconds=0.05)
    spec = write_spec({**searcher, "max_trials": 6, "seed": 0}, CONTINUOUS)
    sweep = tmp_path / "sweep"

    def pause_after_three() -> None:
        _wait_for(lambda: len(list((sweep / "trials").glob("*/results.json"))) >= 3
                  if (sweep / "trials").is_dir() else False, "three finished trials")
        (sweep / "control" / "PAUSE").write_text("")

    pauser = threading.Thread(target=pause_after_three, daemon=True)
    pauser.start()
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 75
    pauser.join()
    (sweep / "control" / "PAUSE").unlink()
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0   # a fresh sampler
    points = _points(sweep)
    assert len(points) == 6 and len(set(points)) == 6, points


def test_a_space_smaller_than_the_budget_is_said_before_starting_and_each_point_runs_once(
        write_spec, tmp_path, capsys):
    space = {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1, 0.01]},
             "epoch_iter.num_epochs": {"type": "int", "minval": 1, "maxval": 3}}
    spec = write_spec({"name": "tpe", "max_trials": 10, "seed": 0}, space)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--workers", "2", "--sweep-dir", str(sweep)]) == 0
    err = capsys.readouterr().err
    note = next(line for line in err.splitlines() if "distinct points" in line)
    assert "6 distinct points" in note and "max_trials 10" in note, err
    assert err.index(note) < err.index("[sweep] ")            # said before the first trial ends
    points = _points(sweep)
    assert len(points) == 6 and len(set(points)) == 6, points
    assert any(line.endswith(" 6/6") for line in err.splitlines()), err


def test_preview_says_when_the_space_is_smaller_than_the_budget(write_spec, capsys):
    spec = write_spec({"name": "random", "max_trials": 5},
                      {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1, 0.01]}})
    assert main(["sweep", "preview", str(spec)]) == 0
    assert "note: the space has 2 distinct points, fewer than max_trials 5" in capsys.readouterr().out
