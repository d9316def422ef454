"""The reseeded generator gives sample_rng's generators to the bit (playground/data/images/sample_seeds.py)."""
from __future__ import annotations

import numpy as np

from playground.data.images.augment import sample_rng
from playground.data.images.sample_seeds import ReseededGenerator


def test_reseeded_generators_have_sample_rngs_state_and_draws_for_small_and_32_bit_seeds():
    random, triples = ReseededGenerator(), np.random.default_rng(3)
    cases = [(0, 0, 0), (7, 0, 12345), (0, 3, 1), (2 ** 32 - 1, 2 ** 32 - 1, 2 ** 32 - 1)]
    cases += [tuple(int(v) for v in triples.integers(0, 2 ** 32, 3)) for _ in range(300)]
    cases += [(int(s), int(p), int(i)) for s, p, i in triples.integers(0, 1000, (300, 3))]
    for seed, data_pass, index in cases:
        expected = sample_rng(seed, data_pass, index)
        got = random.for_sample(seed, data_pass, index)
        assert got.bit_generator.state == expected.bit_generator.state, (seed, data_pass, index)
        assert got.integers(0, 500, 3).tolist() == expected.integers(0, 500, 3).tolist()
        assert got.random() == expected.random() and got.uniform(0.08, 1.0) == expected.uniform(0.08, 1.0)


def test_seeds_of_more_than_32_bits_fall_back_to_numpys_seeding():
    for seed, data_pass, index in ((2 ** 32, 0, 1), (5, 2 ** 40, 3), (1, 2, 2 ** 63)):
        got = ReseededGenerator().for_sample(seed, data_pass, index)
        assert got.bit_generator.state == sample_rng(seed, data_pass, index).bit_generator.state


def test_a_batch_prepared_at_once_gives_every_sample_the_generator_sample_rng_gives():
    random, picks = ReseededGenerator(), np.random.default_rng(5)
    keys = [(int(p), int(i)) for p, i in picks.integers(0, 2 ** 32, (200, 2))] + [(3, 7), (0, 0), (2 ** 40, 1)]
    for seed in (0, 123, 2 ** 32 - 1, 2 ** 33):
        random.prepare(seed, keys)
        for data_pass, index in keys:
            got = random.for_sample(seed, data_pass, index)
            assert got.bit_generator.state == sample_rng(seed, data_pass, index).bit_generator.state
