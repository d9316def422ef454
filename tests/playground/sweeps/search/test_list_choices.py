"""List-valued categorical choices: the study stores them in the types Optuna's distributions accept (None, bool,
int, float, str; optuna-dashboard fails on others), while every trial still receives the list itself."""
from __future__ import annotations

import json

import pytest

from playground.cli import main
from playground.sweeps.operations.reports import open_sweep

VALS = [[16], [8, 8], [4, 4, 4]]
PRIMITIVE = (type(None), bool, int, float, str)


@pytest.mark.parametrize("searcher", [{"name": "random", "max_trials": 3, "seed": 1}, {"name": "grid"}])
def test_list_choices_are_stored_as_optuna_accepts_them_and_reach_trials_as_lists(write_spec, tmp_path, searcher):
    space = {"model_param.mlp_hidden": {"type": "categorical", "vals": VALS}, "epoch_iter.num_epochs": 1}
    sweep = tmp_path / "sweep"
    with _no_optuna_choice_warning():
        assert main(["sweep", "run", str(write_spec(searcher, space)), "--sweep-dir", str(sweep), "--quiet"]) == 0
    _, _, study = open_sweep(str(sweep))
    trials = study.get_trials()
    assert len(trials) == 3
    for trial in trials:
        choices = trial.distributions["model_param.mlp_hidden"].choices
        assert all(isinstance(c, PRIMITIVE) for c in choices), choices
        assert json.loads(trial.params["model_param.mlp_hidden"]) in VALS
        trial_id = trial.user_attrs.get("trial_id", f"t{trial.number:04d}")
        opts = json.loads((sweep / "trials" / trial_id / "opts.json").read_text())["opts"]
        assert opts["model_param"]["mlp_hidden"] == json.loads(trial.params["model_param.mlp_hidden"])
        assert trial.user_attrs["sets"]["model_param.mlp_hidden"] in VALS
    if searcher["name"] == "grid":
        assert sorted(json.loads(t.params["model_param.mlp_hidden"]) for t in trials) == sorted(VALS)


class _no_optuna_choice_warning:
    """Fails when Optuna warns that a categorical choice is not persistent (it warns for lists, in any thread)."""

    def __enter__(self):
        import warnings
        self._catcher = warnings.catch_warnings(record=True)
        self.caught = self._catcher.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._catcher.__exit__(*exc)
        bad = [str(w.message) for w in self.caught if "Choices for a categorical distribution" in str(w.message)]
        assert not bad, bad
