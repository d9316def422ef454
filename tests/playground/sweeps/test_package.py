"""The sweep layer's boundary: importing it never imports the trainer (nor torch, optuna, matplotlib)."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_importing_the_sweep_package_does_not_import_the_trainer():
    code = ("import importlib, pkgutil, sys, playground.sweeps as p\n"
            "for m in pkgutil.walk_packages(p.__path__, 'playground.sweeps.'): importlib.import_module(m.name)\n"
            "import playground.commands.sweep\n"
            "bad = [m for m in ('playground.trainer.anyexp', 'playground.launch.worker', 'playground.launch.spawn', 'torch', 'optuna',"
            " 'matplotlib') if m in sys.modules]\n"
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr

