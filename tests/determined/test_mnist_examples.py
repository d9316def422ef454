"""experiments/determined_mnist/: Determined's tutorials with only data.py changed; their YAMLs load, their data
is MNIST-shaped digits, their searches have Determined's exact trial counts, and (once det-core's runner and
det-trial's harness are merged) they run with `playground run const.yaml --test`."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from playground.cli import main
from tests.conftest import REPO, run_cli

EXAMPLES = REPO / "experiments" / "determined_mnist"


def load_data_module(folder: str):
    spec = importlib.util.spec_from_file_location(f"data_{folder.replace('.', '_')}", EXAMPLES / folder / "data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("folder, low", [("mnist_pytorch_0.26", -0.1307 / 0.3081), ("mnist_pytorch_0.38", -0.1307 / 0.3081),
                                         ("gan_mnist_pytorch", -1.0)])
def test_data_py_gives_the_digits_as_mnist_images(folder, low):
    data = load_data_module(folder)
    train, test = data.get_dataset(EXAMPLES, train=True), data.get_dataset(EXAMPLES, train=False)
    assert (len(train), len(test)) == (1438, 359)
    image, label = train[0]
    assert tuple(image.shape) == (1, 28, 28) and 0 <= int(label) <= 9
    assert float(image.min()) == pytest.approx(low)                # the padding is black, normalised as MNIST
    if hasattr(data, "download_dataset"):
        assert data.download_dataset("/nowhere", {"url": "https://example.com/x.tgz"}) == "/nowhere"


def test_the_searches_have_determineds_trial_counts(capsys):
    assert main(["sweep", "preview", str(EXAMPLES / "mnist_pytorch_0.26" / "adaptive.yaml")]) == 0
    old = capsys.readouterr().out
    assert main(["sweep", "preview", str(EXAMPLES / "mnist_pytorch_0.38" / "adaptive.yaml")]) == 0
    new = capsys.readouterr().out
    for out in (old, new):
        assert "16 trials, mode standard, divisor 4, max_time 937 iteration; 2 brackets:" in out
        assert "bracket 0: 3 rungs at [58, 234, 937] iteration, 12 trials" in out
        assert "bracket 1: 2 rungs at [234, 937] iteration, 4 trials" in out
    assert main(["sweep", "preview", str(EXAMPLES / "mnist_pytorch_0.38" / "dist_random.yaml")]) == 0
    assert "searcher random\n2 trials over:" in capsys.readouterr().out


def test_const_yamls_dry_run_to_the_trial_harness_and_the_script(capsys):
    assert main(["run", str(EXAMPLES / "mnist_pytorch_0.26" / "const.yaml"), "--dry-run", "--run-dir", "r"]) == 0
    assert f"command: {sys.executable} -m playground.determined.trial_main model_def:MNistTrial" in capsys.readouterr().out
    assert main(["run", str(EXAMPLES / "gan_mnist_pytorch" / "distributed.yaml"), "--dry-run", "--run-dir", "r"]) == 0
    out = capsys.readouterr().out
    assert "slots (ranks): 8" in out and "global_batch_size 256: 32 per slot on 8 slot(s)" in out
    assert main(["run", str(EXAMPLES / "mnist_pytorch_0.38" / "distributed.yaml"), "--dry-run", "--run-dir", "r"]) == 0
    assert f"command: {sys.executable} train.py --epochs 1" in capsys.readouterr().out


def test_the_0_26_trial_runs_with_test(tmp_path):
    for module in ("playground.determined.command_run", "playground.determined.trial_main"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} (det-core's runner, det-trial's harness) is not in this branch yet")
    done = run_cli("run", str(EXAMPLES / "mnist_pytorch_0.26" / "const.yaml"), "--test", "--run-dir",
                   str(tmp_path / "run"), script="playground")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "run" / "metrics.jsonl").read_text().count('"validation_loss"') >= 1
