"""playground.api is the one surface user code imports; the module paths the documentation showed before the
subpackages still work (and warn)."""
from __future__ import annotations

import importlib
import json
import signal
import subprocess
import sys

import pytest

from tests.conftest import HANG, REPO, run_cli, tiny_opts

# Every module path the documentation ever told users to import (README.md, docs/, experiments/, earlier versions
# included: `git log -p -- docs README.md experiments`), and where it lives now.
DOCUMENTED_OLD_PATHS = {
    "playground.opt_types": "playground.options.value_types",          # docs/components.md
    "playground.model": "playground.trainer.model",                    # docs/components.md
    "playground.meters": "playground.trainer.meters",                  # docs/components.md
    "playground.lr_schedule": "playground.trainer.lr_schedule",        # docs/components.md
    "playground.run_context": "playground.distribution.run_context",   # docs/components.md
    "playground.rendezvous": "playground.distribution.rendezvous",     # docs/components.md
    "playground.batch_stream": "playground.data.batch_stream",         # docs/candle.md, experiments/candle_digits
    "playground.demo": "playground.commands.demo",                     # docs/resnet.md (python -m)
}
# Moved too, but never shown to users: gone.
UNDOCUMENTED_OLD_PATHS = ["playground.checkpoint", "playground.worker", "playground.sweeps.study",
                          "playground.data.lmdb_dataset", "playground.restarts.child"]


@pytest.fixture(scope="module")
def old_imports() -> dict:
    """Each documented old path imported in one fresh interpreter (in this one it may be imported already, and a
    second import does not warn): whether it gave the moved module, its spec's name, the warnings it raised."""
    code = ("import importlib, json, sys, warnings\n"
            "seen = {}\n"
            "for old, new in json.loads(sys.argv[1]).items():\n"
            "    with warnings.catch_warnings(record=True) as caught:\n"
            "        warnings.simplefilter('always')\n"
            "        exec(f'import {old} as module', scope := {})\n"   # an import statement, as user code writes it
            "    module = scope['module']\n"
            "    seen[old] = [module is importlib.import_module(new), module.__spec__.name,\n"
            "                 [[w.category.__name__, str(w.message), w.filename] for w in caught]]\n"
            "print(json.dumps(seen))")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(DOCUMENTED_OLD_PATHS)], capture_output=True,
                         text=True, cwd=REPO, timeout=HANG)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("old, new", sorted(DOCUMENTED_OLD_PATHS.items()))
def test_a_documented_module_path_from_before_the_subpackages_is_the_moved_module_and_warns(old, new, old_imports):
    assert old_imports[old] == [True, new, [
        ["DeprecationWarning", f"{old} moved to {new}; import it from there (the old path will be removed)",
         "<string>"]]]   # attributed to the line that imported the old path


@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # checked in a fresh interpreter above
def test_a_documented_old_path_is_the_moved_module_in_this_process_too():
    for old, new in DOCUMENTED_OLD_PATHS.items():
        assert importlib.import_module(old) is importlib.import_module(new)
        assert importlib.import_module(new).__spec__.name == new


@pytest.mark.parametrize("old", UNDOCUMENTED_OLD_PATHS)
def test_a_moved_internal_path_no_user_was_shown_is_gone(old):
    with pytest.raises(ModuleNotFoundError, match=old.replace(".", r"\.")):
        importlib.import_module(old)


def test_the_documented_python_m_playground_demo_runs_the_demo_and_warns():
    out = subprocess.run([sys.executable, "-m", "playground.demo", "--help"], capture_output=True, text=True,
                         cwd=REPO, timeout=HANG)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: python -m playground.commands.demo ")
    assert "DeprecationWarning: playground.demo moved to playground.commands.demo; run `python -m " \
           "playground.commands.demo` (the old path will be removed)" in out.stderr


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


TORCH_SETTINGS = '''
import json, os, signal, sys, torch
from playground.api import run
from tests.conftest import tiny_opts

def settings():
    return [torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.benchmark,
            os.environ.get("CUBLAS_WORKSPACE_CONFIG"), os.environ.get("TORCHINDUCTOR_DETERMINISTIC"),
            int(signal.getsignal(signal.SIGXFSZ))]

torch.set_num_threads(2)
torch.backends.cudnn.benchmark = True
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)    # as a fresh shell's process has it
before = settings()
opts = tiny_opts(model_param={"deterministic": True})
opts["distributed"]["num_intra_threads"] = 1
run(opts, run_dir=sys.argv[1])
print(json.dumps({"before": before, "after": settings()}))
'''


def test_an_in_process_run_leaves_torchs_threads_kernels_and_variables_as_it_found_them(tmp_path):
    """A deterministic one-thread run called from a user's process (a notebook that trains something else next)
    gives back the thread count, the deterministic-kernels switch (which makes later non-deterministic ops raise),
    cuDNN's autotuner, the kernel variables it set, and the SIGXFSZ disposition."""
    done = subprocess.run([sys.executable, "-c", TORCH_SETTINGS, str(tmp_path / "run")], cwd=REPO,
                          capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"] == [2, False, True, None, None, int(signal.SIG_DFL)]
    assert seen["after"] == seen["before"]
    assert json.loads((tmp_path / "run" / "opts.json").read_text())["opts"]["model_param"]["deterministic"] is True
