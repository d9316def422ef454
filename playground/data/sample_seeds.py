"""ReseededGenerator: the generators of `augment.sample_rng`, made by reseeding one generator instead of building one.

`np.random.default_rng([seed, data_pass, index])` builds a SeedSequence and a PCG64 per image, about 20-30 us
of Python-level work in numpy: 1-2% of an image's decoding and augmentation. Here the same PCG64 state is
computed directly and set on one reused generator, in about half the time. The state is numpy's own to the
bit (a test compares it with `default_rng` over many seeds); it follows numpy's published algorithms:

- SeedSequence (numpy/random/bit_generator.pyx, after Melissa O'Neill's seed_seq): the entropy words are
  hashed into a pool of four 32-bit words, the pool words mixed pairwise, and the output words hashed from the
  pool; with three entropy words below 2**32 each, the constants of every step are fixed, so they are computed
  once here.
- PCG64's seeding (pcg64.c, pcg_setseq_128_srandom_r): 128-bit state and increment from four 64-bit words.

Values outside [0, 2**32) fall back to `np.random.default_rng` (a number that wide is several entropy words).
"""
from __future__ import annotations

import numpy as np

_M32 = 0xFFFFFFFF
_M128 = (1 << 128) - 1
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341
_POOL = 4
_MIX_PAIRS = [(src, dst) for src in range(_POOL) for dst in range(_POOL) if src != dst]


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


def pcg64_state(words: tuple[int, int, int]) -> tuple[int, int]:
    """(state, increment) of `PCG64(SeedSequence(list(words)))`, each word in [0, 2**32)."""
    pool = [0] * _POOL
    for k, word in enumerate((*words, 0)):
        xor, mult = _POOL_STEPS[k]
        value = ((word ^ xor) * mult) & _M32
        pool[k] = value ^ (value >> 16)
    for k, (src, dst) in enumerate(_MIX_PAIRS, _POOL):
        xor, mult = _POOL_STEPS[k]
        value = ((pool[src] ^ xor) * mult) & _M32
        mixed = (_MIX_L * pool[dst] - _MIX_R * (value ^ (value >> 16))) & _M32
        pool[dst] = mixed ^ (mixed >> 16)
    out = []
    for k, (xor, mult) in enumerate(_OUTPUT_STEPS):
        value = ((pool[k % _POOL] ^ xor) * mult) & _M32
        out.append(value ^ (value >> 16))
    initial = (out[0] | out[1] << 32) << 64 | out[2] | out[3] << 32
    increment = (((out[4] | out[5] << 32) << 64 | out[6] | out[7] << 32) << 1 | 1) & _M128
    return ((increment + initial) * _PCG_MULT + increment) & _M128, increment


class ReseededGenerator:
    """`for_sample(seed, data_pass, index)` gives the generator `sample_rng` gives, as one reused object: it is
    valid until the next call (draw from it, then ask for the next)."""

    def __init__(self) -> None:
        self._bits = np.random.PCG64(0)
        self._generator = np.random.Generator(self._bits)

    def for_sample(self, seed: int, data_pass: int, index: int) -> np.random.Generator:
        if not (0 <= seed <= _M32 and 0 <= data_pass <= _M32 and 0 <= index <= _M32):
            return np.random.default_rng([seed, data_pass, index])
        state, increment = pcg64_state((seed, data_pass, index))
        self._bits.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": increment},
                            "has_uint32": 0, "uinteger": 0}
        return self._generator
