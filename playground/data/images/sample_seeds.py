"""ReseededGenerator: the generators of `augment.sample_rng`, made by reseeding one generator instead of building one.

`np.random.default_rng([seed, data_pass, index])` builds a SeedSequence and a PCG64 per image, about 20-30 us
of Python-level work in numpy: 1-2% of an image's decoding and augmentation. Here the same PCG64 state is
computed directly, for a whole batch at once (numpy over the batch for the 32-bit hashing), and set on one reused
generator. The state is numpy's own to the bit (a test compares it with `default_rng` over many seeds); it
follows numpy's published algorithms:

- SeedSequence (numpy/random/bit_generator.pyx, after Melissa O'Neill's seed_seq): the entropy words are
  hashed into a pool of four 32-bit words, the pool words mixed pairwise, and the output words hashed from the
  pool; with three entropy words below 2**32 each, the constants of every step are fixed, so they are computed
  once here.
- PCG64's seeding (pcg64.c, pcg_setseq_128_srandom_r): 128-bit state and increment from four 64-bit words.

Values outside [0, 2**32) fall back to `np.random.default_rng` (a number that wide is several entropy words).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

_M32 = 0xFFFFFFFF
_M128 = (1 << 128) - 1
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341
_POOL = 4
_MIX_PAIRS = [(src, dst) for src in range(_POOL) for dst in range(_POOL) if src != dst]
_M32_U, _SHIFT, _HALF = np.uint64(_M32), np.uint64(16), np.uint64(32)
_MIX_L_U, _MIX_R_U = np.uint64(_MIX_L), np.uint64(_MIX_R)


def _hash_constants(init: int, mult: int, count: int) -> list[tuple[int, int]]:
    """The (xor, multiplier) pair of each successive hash step: the hash constant and its next value."""
    pairs, value = [], init
    for _ in range(count):
        following = (value * mult) & _M32
        pairs.append((value, following))
        value = following
    return pairs


_POOL_STEPS = _hash_constants(_INIT_A, _MULT_A, _POOL + len(_MIX_PAIRS))
_OUTPUT_STEPS = _hash_constants(_INIT_B, _MULT_B, 8)   # 4 64-bit words = 8 32-bit words


def pcg64_states(words: np.ndarray) -> list[tuple[int, int]]:
    """(state, increment) of `PCG64(SeedSequence(list(row)))` for each row of `words` (n x 3, each value in
    [0, 2**32)), computed for every row at once: the 32-bit hashing in numpy, the 128-bit seeding per row."""
    columns = [np.asarray(words[:, k], dtype=np.uint64) for k in range(3)] + [np.zeros(len(words), np.uint64)]
    pool: list[np.ndarray] = []
    for column, (xor, mult) in zip(columns, _POOL_STEPS):
        value = ((column ^ np.uint64(xor)) * np.uint64(mult)) & _M32_U
        pool.append(value ^ (value >> _SHIFT))
    for (src, dst), (xor, mult) in zip(_MIX_PAIRS, _POOL_STEPS[_POOL:]):
        value = ((pool[src] ^ np.uint64(xor)) * np.uint64(mult)) & _M32_U
        # products of two 32-bit numbers fit in 64 bits; the difference wraps mod 2**64, so mod 2**32 is right
        mixed = (_MIX_L_U * pool[dst] - _MIX_R_U * (value ^ (value >> _SHIFT))) & _M32_U
        pool[dst] = mixed ^ (mixed >> _SHIFT)
    out = []
    for k, (xor, mult) in enumerate(_OUTPUT_STEPS):
        value = ((pool[k % _POOL] ^ np.uint64(xor)) * np.uint64(mult)) & _M32_U
        out.append(value ^ (value >> _SHIFT))
    high, low = (out[0] | out[1] << _HALF).tolist(), (out[2] | out[3] << _HALF).tolist()
    inc_high, inc_low = (out[4] | out[5] << _HALF).tolist(), (out[6] | out[7] << _HALF).tolist()
    states = []
    for h, l, ih, il in zip(high, low, inc_high, inc_low):
        increment = ((ih << 64 | il) << 1 | 1) & _M128
        states.append((((increment + (h << 64 | l)) * _PCG_MULT + increment) & _M128, increment))
    return states


class ReseededGenerator:
    """`for_sample(seed, data_pass, index)` gives the generator `sample_rng` gives, as one reused object: it is
    valid until the next call (draw from it, then ask for the next). `prepare` computes a batch's states at once."""

    def __init__(self) -> None:
        self._bits = np.random.PCG64(0)
        self._generator = np.random.Generator(self._bits)
        self._prepared: dict[tuple[int, int, int], tuple[int, int]] = {}

    def prepare(self, seed: int, keys: Sequence[tuple[int, int]]) -> None:
        """Compute the states of the samples `keys` ((data pass, index) pairs) of `seed` together; for_sample then
        finds them (the states of the previous batch are dropped)."""
        triples = [(seed, data_pass, index) for data_pass, index in keys]
        fitting = [t for t in triples if _fits(t)]
        self._prepared = dict(zip(fitting, pcg64_states(np.array(fitting, dtype=np.uint64).reshape(-1, 3))))

    def for_sample(self, seed: int, data_pass: int, index: int) -> np.random.Generator:
        triple = (seed, data_pass, index)
        found = self._prepared.get(triple)
        if found is None:
            if not _fits(triple):
                return np.random.default_rng([seed, data_pass, index])
            found = pcg64_states(np.array([triple], dtype=np.uint64))[0]
        state, increment = found
        self._bits.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": increment},
                            "has_uint32": 0, "uinteger": 0}
        return self._generator


def _fits(triple: tuple[int, int, int]) -> bool:
    return all(0 <= word <= _M32 for word in triple)
