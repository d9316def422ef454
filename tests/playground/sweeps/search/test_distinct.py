"""The distinct sampler: one agent asking from start to end gets exactly the plain Optuna sampler's points (a
seeded sweep stays reproducible); a second sampler on the same study, seeded alike, never repeats a point; a
small space is used up point by point, never repeated."""
from __future__ import annotations

import json

import optuna
import pytest

from playground.sweeps.search.distinct import sampler as distinct_sampler
from playground.sweeps.search.study import make_sampler

DISTS = {"lr": optuna.distributions.FloatDistribution(1e-3, 1.0, log=True),
         "wd": optuna.distributions.FloatDistribution(0.0, 0.003),
         "depth": optuna.distributions.IntDistribution(1, 4),
         "act": optuna.distributions.CategoricalDistribution(["relu", "tanh"]),
         "width": optuna.distributions.CategoricalDistribution([16])}


def _study(searcher: dict, distinct: bool, agent: str = "a", study=None):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = study or optuna.create_study(sampler=make_sampler(searcher))
    if distinct:
        study.sampler = distinct_sampler(study, lambda s: make_sampler({**searcher, "seed": s}),
                                         searcher["seed"], DISTS, agent)
    return study


def _run(study, n: int, dists=DISTS) -> list[str]:
    points = []
    for _ in range(n):
        trial = study.ask(fixed_distributions=dists)
        points.append(json.dumps(trial.params, sort_keys=True))
        study.tell(trial, trial.params.get("lr", 0.1) + trial.params.get("depth", 0))
    return points


@pytest.mark.parametrize("name", ["random", "tpe", "gp", "cmaes"])
def test_one_agent_from_start_to_end_gets_the_plain_samplers_points(name):
    searcher = {"name": name, "seed": 3}
    count = 12 if name != "gp" else 11    # past TPE's and GP's random start-up trials
    plain = _run(_study(searcher, distinct=False), count)
    assert len(set(plain)) == count       # no repeat to re-sample here: the sequences must be equal
    assert _run(_study(searcher, distinct=True), count) == plain


@pytest.mark.parametrize("name", ["random", "tpe"])
def test_a_second_sampler_seeded_alike_on_the_same_study_never_repeats_a_point(name):
    searcher = {"name": name, "seed": 0}
    storage = optuna.storages.InMemoryStorage()
    first = _study(searcher, distinct=True, agent="a",
                   study=optuna.create_study(storage=storage, sampler=make_sampler(searcher)))
    points = _run(first, 3)
    second = _study(searcher, distinct=True, agent="b", study=optuna.load_study(
        study_name=first.study_name, storage=storage, sampler=make_sampler(searcher)))
    points += _run(second, 3)
    assert len(set(points)) == 6, points


def test_a_small_space_is_used_up_without_a_repeat_and_then_reported_exhausted():
    small = {"act": DISTS["act"], "depth": optuna.distributions.IntDistribution(1, 3)}
    searcher = {"name": "tpe", "seed": 0}
    study = optuna.create_study(sampler=make_sampler(searcher))
    study.sampler = distinct_sampler(study, lambda s: make_sampler({**searcher, "seed": s}), 0, small, "a")
    assert not study.sampler.exhausted(study.get_trials())
    points = _run(study, 6, small)
    assert len(set(points)) == 6
    assert study.sampler.exhausted(study.get_trials())


def test_with_replacement_a_small_space_repeats_points_never_exhausts_and_a_later_sampler_does_not_replay():
    """distinct=False (a Determined experiment's random or ASHA search): the searcher's own draws, a point
    possibly twice, as Determined samples; a sampler joining the study later is still reseeded."""
    small = {"act": DISTS["act"], "depth": optuna.distributions.IntDistribution(1, 3)}
    searcher = {"name": "random", "seed": 0}
    storage = optuna.storages.InMemoryStorage()

    def joined(agent: str):
        study = optuna.load_study(study_name="s", storage=storage, sampler=make_sampler(searcher))
        study.sampler = distinct_sampler(study, lambda s: make_sampler({**searcher, "seed": s}), 0, small, agent,
                                         distinct=False)
        return study
    optuna.create_study(study_name="s", storage=storage)
    first = joined("a")
    points = _run(first, 10, small)
    assert points == _run(_study(searcher, distinct=False), 10, small)   # the plain sampler's draws
    assert len(set(points)) < 10 and not first.sampler.exhausted(first.get_trials())
    again = _run(joined("a"), 10, small)
    assert again != points                        # not the first sampler's sequence replayed


class Stuck(optuna.samplers.RandomSampler):
    """A searcher that proposes one point for ever (each parameter's low end)."""

    def sample_independent(self, study, trial, name, dist):
        return dist.low


def test_a_searcher_that_keeps_repeating_is_overruled_by_untried_points_inside_the_ranges():
    dists = {"lr": DISTS["lr"], "wd": DISTS["wd"], "depth": DISTS["depth"]}
    study = optuna.create_study(sampler=Stuck())
    study.sampler = distinct_sampler(study, lambda s: Stuck(), 0, dists, "a")
    points = [tuple(t.params.values()) for t in (study.ask(fixed_distributions=dists) for _ in range(5))]
    assert points[0] == (1e-3, 0.0, 1) and len(set(points)) == 5
    assert all(1e-3 <= lr <= 1.0 and 0.0 <= wd <= 0.003 and depth in (1, 2, 3, 4) for lr, wd, depth in points)
