"""playground.api is the one surface user code imports; the module paths of before the subpackages still work."""
from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from tests.conftest import HANG, REPO, run_cli, tiny_opts

OLD_PATHS = {"playground.meters": "playground.trainer.meters", "playground.model": "playground.trainer.model",
             "playground.lr_schedule": "playground.trainer.lr_schedule",
             "playground.opt_types": "playground.options.value_types",
             "playground.rendezvous": "playground.distribution.rendezvous",
             "playground.checkpoint": "playground.checkpoints.checkpointer",
             "playground.sweeps.spec": "playground.sweeps.inputs.spec",
             "playground.sweeps.reports": "playground.sweeps.operations.reports"}


@pytest.mark.parametrize("old, new", sorted(OLD_PATHS.items()))
def test_a_module_path_from_before_the_subpackages_is_the_moved_module(old, new):
    assert importlib.import_module(old) is importlib.import_module(new)
    assert importlib.import_module(new).__spec__.name == new


@pytest.mark.parametrize("old, new", [("playground.meters", "playground.trainer.meters"),
                                      ("playground.sweeps.study", "playground.sweeps.search.study")])
def test_importing_an_old_path_warns_naming_the_new_one_and_gives_the_same_module(old, new):
    # a fresh interpreter: in this one the old path may be imported already, and a second import finds no module
    code = ("import importlib, warnings\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            f"    same = importlib.import_module({old!r}) is importlib.import_module({new!r})\n"
            "print(same, [(w.category.__name__, str(w.message)) for w in caught])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=HANG)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(True) + " " + str(
        [("DeprecationWarning", f"{old} moved to {new}; import it from there (the old path will be removed)")])


def test_every_public_name_resolves():
    api = importlib.import_module("playground.api")
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    with pytest.raises(AttributeError, match="offers"):
        getattr(api, "NoSuchThing")


def test_importing_the_public_surface_is_cheap():
    code = "import sys, playground.api; print([m for m in ('torch', 'numpy', 'cv2') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=HANG)
    assert out.stdout.strip() == "[]", out.stderr


USER_METER = '''
"""A user's meter and forward pass written against the old module paths (docs/components.md before 0.2)."""
from torch import nn
from playground.meters import Meter, batch_size_of
from playground.model import input_shape
from playground.opt_types import Int

additional_definitions = [{"name": "model_param.old_hidden", "type": Int(1), "default": 8}]


class OldStyleCount(Meter):
    def Add(self, blobs):
        self.total = self.total + batch_size_of(blobs["label"])
        self.count = self.count + 1


def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    features = 1
    for size in input_shape(dataset, self.opts):
        features *= size
    hidden = self.opts["model_param"]["old_hidden"]
    net = nn.Sequential(nn.Flatten(), nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, 10))
    return net, nn.CrossEntropyLoss()
'''


def test_user_components_written_against_the_old_paths_still_run(tmp_path, opts_file):
    (tmp_path / "old_style.py").write_text(USER_METER)
    opts = tiny_opts(model={"forward_pass_py": "old_style"})
    opts["output"]["metrics"] = [{"name": "batch_count", "meter_py": "old_style.OldStyleCount", "is_train": True}]
    opts["output"]["plots"] = []
    proc = run_cli("--parameters-file", opts_file(opts), "--run-dir", str(tmp_path / "run"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    counts = json.loads((tmp_path / "run" / "results.json").read_text())["metrics"]["batch_count"]
    assert 16.0 in counts and set(counts) <= {16.0, None}    # the meter's mean batch size, from the old paths


def test_an_in_process_run_leaves_the_callers_stop_signal_handlers_as_they_were(tmp_path):
    """A finished run ignores a late SIGTERM while it cleans up; the caller (a notebook, a test, a sweep of
    in-process runs) gets its own handlers back, or the workers it starts later inherit SIGTERM ignored and a
    multiprocessing Pool's terminate() waits on them forever."""
    import signal

    from playground.api import run
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    run(tiny_opts(), run_dir=str(tmp_path / "run"))
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
