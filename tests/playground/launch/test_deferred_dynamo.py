"""launch/deferred_dynamo.py: a run that does not compile never imports torch._dynamo, and trains exactly as one
that did; anything beyond the stand-in's few no-op calls gets the real module. Real runs in real processes."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, checkpoint_opts)


@pytest.mark.parametrize("optimizer", ["sgd_optimizer", "adamw_optimizer"])
def test_a_run_that_does_not_compile_never_imports_torch_dynamo_and_trains_as_one_that_did(tmp_path, optimizer):
    opts = checkpoint_opts(num_epochs=2)
    opts["model"]["optimizer_py"] = optimizer
    deferred = RunFolder(tmp_path, "deferred", opts, env=UNHINDERED)
    imported = RunFolder(tmp_path, "imported", opts, env=UNHINDERED)
    argv = ["--parameters-file", str(deferred.opts_path), "--run-dir", str(deferred.dir)]
    done = subprocess.run([sys.executable, "-X", "importtime", str(REPO / "AnyExpOnTerm.py"), *argv],
                          env=deferred.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    modules = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "torch.optim" in modules and "torch._dynamo" not in modules, [m for m in modules if "dynamo" in m]
    assert not [m for m in modules if m.startswith("torch._inductor")]   # deterministic kernels without it
    eager = ("import runpy, sys, torch._dynamo; sys.argv = sys.argv[1:]; "
             "runpy.run_path(sys.argv[0], run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", eager, str(REPO / "AnyExpOnTerm.py"), "--parameters-file",
                           str(imported.opts_path), "--run-dir", str(imported.dir)],
                          env=imported.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert_same_training_state(deferred.checkpoint(), imported.checkpoint())
    assert_same_records(deferred, imported)


STAND_IN = """
import sys, torch
from playground.launch import deferred_dynamo
assert not deferred_dynamo.install()                     # not playground's own process: nothing stands in
deferred_dynamo.permit()
assert deferred_dynamo.install()
net = torch.nn.Linear(3, 2)
for optimizer in (torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9), torch.optim.AdamW(net.parameters())):
    net(torch.ones(4, 3)).sum().backward()
    optimizer.step()
    optimizer.load_state_dict(optimizer.state_dict())
    optimizer.zero_grad()
print("standing in", deferred_dynamo.standing_in(), "torch._dynamo.convert_frame" in sys.modules)
mode = torch._dynamo.config.optimize_ddp                  # any other use: the real module, in its place
print("real", not deferred_dynamo.standing_in(), sys.modules["torch._dynamo"] is torch._dynamo,
      hasattr(torch._dynamo, "optimize"), mode == torch._dynamo.config.optimize_ddp)
print("again", deferred_dynamo.install())                # imported already: nothing stands in any more
"""


def test_the_stand_in_answers_an_optimizers_calls_and_becomes_the_real_module_on_any_other_use():
    done = subprocess.run([sys.executable, "-c", STAND_IN], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["standing in True False", "real True True True True", "again False"]


WALKED = """
import inspect, sys, torch
from playground.launch import deferred_dynamo
deferred_dynamo.permit()
assert deferred_dynamo.install()
inspect.getmodule(inspect.currentframe())                # walks sys.modules asking each for __file__
import torch.distributed.tensor                          # whose import did that and once met a half-imported module
print(deferred_dynamo.standing_in())
import torch._dynamo.utils                               # a submodule: the real package, then its module
print(deferred_dynamo.standing_in(), torch._dynamo.utils.get_optimize_ddp_mode())
"""


def test_walking_sys_modules_leaves_the_stand_in_and_importing_a_submodule_gets_the_real_package():
    done = subprocess.run([sys.executable, "-c", WALKED], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True", "False", "ddp_optimizer"], done.stdout


def test_two_spawned_ranks_that_do_not_compile_never_import_torch_dynamo(tmp_path):
    # The fork server leaves the compiler out of its preload and the ranks stand in (DistributedDataParallel asks
    # the stand-in its optimize_ddp mode); with -X importtime the server's and the ranks' imports share stderr.
    # That such ranks train as one rank of twice the batch: tests/playground/launch/test_spawn.py.
    run = RunFolder(tmp_path, "two", checkpoint_opts(ranks=2, num_epochs=1), env=UNHINDERED)
    done = subprocess.run([sys.executable, "-X", "importtime", str(REPO / "AnyExpOnTerm.py"), "--parameters-file",
                           str(run.opts_path), "--run-dir", str(run.dir)], env=run.env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    modules = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "torch.nn.parallel.distributed" in modules and "torch._dynamo" not in modules, \
        [m for m in modules if "dynamo" in m]
    assert not [m for m in modules if m.startswith("torch._inductor")]
    assert run.checkpoint()["model"]


DETERMINISTIC = """
import sys, torch
from playground.launch.worker import _deterministic_kernels
_deterministic_kernels()
print(torch.are_deterministic_algorithms_enabled(), "torch._inductor.config" in sys.modules)
import torch._inductor.config                            # a run that compiles later: its kernels are chosen so too
print(torch._inductor.config.deterministic)
_deterministic_kernels()                                 # and once the inductor is there, through torch's own call
print(torch.are_deterministic_algorithms_enabled(), torch._inductor.config.deterministic)
"""


def test_deterministic_kernels_are_asked_for_without_importing_the_inductor_which_gets_the_flag_when_imported():
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_DETERMINISTIC"}
    done = subprocess.run([sys.executable, "-c", DETERMINISTIC], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True", "False", "True", "True", "True"], done.stdout
