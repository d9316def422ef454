"""Entrypoints become the command the runner starts on every slot."""
from __future__ import annotations

import sys

import pytest

from playground.determined.entrypoint import EntrypointError, TRIAL_MAIN, entrypoint_command

PY = sys.executable


@pytest.mark.parametrize("entrypoint, command", [
    ("model_def:MNistTrial", [PY, "-m", TRIAL_MAIN, "model_def:MNistTrial"]),
    ("pkg.model_def:GANTrial", [PY, "-m", TRIAL_MAIN, "pkg.model_def:GANTrial"]),
    ("python3 train.py --epochs 1", [PY, "train.py", "--epochs", "1"]),
    ("python train.py --name 'a b'", [PY, "train.py", "--name", "a b"]),
    (["python3.11", "model_def.py"], [PY, "model_def.py"]),
    ("bash run.sh", ["bash", "run.sh"]),
    ("python3 -m determined.launch.torch_distributed python3 train.py --epochs 1", [PY, "train.py", "--epochs", "1"]),
    ("python3 -m determined.launch.torch_distributed --trial model_def:MNistTrial",
     [PY, "-m", TRIAL_MAIN, "model_def:MNistTrial"]),
    ("python3 -m determined.launch.torch_distributed --max_restarts 1 -- python3 train.py",
     [PY, "train.py"]),
    ("python3 -m determined.launch.horovod --autohorovod --trial model_def:T", [PY, "-m", TRIAL_MAIN, "model_def:T"]),
])
def test_entrypoints_become_commands(entrypoint, command):
    assert entrypoint_command(entrypoint) == command


@pytest.mark.parametrize("entrypoint, message", [
    ("", "the command is empty"),
    (3, "required: `module:TrialClass` or a command"),
    ("python3 -m determined.launch.torch_distributed --trial model_def:T extra", "takes one `module:TrialClass`"),
    ("python3 -m determined.launch.horovod train.py", "runs scripts on horovod"),
    ("python3 -m determined.launch.torch_distributed", "needs a script to launch"),
    ("python3 'unclosed", "cannot be split into words"),
])
def test_unusable_entrypoints_say_why(entrypoint, message):
    with pytest.raises(EntrypointError, match=message):
        entrypoint_command(entrypoint)
