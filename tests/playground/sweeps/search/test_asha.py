"""Adaptive ASHA against cases written from Determined's published semantics (bracket arithmetic of
adaptive_asha.go, the stopping rule of asha_stopping.go); pure Python, no processes."""
from __future__ import annotations

import random

import pytest

from playground.sweeps.search.asha import AdaptiveAsha, Bracket, capped_max_rungs, make_brackets, rung_units


def test_max_rungs_are_capped_by_max_time_and_max_trials():
    assert capped_max_rungs(5, max_time=16, max_trials=16, divisor=4) == 3
    assert capped_max_rungs(5, max_time=256, max_trials=256, divisor=4) == 5
    assert capped_max_rungs(5, max_time=1000, max_trials=20, divisor=4) == 3   # int(log4(20)) + 1


@pytest.mark.parametrize("mode, expected", [
    # weights 4^(n-1)/n, trials truncated, at least 1, remainder to the first bracket; concurrency 4 split evenly
    ("aggressive", [Bracket(3, 16, 4)]),
    ("standard", [Bracket(3, 12, 2), Bracket(2, 4, 2)]),
    ("conservative", [Bracket(3, 12, 2), Bracket(2, 3, 1), Bracket(1, 1, 1)]),
])
def test_brackets_split_trials_and_concurrency_as_determined_does(mode, expected):
    assert make_brackets(16, 16, divisor=4, max_rungs=5, mode=mode, max_concurrent_trials=4) == expected


def test_without_max_concurrency_each_bracket_runs_max_of_last_trials_and_divisor():
    brackets = make_brackets(16, 16, divisor=4, max_rungs=5, mode="standard", max_concurrent_trials=0)
    assert [b.max_concurrent_trials for b in brackets] == [4, 4]


def test_rungs_need_max_time_divided_by_powers_of_the_divisor():
    assert rung_units(3, 4, 16) == [1, 4, 16]
    assert rung_units(2, 4, 16) == [4, 16]
    assert rung_units(5, 4, 100) == [1, 1, 6, 25, 100]   # int(100/256) is 0, at least 1


def _aggressive(mode_max: bool = False) -> AdaptiveAsha:
    asha = AdaptiveAsha([Bracket(3, 16, 16)], divisor=4, max_time=16, smaller_is_better=not mode_max)
    for name in "abcdefgh":
        asha.add_trial(name, 0)
    return asha


@pytest.mark.parametrize("mode_max", [False, True])
def test_a_trial_continues_only_in_the_top_quarter_of_its_rung(mode_max):
    asha = _aggressive(mode_max)
    sign = -1 if mode_max else 1
    # rung 0 (1 unit): fewer than 4 entries -> only a new best continues; 4 entries -> top 1 continues
    script = [("a", 0.5, False), ("b", 0.6, True), ("c", 0.4, False), ("d", 0.45, True), ("e", 0.3, False),
              ("f", 0.35, True), ("g", 0.2, False), ("h", 0.9, True)]
    for trial, value, stops in script:
        assert asha.report(trial, 1.0, sign * value) is stops, trial
    # 8 entries now: the top int(8/4) = 2 would continue; rung 1 (4 units) for the survivors
    assert asha.report("a", 2.0, sign * 0.1) is False          # below the next rung: nothing decided
    assert asha.report("a", 4.0, sign * 0.2) is False          # first at rung 1
    assert asha.report("c", 4.0, sign * 0.25) is True          # second of 2 at rung 1: int(2/4) = 1 continues
    assert asha.report("e", 4.0, sign * 0.15) is False         # new best at rung 1
    assert asha.report("a", 16.0, sign * 0.05) is True         # the top rung stops it: done
    assert asha.finished == {"b", "d", "f", "h", "c", "a"}


def test_a_report_past_several_rungs_is_ranked_in_each():
    asha = _aggressive()
    asha.report("a", 1.0, 0.5)
    asha.report("b", 1.0, 0.1)
    assert asha.report("b", 5.0, 0.2) is False                  # passes rung 0 (already in) and rung 1
    assert [t for t, _ in asha.rungs[0][1]] == ["b"]
    assert asha.report("a", 5.0, 0.3) is True                   # rung 1: second of 2, stopped


def test_an_errored_trial_ranks_last_and_a_repeated_report_counts_once():
    asha = _aggressive()
    asha.report("a", 1.0, 0.5)
    assert asha.report("a", 1.0, 0.5) is False                  # a resumed run re-reading its records
    assert len(asha.rungs[0][0]) == 1
    asha.exited("b", error=True)
    assert [t for t, _ in asha.rungs[0][0]] == ["a", "b"]


def test_snapshot_restores_the_same_decisions():
    asha = _aggressive()
    for trial, value in (("a", 0.5), ("b", 0.4), ("c", 0.3)):
        asha.report(trial, 1.0, value)
    copy = _aggressive()
    copy.restore(asha.snapshot())
    assert copy.report("d", 1.0, 0.45) is asha.report("d", 1.0, 0.45) is True


def test_new_trials_fill_brackets_in_order_up_to_their_concurrency_and_totals():
    asha = AdaptiveAsha(make_brackets(16, 16, 4, 5, "standard", 4), 4, 16, True)
    created = []
    while (bracket := asha.next_bracket()) is not None:
        name = f"t{len(created)}"
        asha.add_trial(name, bracket)
        created.append(bracket)
    assert created == [0, 0, 1, 1]                              # concurrency [2, 2]
    asha.report("t0", 1.0, 0.5)
    asha.report("t1", 1.0, 0.9)                                 # stopped: frees a place in bracket 0
    assert asha.next_bracket() == 0


def _simulate(mode: str, seed: int = 0) -> float:
    """Every trial a noisy decreasing curve; all active trials advance one unit per tick. Returns the compute
    used as a fraction of every trial trained to max_time."""
    rng = random.Random(seed)
    max_trials, max_time = 256, 256
    asha = AdaptiveAsha(make_brackets(max_trials, max_time, 4, 5, mode, 16), 4, max_time, True)
    quality, progress, used = {}, {}, 0
    while True:
        while (bracket := asha.next_bracket()) is not None:
            name = f"t{len(quality)}"
            asha.add_trial(name, bracket)
            quality[name], progress[name] = rng.random(), 0
        active = [t for t in quality if t not in asha.finished]
        if not active:
            break
        for trial in active:
            progress[trial] += 1
            used += 1
            asha.report(trial, float(progress[trial]), quality[trial] + 1.0 / progress[trial])
    assert len(quality) == max_trials
    return used / (max_trials * max_time)


@pytest.mark.parametrize("mode", ["aggressive", "standard"])
def test_saves_at_least_60_percent_of_compute_with_divisor_4_and_5_rungs(mode):
    assert _simulate(mode) <= 0.40
