"""The digits as arrays (components/inputs/digits_arrays.py): scikit-learn's values, read without importing it."""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from components.inputs.digits_arrays import load_digits_split
from tests.conftest import HANG, REPO


def test_the_split_holds_the_values_of_load_digits_in_a_fixed_permutation():
    from sklearn.datasets import load_digits
    digits = load_digits()
    x, y = (digits.data / 16.0).astype(np.float32), digits.target.astype(np.int64)
    order, held_out = np.random.RandomState(3).permutation(len(y)), 539     # 30 % of 1797
    expected = x[order[held_out:]], y[order[held_out:]], x[order[:held_out]], y[order[:held_out]]
    for got, want in zip(load_digits_split(0.3, split_seed=3), expected):
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_a_process_reading_the_digits_does_not_import_scikit_learn():
    """Its import costs about 1.7 s in every process that trains on the digits."""
    probe = ("import sys\nfrom components.inputs.digits_arrays import load_digits_split\n"
             "assert len(load_digits_split()[0]) == 1438\nprint(sorted(m for m in sys.modules if m.startswith('sklearn')))")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
