"""Distinct proposals: the sampler every agent asks through, so that no two trials of a sweep get the same point,
whatever ran before in other agents, other processes, other hosts or an earlier run of this one.

Two guards. A fresh sampler never replays: the first proposal of this process, when the study already holds
asked trials (another agent's, or this sweep's before a kill, a pause or a restart), comes from the searcher's
sampler reseeded from (spec seed, this agent's name, the study's trial count); an agent that asks first on an
empty study keeps the spec's seed, so one agent run from start to end proposes exactly what the plain Optuna
sampler would. And every proposal is checked against every trial's point in the study: a repeat is sampled
again by the searcher (RESAMPLES times), then drawn at random among the points not yet tried.

With `distinct=False` (a Determined experiment's random or adaptive ASHA search: study.with_replacement) only the
first guard holds: each trial's point is the searcher's draw, a point of a finite space possibly twice, as
Determined's searchers sample every trial's hyperparameters independently.

Asks hold control/ask.lock (agents/coordinator.py), so the check and the storing of the point are one step
across processes. Enqueued trials (grid points, upf lines, `sweep continue`) keep their fixed point. Optuna is
imported only when a sampler is built (sampler() below); the point bookkeeping is plain Python.
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import random
from typing import Any, Callable

from playground.sweeps.errors import SweepError
from playground.sweeps.search._optuna_private import distribution_contains

RESAMPLES = 4          # proposals asked of the searcher's sampler before drawing among the untried points
ENUMERATE_UP_TO = 200_000   # a finite space this small is listed to draw among its untried points
RANDOM_DRAWS = 1_000   # draws from a larger space before giving up (a repeat of a real-valued point is ~never)


def point_key(params: dict[str, Any], names: list[str]) -> str:
    """One comparable string per point of the space (the sampled names, in order)."""
    return json.dumps([params.get(name) for name in names], default=repr)


def derived_seed(seed: int, agent: str, trials: int) -> int:
    """A seed of its own for a sampler that starts on a study others already asked in."""
    digest = hashlib.sha256(f"{seed}/{agent}/{trials}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


class Points:
    """The points the study's trials hold, cached by trial number once complete (a point never changes)."""

    def __init__(self, dists: dict[str, Any]) -> None:
        self.dists, self.names = dists, list(dists)
        self._known: set[int] = set()
        self._taken: set[str] = set()

    def taken(self, trials: list) -> set[str]:
        """The points of `trials` that hold every parameter (a trial being asked holds none yet)."""
        for trial in trials:
            if trial.number not in self._known and all(name in trial.params for name in self.names):
                self._known.add(trial.number)
                self._taken.add(point_key(trial.params, self.names))
        return self._taken

    def size(self) -> int | None:
        """How many points the distributions hold; None when a real range makes it endless (or huge)."""
        values = [_values(d) for d in self.dists.values()]
        return None if any(v is None for v in values) else math.prod(len(v) for v in values)

    def untried(self, taken: set[str], rng: random.Random, fixed: dict[str, Any]) -> dict[str, Any] | None:
        """A point not in `taken` that keeps `fixed` (params a killed asker already stored), or None."""
        values = [[fixed[n]] if n in fixed else _values(self.dists[n]) for n in self.names]
        if all(v is not None for v in values) and math.prod(len(v) for v in values) <= ENUMERATE_UP_TO:
            free = [dict(zip(self.names, combo)) for combo in itertools.product(*values)]
            free = [p for p in free if point_key(p, self.names) not in taken]
            return rng.choice(free) if free else None
        for _ in range(RANDOM_DRAWS):
            point = {n: fixed[n] if n in fixed else _draw(self.dists[n], rng) for n in self.names}
            if point_key(point, self.names) not in taken:
                return point
        return None


def _values(dist: Any) -> list[Any] | None:
    """Every value of a categorical or integer distribution; None for a real range."""
    if hasattr(dist, "choices"):
        return list(dist.choices)
    if isinstance(dist.low, int) and isinstance(dist.high, int) and not getattr(dist, "log", False):
        return list(range(dist.low, dist.high + 1, dist.step))
    return None


