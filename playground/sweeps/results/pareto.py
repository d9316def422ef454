"""The Pareto front of a multi-objective sweep: the finished trials that no other trial dominates over all its
objectives, each in its own direction (min or max). A trial dominates another when it is no worse in every
objective and better in at least one; trials with equal values are both on the front.
"""
from __future__ import annotations

from typing import Sequence

from playground.sweeps.inputs.spec import Objective

FRONT_STATES = ("complete", "imported")   # trials with final values: pruned ones stopped early, failed have none


def dominates(a: Sequence[float], b: Sequence[float], objectives: Sequence[Objective]) -> bool:
    """Whether values `a` dominate values `b` (objectives' modes)."""
    signs = [1.0 if o.mode == "min" else -1.0 for o in objectives]
    at_least_as_good = all(s * x <= s * y for s, x, y in zip(signs, a, b))
    return at_least_as_good and any(s * x < s * y for s, x, y in zip(signs, a, b))


def front(points: dict[str, Sequence[float]], objectives: Sequence[Objective]) -> list[str]:
    """The keys of `points` (trial id -> its values, one per objective) that no other point dominates, in the
    order given."""
    return [key for key, values in points.items()
            if not any(dominates(other, values, objectives) for k, other in points.items() if k != key)]
