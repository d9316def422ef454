"""`python -m playground.checkpoints.loadable FILE` (loadable.py): a checkpoint that loads as its run loads it exits 0;
one whose pickle weights_only refuses, or that is no playground checkpoint, is one line naming why, exit 1."""
from __future__ import annotations

import fractions
import subprocess
import sys

import torch

from playground.checkpoints.files import FORMAT, save_state


def _check(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "playground.checkpoints.loadable", str(path)], capture_output=True,
                          text=True, timeout=300)


def test_a_checkpoint_loads_and_a_refused_pickle_or_a_foreign_file_is_one_line(tmp_path):
    state = {"format": FORMAT, "weights": torch.ones(2)}
    save_state(str(tmp_path / "good.pt"), state)
    save_state(str(tmp_path / "refused.pt"), {**state, "note": fractions.Fraction(1, 3)})
    torch.save({"weights": torch.ones(2)}, str(tmp_path / "foreign.pt"))
    good, refused, foreign = (_check(tmp_path / name) for name in ("good.pt", "refused.pt", "foreign.pt"))
    assert (good.returncode, good.stderr) == (0, "")
    assert refused.returncode == 1 and refused.stderr == (
        "its pickle is refused by torch.load(weights_only=True) (Unsupported global: GLOBAL fractions.Fraction)\n")
    assert foreign.returncode == 1 and foreign.stderr.count("\n") == 1 and "not a playground checkpoint" in foreign.stderr