def _draw(dist: Any, rng: random.Random) -> Any:
    if hasattr(dist, "choices"):
        return rng.choice(list(dist.choices))
    if isinstance(dist.low, int) and isinstance(dist.high, int):
        return rng.randrange(dist.low, dist.high + 1, dist.step or 1)
    if dist.log:
        value = math.exp(rng.uniform(math.log(dist.low), math.log(dist.high)))
    else:
        value = rng.uniform(dist.low, dist.high)
    return min(max(value, dist.low), dist.high)    # exp(log(x)) may land a rounding error outside


def sampler(study: Any, make: Callable[[int], Any], seed: int, dists: dict[str, Any], agent: str,
            distinct: bool = True) -> Any:
    """The sampler to set as `study.sampler`: `make(seed)` builds the searcher's own (the study's current one is
    used until a reseed); `dists` are what every ask samples, `agent` this agent's name; `distinct`: no point
    twice (False: draws with replacement, never a replayed sequence)."""
    from optuna.samplers import BaseSampler
    from optuna.trial import TrialState

    class DistinctSampler(BaseSampler):
        """Samples the whole point in sample_relative (Optuna calls it once per trial, before any param is
        stored), in the order and with the calls Trial._suggest would make, then checks it."""

        def __init__(self) -> None:
            self.inner, self.points, self.fresh = study.sampler, Points(dists), True
            self.rng = random.Random(seed)

        def infer_relative_search_space(self, study_: Any, trial: Any) -> dict[str, Any]:
            return dict(dists)

        def sample_relative(self, study_: Any, trial: Any, search_space: dict[str, Any]) -> dict[str, Any]:
            if trial.system_attrs.get("fixed_params") is not None:
                return {}       # enqueued: its fixed point (Trial._suggest takes it first)
            trials = study.get_trials(deepcopy=False)
            if self.fresh:
                self._reseed(trials, trial)
            if not distinct:
                return self._propose(study_, trial)
            taken = self.points.taken(trials)
            for _ in range(RESAMPLES):
                point = self._propose(study_, trial)
                if point_key(point, self.points.names) not in taken:
                    return point
            point = self.points.untried(taken, self.rng, dict(trial.params))
            if point is None:
                raise SweepError(f"trial {trial.number}: every point of the space was tried already "
                                 f"({len(taken)} trials); the sweep is done")
            return point

        def _reseed(self, trials: list, trial: Any) -> None:
            """A fresh sampler never replays: it keeps the spec's seed only when no trial was asked before."""
            self.fresh = False
            asked = [t for t in trials if t.number != trial.number and t.state != TrialState.WAITING
                     and not t.user_attrs.get("imported")]
            if asked:
                own = derived_seed(seed, agent, len(trials))
                self.inner, self.rng = make(own), random.Random(own)

        def _propose(self, study_: Any, trial: Any) -> dict[str, Any]:
            """What the plain sampler gives: the relative params, then each other param independently."""
            inner = self.inner
            relative = inner.sample_relative(study_, trial, inner.infer_relative_search_space(study_, trial))
            latest = copy.copy(trial)   # as Trial._suggest hands it: with the params chosen so far
            point = {}
            for name, dist in dists.items():
                if name in trial.params:
                    value = trial.params[name]    # stored before its asker was killed
                elif dist.single():
                    value = dist.choices[0] if hasattr(dist, "choices") else dist.low
                elif name in relative and distribution_contains(dist, relative[name]):
                    value = relative[name]
                else:
                    value = inner.sample_independent(study_, latest, name, dist)
                point[name] = value
                latest.params = {**latest.params, name: value}
                latest.distributions = {**latest.distributions, name: dist}
            return point

        def sample_independent(self, study_: Any, trial: Any, name: str, dist: Any) -> Any:
            return self.inner.sample_independent(study_, trial, name, dist)

        def before_trial(self, study_: Any, trial: Any) -> None:
            self.inner.before_trial(study_, trial)

        def after_trial(self, study_: Any, trial: Any, state: Any, values: Any) -> None:
            self.inner.after_trial(study_, trial, state, values)

        def reseed_rng(self) -> None:
            self.inner.reseed_rng()

        def exhausted(self, trials: list) -> bool:
            """Every point of a finite space is held by a trial: nothing new can be asked."""
            size = self.points.size()
            return distinct and size is not None and len(self.points.taken(trials)) >= size

    return DistinctSampler()

