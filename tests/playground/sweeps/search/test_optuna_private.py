"""The uses of Optuna's private API (search/_optuna_private.py) still do what the sweep layer needs with the
installed Optuna: an upgrade that moves one fails here, by name. (The PostgreSQL query and the gRPC server and
client run in test_storages.py, test_storage_matrix.py and operations/test_serve.py.)"""
from __future__ import annotations

import optuna

from playground.sweeps.search._optuna_private import (distribution_contains, storage_of, storage_trial_id,
                                                      study_id_of, suggest_params)


def _study(tmp_path) -> optuna.Study:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(tmp_path / "j.log")))
    return optuna.create_study(storage=storage, sampler=optuna.samplers.RandomSampler(seed=0))


def test_a_trial_created_elsewhere_is_reached_through_the_storage_and_its_id(tmp_path):
    study = _study(tmp_path)
    asked = study.ask()
    frozen = study.get_trials(deepcopy=False)[0]
    assert storage_trial_id(frozen) == asked._trial_id
    storage_of(study).set_trial_user_attr(storage_trial_id(frozen), "sets", {"a": 1})
    assert study.get_trials()[0].user_attrs == {"sets": {"a": 1}}
    assert storage_of(study).get_study_id_from_name(study.study_name) == study_id_of(study)


def test_the_params_a_killed_asker_did_not_store_are_sampled_or_taken_from_the_enqueued_point(tmp_path):
    study = _study(tmp_path)
    dists = {"lr": optuna.distributions.FloatDistribution(1e-3, 1.0, log=True),
             "width": optuna.distributions.CategoricalDistribution([8, 16])}
    study.ask()   # the asker died here: a RUNNING trial without params
    sampled = suggest_params(study, storage_trial_id(study.get_trials()[0]), dists)
    assert 1e-3 <= sampled["lr"] <= 1.0 and sampled["width"] in (8, 16)
    assert study.get_trials()[0].params == sampled
    study.enqueue_trial({"lr": 0.5, "width": 16})
    study.ask()
    assert suggest_params(study, storage_trial_id(study.get_trials()[1]), dists) == {"lr": 0.5, "width": 16}


def test_a_value_outside_a_distribution_is_told_apart():
    dist = optuna.distributions.FloatDistribution(0.1, 1.0)
    assert distribution_contains(dist, 0.5) and not distribution_contains(dist, 2.0)
    assert distribution_contains(optuna.distributions.CategoricalDistribution([1, 2]), 2)
